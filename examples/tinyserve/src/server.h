// The serving loop: a workload of requests, a scheduler that forms static batches (TS_BATCH
// requests prefilled together, then decoded together until the last one finishes), an optional
// prompt-prefix cache, and per-request latency. One RunPass serves every request once.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "engine.h"
#include "knobs.h"
#include "sampler.h"

namespace tinyserve {

struct Request {
  int id = 0;
  std::vector<int> prompt;
  int max_new = 0;
  SamplingParams sampling;
  uint64_t seed = 0;
};

// `count` requests; most share one of a few system-prompt prefixes. Deterministic in `seed`.
std::vector<Request> MakeWorkload(int count, uint64_t seed, int vocab);
// Prompt plus output tokens of all requests.
long WorkloadTokens(const std::vector<Request>& requests);

struct RequestResult {
  std::vector<int> tokens;
  std::vector<SampleInfo> steps;
  double latency_s = 0;
};

struct PassOptions {
  // Teacher forcing (--check): after sampling step s of request id, feed forced[id][s] instead.
  const std::map<int, std::vector<int>>* forced = nullptr;
  bool with_lse = false;
};

class Server {
 public:
  Server(Engine* engine, const Model& model, const Knobs& knobs);
  ~Server();
  // Results are indexed like `requests`.
  std::vector<RequestResult> RunPass(const std::vector<Request>& requests, const PassOptions& opt);

 private:
  struct PrefixEntry;
  std::unique_ptr<Sequence> Acquire();
  void Release(std::unique_ptr<Sequence> s);
  int ReusePrefix(const Request& r, Sequence* s);
  void StorePrefix(const Request& r, const Sequence& s);

  Engine* engine_;
  const Model& model_;
  const Knobs& knobs_;
  std::vector<std::unique_ptr<Sequence>> pool_;
  std::map<uint64_t, std::shared_ptr<PrefixEntry>> prefixes_;
};

}  // namespace tinyserve

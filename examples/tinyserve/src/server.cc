#include "server.h"

#include <algorithm>
#include <ctime>
#include <numeric>

#include "profiler.h"
#include "rng.h"

namespace tinyserve {
namespace {

constexpr int kPrefixBlock = 16;
constexpr int kSystemPrompts = 4;
constexpr int kSystemPromptLength[kSystemPrompts] = {16, 32, 32, 48};

// Latency is measured on the serving thread's CPU clock, like throughput (main.cc).
double Now() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

uint64_t HashTokens(uint64_t h, const int* tokens, int n) {
  for (int i = 0; i < n; ++i) {
    h ^= static_cast<uint64_t>(tokens[i]) + 0x9E3779B97F4A7C15ULL;
    h *= 0x100000001B3ULL;
  }
  return h;
}

constexpr uint64_t kHashSeed = 0xCBF29CE484222325ULL;

}  // namespace

std::vector<Request> MakeWorkload(int count, uint64_t seed, int vocab) {
  Rng rng(seed);
  std::vector<std::vector<int>> system(kSystemPrompts);
  for (int s = 0; s < kSystemPrompts; ++s) {
    for (int i = 0; i < kSystemPromptLength[s]; ++i) system[s].push_back(rng.Range(0, vocab - 1));
  }
  std::vector<Request> out;
  for (int id = 0; id < count; ++id) {
    Request r;
    r.id = id;
    // Three requests in four start with a shared system prompt.
    if (rng.Range(0, 3) != 0) r.prompt = system[rng.Range(0, kSystemPrompts - 1)];
    const int user = rng.Range(4, 32);
    for (int i = 0; i < user; ++i) r.prompt.push_back(rng.Range(0, vocab - 1));
    r.max_new = rng.Range(8, 40);
    if (rng.Range(0, 1) == 1) {
      r.sampling.top_k = 40;
      r.sampling.temperature = 1.5f;
    }
    r.seed = rng.Next();
    out.push_back(std::move(r));
  }
  return out;
}

long WorkloadTokens(const std::vector<Request>& requests) {
  long n = 0;
  for (const Request& r : requests) n += static_cast<long>(r.prompt.size()) + r.max_new;
  return n;
}

struct Server::PrefixEntry {
  int len = 0;
  std::vector<float> kv;  // Engine::Export snapshot of `len` positions
};

Server::Server(Engine* engine, const Model& model, const Knobs& knobs)
    : engine_(engine), model_(model), knobs_(knobs) {}

Server::~Server() = default;

std::unique_ptr<Sequence> Server::Acquire() {
  if (knobs_.kv_pool && !pool_.empty()) {
    std::unique_ptr<Sequence> s = std::move(pool_.back());
    pool_.pop_back();
    s->len = 0;  // stale keys and values are overwritten before they are read
    return s;
  }
  auto s = std::make_unique<Sequence>();
  s->kv = Buffer<float>(engine_->KvFloats());
  return s;
}

void Server::Release(std::unique_ptr<Sequence> s) {
  if (knobs_.kv_pool) pool_.push_back(std::move(s));
}

// Longest cached block-aligned prefix, leaving at least the last prompt token to compute.
int Server::ReusePrefix(const Request& r, Sequence* s) {
  if (!knobs_.prefix_cache) return 0;
  const int limit = static_cast<int>(r.prompt.size()) - 1;
  uint64_t h = kHashSeed;
  std::shared_ptr<PrefixEntry> best;
  int best_len = 0;
  for (int len = kPrefixBlock; len <= limit; len += kPrefixBlock) {
    h = HashTokens(h, r.prompt.data() + len - kPrefixBlock, kPrefixBlock);
    auto it = prefixes_.find(h);
    if (it == prefixes_.end()) break;
    best = it->second;
    best_len = len;
  }
  if (best) engine_->Import(best->kv.data(), best->len, best_len, s);
  return best_len;
}

void Server::StorePrefix(const Request& r, const Sequence& s) {
  if (!knobs_.prefix_cache) return;
  const int limit = static_cast<int>(r.prompt.size()) - 1;
  const int len = limit / kPrefixBlock * kPrefixBlock;
  if (len == 0) return;
  std::vector<uint64_t> fresh;
  uint64_t h = kHashSeed;
  for (int l = kPrefixBlock; l <= len; l += kPrefixBlock) {
    h = HashTokens(h, r.prompt.data() + l - kPrefixBlock, kPrefixBlock);
    if (prefixes_.count(h) == 0) fresh.push_back(h);
  }
  if (fresh.empty()) return;
  auto e = std::make_shared<PrefixEntry>();
  e->len = len;
  e->kv.resize(engine_->SnapshotFloats(len));
  engine_->Export(s, len, e->kv.data());
  for (uint64_t f : fresh) prefixes_[f] = e;
}

std::vector<RequestResult> Server::RunPass(const std::vector<Request>& requests,
                                           const PassOptions& opt) {
  const int vocab = model_.cfg.vocab;
  std::vector<RequestResult> results(requests.size());
  std::vector<int> order(requests.size());
  std::iota(order.begin(), order.end(), 0);
  {
    ScopedTimer timer(Component::kScheduling);
    prefixes_.clear();
    if (knobs_.sched == SchedPolicy::kShortestFirst) {
      std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
        return requests[a].prompt.size() + requests[a].max_new <
               requests[b].prompt.size() + requests[b].max_new;
      });
    }
  }
  struct Active {
    int index;
    std::unique_ptr<Sequence> seq;
    Rng rng{0};
    int last = 0;
    double start = 0;
  };
  for (size_t b0 = 0; b0 < order.size(); b0 += knobs_.batch) {
    const size_t b1 = std::min(order.size(), b0 + knobs_.batch);
    const double start = Now();
    std::vector<Active> batch;
    std::vector<Row> rows;
    std::vector<int> last_row;
    {
      ScopedTimer timer(Component::kScheduling);
      for (size_t i = b0; i < b1; ++i) {
        const Request& r = requests[order[i]];
        Active a{order[i], Acquire(), Rng(r.seed), 0, start};
        const int reused = ReusePrefix(r, a.seq.get());
        const int n = static_cast<int>(r.prompt.size());
        for (int p = reused; p < n; ++p)
          rows.push_back(Row{a.seq.get(), p, r.prompt[p], p == n - 1});
        last_row.push_back(static_cast<int>(rows.size()) - 1);
        batch.push_back(std::move(a));
      }
    }
    engine_->Forward(rows);
    {
      ScopedTimer timer(Component::kScheduling);
      for (const Active& a : batch) StorePrefix(requests[a.index], *a.seq);
    }
    // Sample each request's first token from its last prompt row, then decode together.
    auto take = [&](Active& a, const float* logits) {
      const Request& r = requests[a.index];
      RequestResult& res = results[a.index];
      SamplingParams params = r.sampling;
      if (knobs_.force_greedy) params.top_k = 1;
      SampleInfo info = Sample(logits, vocab, params, &a.rng, knobs_, opt.with_lse);
      const int step = static_cast<int>(res.tokens.size());
      int next = info.token;
      if (opt.forced != nullptr) {
        auto it = opt.forced->find(r.id);
        if (it != opt.forced->end() && step < static_cast<int>(it->second.size())) {
          next = it->second[step];
        }
      }
      res.tokens.push_back(info.token);
      res.steps.push_back(info);
      a.last = next;
    };
    for (size_t i = 0; i < batch.size(); ++i) take(batch[i], engine_->Logits(last_row[i]));
    while (true) {
      std::vector<Active*> live;
      {
        ScopedTimer timer(Component::kScheduling);
        rows.clear();
        for (Active& a : batch) {
          if (a.seq == nullptr) continue;
          if (static_cast<int>(results[a.index].tokens.size()) >= requests[a.index].max_new) {
            results[a.index].latency_s = Now() - a.start;
            Release(std::move(a.seq));
            a.seq = nullptr;
            continue;
          }
          rows.push_back(Row{a.seq.get(), a.seq->len, a.last, true});
          live.push_back(&a);
        }
      }
      if (live.empty()) break;
      engine_->Forward(rows);
      for (size_t i = 0; i < live.size(); ++i) take(*live[i], engine_->Logits(static_cast<int>(i)));
    }
  }
  return results;
}

}  // namespace tinyserve

// The stored fp32 reference (reference.txt): for each checked request, the tokens the
// untuned baseline build generated and, per step, the chosen token's logit and the
// log-sum-exp of all logits. --check replays these tokens (teacher forcing) and compares.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "sampler.h"

namespace tinyserve {

struct Reference {
  long parameters = 0;
  std::map<int, std::vector<SampleInfo>> steps;  // by request id
  std::map<int, std::vector<int>> Tokens() const;
};

std::optional<Reference> ReadReference(const std::string& path, std::string* error);
bool WriteReference(const std::string& path, const Reference& ref, std::string* error);

}  // namespace tinyserve

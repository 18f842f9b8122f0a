// Candidates: the campaign file's actions expanded (one per value) and filtered by the path.
//
// A candidate is applicable at a node when: it is not already applied on the path (one value
// per action per path), it was not already tried from that node or an ancestor (failures
// propagate to the subtree), every `requires` action is applied on the path, and no
// `conflicts` action is (conflicts are symmetric).
#pragma once

#include <string>
#include <vector>

#include "core/spec.h"
#include "core/tree.h"

namespace arbor {

struct Candidate {
  const ActionSpec* action = nullptr;
  std::string value;  // "" unless the action has values
  std::string key;    // CandidateKey(action->id, value)
};

// Why a candidate is not applicable, or "" when it is.
struct Exclusion {
  Candidate candidate;
  std::string reason;  // "requires compiler.O3", "conflicts with kernel.naive", "already tried"
};

class Catalog {
 public:
  explicit Catalog(const std::vector<ActionSpec>& actions);
  const std::vector<Candidate>& All() const { return all_; }
  const ActionSpec* FindAction(const std::string& id) const;
  // Splits All() into applicable candidates at `node` and excluded ones with reasons.
  void Classify(const Tree& tree, NodeId node, std::vector<Candidate>* applicable,
                std::vector<Exclusion>* excluded) const;

 private:
  std::vector<Candidate> all_;
  const std::vector<ActionSpec>* actions_;
};

// Substitutes "{value}" in every string of the action's apply spec.
ApplySpec SubstituteValue(const ApplySpec& apply, const std::string& value);

}  // namespace arbor

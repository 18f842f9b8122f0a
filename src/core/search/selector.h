// Selector: what to try next, given the campaign's state. It scores every candidate applicable
// at the incumbent, together with the ideas re-queued there, with h(a) (scoring.h), and chooses
// the batch to dispatch from them.
//
// Pure: it reads the state it is handed and returns values. It touches no store, port or
// Orchestrator field, so the same inputs give the same candidates, scores and order; the caller
// gathers what needs the world (the incumbent's profile comes from the store) and records what
// is chosen. The one exception is Catalog::Classify's path cache, which only makes asking again
// cheaper: it is why a Selector, like the Catalog, is not thread-safe.
//
// A Selector borrows everything it reads: construct one where a choice is made, do not keep it
// (a campaign's tree, statistics and catalog move on after every node).
#pragma once

#include <optional>
#include <vector>

#include "core/knowledge/kb.h"
#include "core/model/model.h"
#include "core/model/spec.h"
#include "core/search/candidates.h"
#include "core/search/category_stats.h"
#include "core/tree/tree.h"

namespace arbor {

// A scored candidate, as selection saw it when choosing.
struct ScoredCandidate {
  Candidate candidate;
  ScoreTerms terms;
  NodeId pending = kNoNode;  // a re-queued node (introspection) to dispatch, if any
};

// Whether candidates whose specialist calls an LLM may still be dispatched.
enum class LlmBudgetState { kLeft, kSpent };

// Whether `action` is implemented by a specialist on an LLM backend (spec.specialists): such a
// candidate spends the campaign's LLM budget.
bool UsesLlm(const CampaignSpec& spec, const ActionSpec& action);

class Selector {
 public:
  // `catalog` holds the actions candidates are drawn from (the campaign file's and the proposed
  // ones); `kb_priors` what earlier campaigns learned (empty without a knowledge base).
  Selector(const CampaignSpec& spec, const Tree& tree, const Catalog& catalog,
           const CategoryStats& stats, const KbPriors& kb_priors);

  // The candidates applicable at the incumbent, and the pending nodes re-queued under it (or in
  // a branch judged against it), scored against `profile`, the incumbent's (nullopt: every
  // action is scored against the whole program), best first. Ties keep catalog order, re-queued
  // nodes after the untried candidates in tree order, so the same inputs give the same choice.
  // After search.plateau nodes without a keep the exploration weight doubles.
  std::vector<ScoredCandidate> Score(const std::optional<Profile>& profile) const;

  // The candidates to dispatch next, pointing into `scored` (ordered as Score returns it): the
  // best worth trying and, with search.parallel = K, the next K-1 in score order, never more
  // than the node budget has room for (yet at least one). Candidates below search.min_gain come
  // only when nothing else is left; those calling an LLM never once its budget is spent. Empty:
  // nothing is left to try.
  std::vector<const ScoredCandidate*> ChooseBatch(const std::vector<ScoredCandidate>& scored,
                                                  LlmBudgetState llm) const;

 private:
  const CampaignSpec& spec_;
  const Tree& tree_;
  const Catalog& catalog_;
  const CategoryStats& stats_;
  const KbPriors& kb_priors_;
};

}  // namespace arbor

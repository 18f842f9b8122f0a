#include "core/search/selector.h"

#include <algorithm>
#include <limits>

#include "core/search/moves.h"
#include "core/search/scoring.h"

namespace arbor {

bool UsesLlm(const CampaignSpec& spec, const ActionSpec& action) {
  if (action.apply.kind != ApplySpec::Kind::kAgent) return false;
  auto it = spec.specialists.find(action.apply.agent);
  return it != spec.specialists.end() && it->second.backend == SpecialistBackend::kLlm;
}

namespace {

// What a re-queued node's changes measured alone, clearly slower, before (the product of
// their MeasuredSlowdowns; 1 when none did): for a node that tries its own candidate once more on
// a newer state (a revisit, a re-tune, an idea the profile pointed back to, one carried over),
// and for a pair or follow-up, each of whose sides counts. Not for a re-measure (the same state,
// more repetitions), a refresh, a retry of a lost run, a drop or swap, a fix search or a stack.
double MeasuredAlone(const Tree& tree, const std::map<std::string, double>& slowdowns,
                     const Node& n) {
  if (DroppedKey(n) || IsGroup(n)) return 1;
  const std::optional<Move> move = MoveOf(n);
  const bool alone = !CompanionKey(n) && !tree.IsBranch(n) &&
                     (move == Move::kRevisit || move == Move::kRetune ||
                      move == Move::kIntrospect || move == Move::kCarry);
  if (!alone && move != Move::kPair && move != Move::kFollowUp) return 1;
  double m = 1;
  auto side = [&](const std::string& key) {
    auto it = slowdowns.find(key);
    if (it != slowdowns.end()) m *= it->second;
  };
  for (const Node* b : tree.BranchPath(n.id)) {
    side(b->CandidateKey());
    for (const std::string& k : CompanionKeys(*b)) side(k);
  }
  return m;
}

}  // namespace

Selector::Selector(const CampaignSpec& spec, const Tree& tree, const Catalog& catalog,
                   const CategoryStats& stats, const KbPriors& kb_priors)
    : spec_(spec), tree_(tree), catalog_(catalog), stats_(stats), kb_priors_(kb_priors) {}

std::vector<ScoredCandidate> Selector::Score(const std::optional<Profile>& profile) const {
  NodeId inc_id = tree_.Incumbent();
  std::vector<Candidate> applicable;
  // Only the applicable ones: without the exclusions Classify is O(applicable), not O(catalog).
  catalog_.Classify(tree_, inc_id, &applicable, nullptr);
  // Ideas the Critic re-queued under the incumbent, or in a branch judged against it,
  // compete like any other candidate.
  std::vector<NodeId> pending(applicable.size(), kNoNode);
  // A re-try of ideas that lost clearly alone before promises what the prior promised times
  // what they measured (moves.h MeasuredSlowdowns); 1 for every other candidate.
  std::vector<double> measured(applicable.size(), 1.0);
  // Walked from the path only when something waits: most choices re-queue nothing.
  std::optional<std::map<std::string, double>> slowdowns;
  for (const Node* c : tree_.Below(inc_id)) {
    if (c->outcome != Outcome::kPending) continue;
    const ActionSpec* action = catalog_.FindAction(c->action_id);
    if (action == nullptr) continue;
    applicable.push_back(Candidate{action, c->value, c->CandidateKey()});
    pending.push_back(c->id);
    if (!slowdowns) slowdowns = MeasuredSlowdowns(tree_, inc_id, spec_.metric.goal);
    measured.push_back(MeasuredAlone(tree_, *slowdowns, *c));
  }
  const Node* inc = tree_.Find(inc_id);
  double m_gap =
      GapMultiplier(inc ? inc->metric : std::nullopt, spec_.metric.target, spec_.metric.goal);
  double prior_cost = 0;
  for (const auto& a : spec_.actions) prior_cost += a.cost_s;
  prior_cost = spec_.actions.empty() ? 1 : prior_cost / static_cast<double>(spec_.actions.size());
  double ref_cost = stats_.ReferenceCost(prior_cost);
  double explore = spec_.search.explore;
  if (tree_.TrailingNonKept() >= spec_.search.plateau) explore *= 2;

  const int total_tries = std::max(1, tree_.FinishedCount());

  std::vector<ScoredCandidate> out;
  std::vector<ScoreTerms> terms;
  out.reserve(applicable.size());
  terms.reserve(applicable.size());
  // Every input but the candidate itself depends on the action only: computed once per action
  // (candidates of one action are adjacent), not once per value.
  const ActionSpec* last_action = nullptr;
  ScoreInput in;
  for (const Candidate& c : applicable) {
    if (c.action != last_action) {
      last_action = c.action;
      in = ScoreInput{};
      in.action = c.action;
      // Without a profile every action is scored against the whole program.
      in.g = profile ? ExpectedGain(*profile, c.action->targets, c.action->speedup)
                     : ExpectedGain(Profile{}, {}, c.action->speedup);
      in.r_acc = stats_.AccuracyRisk(*c.action);
      in.r_crash = stats_.CrashRisk(*c.action);
      in.cost_s = stats_.ExpectedCost(*c.action);
      in.reference_cost_s = ref_cost;
      in.m_gap = m_gap;
      in.total_tries = total_tries;
      in.category_tries = stats_.Counts(c.action->category).tries;
    }
    // What earlier campaigns learned about this very candidate moves its priors.
    const KbPrior* kb = kb_priors_.size() ? kb_priors_.Find(c.key) : nullptr;
    // Scored with GainNow: a re-try's promise times what it measured; g stays the prior's.
    const double m = measured[out.size()];
    auto scored = [&](const ScoreInput& s) {
      ScoreInput now = s;
      now.g = GainNow(s.g, m);
      ScoreTerms t = ScoreOne(now, spec_.search.formula, explore);
      t.g = s.g;
      t.measured = m;
      return t;
    };
    if (kb == nullptr) {
      terms.push_back(scored(in));
      terms.back().speedup = c.action->speedup;
    } else {
      ScoreInput with_kb = in;
      with_kb.g = profile ? ExpectedGain(*profile, c.action->targets, kb->speedup)
                          : ExpectedGain(Profile{}, {}, kb->speedup);
      with_kb.r_acc = stats_.AccuracyRisk(*c.action, kb);
      with_kb.r_crash = stats_.CrashRisk(*c.action, kb);
      with_kb.cost_s = stats_.ExpectedCost(*c.action, kb);
      with_kb.category_tries += kb->category_weight;
      terms.push_back(scored(with_kb));
      terms.back().speedup = kb->speedup;
      terms.back().kb = kb->refs;
    }
    out.push_back({c, {}, pending[out.size()]});
  }
  NormalizeScores(&terms);
  for (size_t i = 0; i < out.size(); ++i) out[i].terms = terms[i];
  // Stable: ties keep campaign-file order, so the same seed and inputs give the same choice.
  std::stable_sort(out.begin(), out.end(), [](const ScoredCandidate& a, const ScoredCandidate& b) {
    return a.terms.h > b.terms.h;
  });
  return out;
}

std::vector<const ScoredCandidate*> Selector::ChooseBatch(
    const std::vector<ScoredCandidate>& scored, LlmBudgetState llm) const {
  int size =
      std::max(1, std::min(spec_.search.parallel, spec_.search.max_nodes - tree_.FinishedCount()));
  auto fill = [&](double min_gain) {
    std::vector<const ScoredCandidate*> batch;
    for (const auto& s : scored) {
      if (static_cast<int>(batch.size()) >= size) break;
      if (GainNow(s.terms) < min_gain) continue;
      if (llm == LlmBudgetState::kSpent && UsesLlm(spec_, *s.candidate.action)) continue;
      batch.push_back(&s);
    }
    return batch;
  };
  std::vector<const ScoredCandidate*> batch = fill(spec_.search.min_gain);
  // Candidates the profile says cannot matter (g < min_gain) come last, never skipped: profiles
  // and priors can be wrong, and a budget the user gave is spent before the campaign ends.
  return batch.empty() ? fill(-std::numeric_limits<double>::infinity()) : batch;
}

}  // namespace arbor

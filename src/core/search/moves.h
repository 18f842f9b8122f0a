// Moves: the work a campaign re-queues besides the untried candidates of the catalog, so that a
// budget the user gave is spent on what could still pay off and no candidate becomes
// unreachable (ARBOR.md "The Critic": introspection; docs/search.md).
//
// Each function is a pure rule over the tree: it returns which finished nodes to retry (and
// why) as pending children of a given node; the Orchestrator records them (requeue.cc). A
// retried candidate is never one already tried or pending at that node, never one applied on
// its path, and never one whose declared requires/conflicts the path does not satisfy.
#pragma once

#include <functional>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/model.h"
#include "core/model/spec.h"
#include "core/search/candidates.h"
#include "core/tree/tree.h"

namespace arbor {

// Why a node was re-queued; stored on the node as the flag "move:<name>" and counted in
// `arbor status` and the report.
enum class Move {
  kIntrospect,    // after a keep: the profile moved to a reverted idea's targets
  kCarry,         // after a keep: a re-queued idea waiting under the old incumbent moves along
  kPrerequisite,  // after a keep: a candidate that lacked a prerequisite (SIGILL) is retried
  kRevisit,       // nothing untried: an idea reverted before the path changed under it
  kRetune,        // nothing untried: another value of a parameter kept on the path
  kRemeasure,     // nothing untried: a close call at this incumbent, measured with 2× the runs
  kRetry,         // an implementation bug or a lost run: the one retry its diagnosis earns
  kPair,          // nothing else left: two candidates applied together (an interaction)
  kDrop,          // a change kept on the path taken back out (it may cost now)
  kFollowUp,      // a candidate on top of a reverted pair, swap or branch (frontier.h)
  kFix,           // a change that failed its check, with a group of candidates: one may fix it
  kStack,         // small gains: ideas that measured a gain too small to keep, applied together
  kRefresh,       // after a keep: a kept `refresh` action's command re-run on the new state
};
inline constexpr Move kAllMoves[] = {
    Move::kIntrospect, Move::kCarry, Move::kPrerequisite, Move::kRevisit, Move::kRetune,
    Move::kRemeasure,  Move::kRetry, Move::kPair,         Move::kDrop,    Move::kFollowUp,
    Move::kFix,        Move::kStack, Move::kRefresh};
std::string_view MoveName(Move m);  // "introspect", "carry", ...
std::optional<Move> ParseMove(std::string_view s);
std::string MoveFlag(Move m);                  // "move:<name>"
std::optional<Move> MoveOf(const Node& node);  // from its flags
// A revert is a close call, worth measuring again with more repetitions when the budget has
// nothing else left, when the gate ran out of evidence (flag `inconclusive`), its estimate favours
// it (p ≤ kCloseCallP) and its measured gain reached half of min_effect: at a few per cent of noise
// a real gain of min_effect often measures at half of it, and a re-measure keeps nothing the gate
// and the confirmation do not both accept.
inline constexpr double kCloseCallP = 0.50;
inline constexpr int kMaxRemeasures = 3;  // a close call is re-measured at 2×, 4×, 8× at most
// The very last resort (RemeasureClosest) goes on doubling up to 64× the repetitions, when the
// time budget allows a look at that many; beyond that depth each look is another at 64×
// (RemeasureScale), so that a budget of nodes the user gave is spent at a bounded cost per node.
inline constexpr int kMaxSequentialRemeasures = 6;
// RemeasureClosest's `max_depth` when the time left allows every look the budget of nodes does.
inline constexpr int kUnboundedDepth = std::numeric_limits<int>::max();
// A call is undecided while 1 + min_effect lies within its 95% interval (CallDistance ≤ 1.96).
inline constexpr double kUndecidedDistance = 1.96;
inline constexpr int kSequentialBatch = 4;  // decisions re-measured at a time, the closest first

// How many kRemeasure nodes lead to `node` through requeued_from (0 for any other node).
int RemeasureDepth(const Tree& tree, const Node& node);
// A re-measured node runs 2^scale × the campaign's repetitions per look: its depth, at most
// kMaxSequentialRemeasures.
int RemeasureScale(const Tree& tree, const Node& node);

struct Requeue {
  NodeId from = kNoNode;  // the node retried; kNoNode for a candidate never tried (`key`)
  std::string reason;
  std::optional<std::string> value;  // another value of `from`'s action (a re-tune), if set
  Move move = Move::kRevisit;
  std::string key;                  // the candidate when `from` is kNoNode
  std::optional<std::string> with;  // a pair's companion candidate key (Move::kPair)
  std::vector<std::string> bundle;  // a bundle's further companions, after `with` (Move::kFix)
  // A branch (docs/search.md, "Branches"): the node to open it under, whose state already
  // holds the rest of the hypothesis; kNoNode: under the node RequeueUnder is given.
  NodeId under = kNoNode;
};

// The candidate key `q` retries: its `key`, else `from`'s action with `value` (or from's own);
// "" when `from` is not in the tree.
std::string RetriedKey(const Tree& tree, const Requeue& q);

// Introspection after a keep: reverted nodes (no gain) along the new incumbent's path whose
// targets now take a clearly larger share of the time than when they were tried. Each node is
// re-queued this way at most once (never if a node already retries it).
using ProfileLookup = std::function<std::optional<Profile>(NodeId)>;
std::vector<Requeue> Introspect(const Tree& tree, const Catalog& catalog, NodeId kept,
                                const Profile& now, const ProfileLookup& profile_at);

// At a keep of `kept`: the pending (re-queued) siblings it supersedes move under it, unless
// they are the kept candidate itself or the new path rules them out.
std::vector<Requeue> CarryOver(const Tree& tree, const Catalog& catalog, NodeId kept);

// What rules `node` out on the path of `at`, "" when nothing does: its own candidate or a
// companion conflicts (declared, either side) with a change applied there and not taken out by
// the node, or declares that it requires a change neither the path nor the node applies. A node
// of a parallel batch whose incumbent moved before its turn (a keep that came first) is
// re-dispatched on the new one only when this is "" (parallel.cc): a follow-up of a swap, say,
// needs the alternative the swap put in.
std::string ConflictOnPath(const Tree& tree, const Catalog& catalog, const Node& node, NodeId at);

// At a keep of `kept`: candidates that crashed for a missing prerequisite (rca "prerequisite":
// SIGILL, an unsupported option) before this keep are retried on top of it: after the first
// crash at the next keep, after n crashes once 2^(n-1) keeps followed the last.
std::vector<Requeue> PrerequisiteRetries(const Tree& tree, const Catalog& catalog, NodeId kept);

// At a keep of a value of a parameter: the values next to it in the action's list (the next
// one first), as re-tunes on top of the keep, so that the search walks a parameter towards its
// best value while other candidates are still untried (a line search), instead of only once
// nothing else is left (Revisit). A neighbour already tried from a state on the path backs
// off as Revisit's do; one the constraints rule out is pruned when it comes up.
std::vector<Requeue> Neighbours(const Tree& tree, const Catalog& catalog, NodeId kept);
// At a keep that changed the whole program by kLargeKeep or more: the neighbours of every other
// parameter's value kept earlier on the path, as re-tunes on top of it (the best batch size
// after -O3 is not the best before it). Backs off as Neighbours does.
inline constexpr double kLargeKeep = 0.25;
std::vector<Requeue> RetunesAtLargeKeep(const Tree& tree, const Catalog& catalog, NodeId kept);

// At the revert of a line-search step (a re-tune of a parameter kept on `incumbent`'s path,
// not a pair) that measured no gain but no clear loss (its 95% interval reaches 1): the next
// value further in the same direction, as a re-tune on top of `incumbent`. A flat step on an
// ordered knob does not show that its best value lies behind it: a doubling that gains half
// of min_effect, an ISA level whose middle value gains nothing. One measured clearly slower
// ends the line.
std::vector<Requeue> LineStep(const Tree& tree, const Catalog& catalog, NodeId incumbent,
                              const Node& reverted);

// When every candidate was tried at `incumbent` and budget is left: ideas reverted for no gain
// (or not confirmed) under an earlier incumbent of the path (the keeps since may have changed their
// effect: an interaction the profile cannot show), and every other value of each parameter kept on
// the path (the best value moves with the path). At most once per incumbent, and with
// `back_off`, a candidate already tried n times from states on the path only once 2^(n-1) keeps
// followed its latest try: a dud is not re-run at every keep while pairs wait (the search
// benchmark found ~4× less per evaluation in revisits than in pairs). Without `back_off` (the
// last resort, when nothing else is left) every such idea is offered. Never a global once-only
// rule: the work is bounded by the budget.
std::vector<Requeue> Revisit(const Tree& tree, const Catalog& catalog, NodeId incumbent,
                             bool back_off = true);

// When every candidate was tried at `incumbent`: inconclusive reverted children of it whose gain
// reached half of min_effect with p ≤ kCloseCallP (a close call, not a clear no), closest first,
// measured once more with twice the repetitions of that measurement; a close call again may go on
// up to kMaxRemeasures. When no close call is left, every other inconclusive revert at `incumbent`
// (flag `inconclusive`; a second look, closest first), up to the same depth.
std::vector<Requeue> Remeasure(const Tree& tree, NodeId incumbent, const CriticSpec& critic);

// Whether a revert's measurement leaves room for a gain: the 95% interval of its speedup reaches
// above 1 (without an interval, its measured gain is above -kFarBelow). A change measured
// clearly slower (the toy's 20× slowdown, a -3% whose interval ends below 1) will not turn
// around with more repetitions, so no last look is spent on it.
inline constexpr double kFarBelow = 0.02;
bool MayStillPay(const Node& revert);

// What a re-try of each candidate measured before (Selector::Score): for each candidate key
// whose latest single try from a state on the path of `incumbent` (not a pair, drop, swap or
// group) was reverted clearly slower (not MayStillPay), the speedup it measured (1 + its gain,
// below 1: the time's ratio inverted for a metric to minimize). A re-try's promise is its prior's
// times this: an idea that lost far more than the noise needs an interaction as large to pay, and
// one that lost by a hair needs little, so the hair comes first (the demo spent its last
// evaluations on tile sizes that had lost 35-85% while a change of the optimum waited).
std::map<std::string, double> MeasuredSlowdowns(const Tree& tree, NodeId incumbent, Goal goal);

// When even the pairs are spent at `incumbent`: every revert there (no gain or not confirmed)
// that MayStillPay and was not yet measured again, including those the gate answered (a gain
// significantly below min_effect), the best measured first, with twice the repetitions of that
// measurement, up to kMaxRemeasures deep. With drift or outliers an answer near neutral can be
// wrong, and more repetitions are what is left to buy. With LastLooks::kAnswered (a last
// resort: a budget the user gave is spent) every such revert but a drop measured clearly slower
// (its change pays its way: an answer); with kKeepsToo (the very last, after the drops and
// swaps) those drops as well: each is a keep on the path verified again at 2×, 4×, 8× the
// repetitions, against the drift or outliers that may have made it. A drop measured again
// stays a drop.
enum class LastLooks { kMayPay, kAnswered, kKeepsToo };
std::vector<Requeue> RemeasureAnswered(const Tree& tree, NodeId incumbent,
                                       LastLooks which = LastLooks::kMayPay);

// How close a revert's call was: the distance of its measured speedup from the threshold a keep
// needs (1 + min_effect), in standard errors of its 95% interval, on the log scale. Small: more
// repetitions may turn the answer around; infinite without an interval of some width.
double CallDistance(const Node& revert, double min_effect);

// The very last resort, when every other move is spent at `incumbent` (sequential
// re-measurement): the reverts there (no gain or not confirmed; a drop's revert is a keep of the
// path verified again) measured again with twice the repetitions of their latest measurement,
// the closest call (CallDistance) first, `limit` at a time so that the next batch sees their
// results. While any call is undecided (CallDistance ≤ kUndecidedDistance) only the undecided
// are offered; then the settled ones, so that the budget is spent verifying the answers the
// campaign stands on. A call without an interval of some width (a point) is never offered. A
// decision is re-opened only with more repetitions than before (each look narrows its
// interval) up to 64× (RemeasureScale), never beyond a chain of `max_depth` looks: what the
// time budget allows (the campaign ends `exhausted` once every decision was measured at that
// depth), or kUnboundedDepth when a look at 64× fits in the time left: then each decision is
// looked at again at 64×, an independent verdict, as long as the budget of nodes lasts. Not a
// follow-up's (a speculative hypothesis).
std::vector<Requeue> RemeasureClosest(const Tree& tree, NodeId incumbent, double min_effect,
                                      int max_depth = kMaxSequentialRemeasures,
                                      int limit = kSequentialBatch);

// When nothing else is left at `incumbent`: up to `limit` pairs, two candidates applied together
// as one node, for the interactions one-at-a-time search cannot see. In this order:
//   1. a candidate whose declared `requires` one more candidate would complete (never tried:
//      its prerequisite was never kept), with that candidate;
//   2. an idea reverted for breaking accuracy, with each idea reverted for no gain (something
//      that costs a little alone may be what makes it correct), the least costly first;
//   3. two ideas reverted for no gain or not confirmed (each near-neutral alone may pay
//      together), by the pair's optimistic speedup: one side delivers the speedup its prior
//      promised at the incumbent, the other what it measured, max((S_a)(1+g_b), (S_b)(1+g_a)).
//      An idea that promised much and measured nothing is the first suspect of an interaction
//      (it may need something the path lacks); an idea that promised little comes with the
//      partners that cost least. A pair whose optimistic speedup is no gain is not tried.
// In 2. a partner whose measured loss outweighs the failing idea's promise is not tried either.
// Neither may be applied on the path, they must not conflict (with the path or each other), and
// a pair already tried (either way round) at the incumbent or an ancestor is not tried again.
// `promise` gives the speedup an action's prior promises at the incumbent (the whole program's,
// after Amdahl); without it, the action's declared speedup. A side's promise counts for 2^-k of
// its gain once k pairs with it were measured without a gain (a wrong prior would otherwise
// lead batch after batch). With PairKinds::kEvery (a last resort: priors can be wrong) the
// pairs no promise supports are offered as well, in the same order. PairKinds::kRetunes (the
// very last, after the drops and swaps) offers only another value of a parameter kept on the
// path with each idea reverted for no gain, the values next to the kept one first: a
// parameter's best value can move with a change that did not pay at the value kept.
//
// With `branches` (docs/search.md, "Branches"), a pair whose other side ran at the incumbent
// (measured, not kept) is opened under that node, as a branch node that builds on its state
// (Requeue::under), instead of applying both sides under the incumbent; and the open states
// of the frontier (frontier.h) that are no single idea — a reverted pair, swap, drop or
// branch node — get follow-ups: an idea reverted for no gain on top, ranked with the pairs by
// the same optimistic speedup (its promise times what the state measured), which halves with
// each follow-up under that state that measured no gain. PairKinds::kFollowUps (the very
// last resort of a campaign with branches, once every other move is spent) offers the
// follow-ups no promise supports too, in the same order: untested combinations of up to
// kMaxBranchChanges changes are still hypotheses, and a budget the user gave is spent on them
// rather than left.
inline constexpr int kPairBatch = 4;
enum class PairKinds { kHopeful, kEvery, kRetunes, kFollowUps };
using Promise = std::function<double(const ActionSpec&)>;
std::vector<Requeue> Pairs(const Tree& tree, const Catalog& catalog, NodeId incumbent,
                           int limit = kPairBatch, const Promise& promise = nullptr,
                           PairKinds kinds = PairKinds::kHopeful, bool branches = false);

// Fix searches (Move::kFix): a change that failed its check on accuracy, and never passed it
// alone since, may need another change to be right: a fix that is neutral or costs a little
// alone, which one change at a time never keeps and a pair finds only by luck. A fix-search
// node applies the change with a group of candidates at once (a bundle: several companions),
// and bisects by its check: a group that fails it holds no fix; a group that passes it holds
// the fix (a probe: node_steps.cc reverts it unmeasured), and its first half is tried next,
// until one candidate is left, measured with the change and kept like any pair. The first group is
// every candidate that may fix it: each ran alone on the path (measured, its check passed, never a
// crash or a failed check), is not applied there, fits the path with the change, one value per
// action and no two in a declared conflict. A group that crashes says nothing: the next is at
// most half its size. A pair of the change measured on the path counts as a group of one.
// One node per change at a time, the highest prior speedup first, at most kMaxFixRounds per
// change.
inline constexpr int kMaxFixRounds = 8;
std::vector<Requeue> FixSearch(const Tree& tree, const Catalog& catalog, NodeId incumbent);
// A fix search's group: a Move::kFix node with more than one companion (a re-measure of one is
// never made: a probe has no verdict to measure again). One whose check passed carries
// kProbeFlag, is reverted unmeasured and has no root cause.
bool IsFixGroup(const Node& node);
inline constexpr std::string_view kProbeFlag = "probe";

// Stacks (Move::kStack): ideas reverted for no gain whose latest try from a state on the path
// measured a gain nonetheless, too small for the gate to tell from noise, applied together as
// one node (a group: several companions), the best measured first: a few real gains of a third
// of min_effect each are one gain the gate can see, and the gate, the confirmation and the
// check judge the stack like any change. Each fits the path (not applied there, requires met,
// no declared conflict with the path or another of the stack), one value per action, never
// another value of a parameter kept on the path. A stack that is not kept (or fails) is followed
// by the better half of it, down to two ideas, at most kMaxStackRounds at one incumbent; one
// stack at a time.
inline constexpr int kMaxStackRounds = 3;
inline constexpr size_t kMaxStackSize = 16;
std::vector<Requeue> Stacks(const Tree& tree, const Catalog& catalog, NodeId incumbent);
// A node that applies a group of candidates (a fix search's group, a stack, or a re-measure of
// one: flag kGroupFlag): its failure is no evidence against any one of them, so it publishes no
// constraint and notes no check failure; a kept one queues no drops of its members; and it is
// no try of its own candidate (a revisit of that idea alone may still come at its incumbent).
bool IsGroup(const Node& node);
inline constexpr std::string_view kGroupFlag = "group";

// The other side of a pair node: its companion (flag "with:"), or, for a branch node whose
// branch is one idea and itself (Tree::BranchPath), that idea's key. nullopt for any other
// node.
std::optional<std::string> PairedWith(const Tree& tree, const Node& node);

// Drops (Move::kDrop): changes kept on the path of `incumbent`, each measured taken back out
// (the node's own candidate is the change, flag "without:<key>"), the latest keep first: a
// change that paid when it was kept may cost once later keeps changed the program (an
// antagonistic pair), and a pair's side may be a passenger. A drop is kept like any node, on a
// confirmed gain. Only a change that is an environment overlay alone (apply kinds `env` and
// `append`) and whose variables no other change applied on the path sets, that no applied
// change requires, and that was not dropped (tried or waiting) at the incumbent already. With
// `of`, only the changes that node applied (its sides, for a pair).
std::vector<Requeue> Drops(const Tree& tree, const Catalog& catalog, NodeId incumbent,
                           NodeId of = kNoNode);

// Swaps (Move::kDrop with a companion): a candidate applied in the place of a change kept on
// the path that Drops could take out (the node's own candidate is the change removed, flag
// "without:<key>"; the candidate put in is its companion, "with:<key>"). Offered for
//   1. a candidate that conflicts (declared `conflicts`, either side) with the kept change: the
//      alternative the first winner locked out;
//   2. a candidate whose latest try from a state on the path crashed at run time while the kept
//      change was applied: the crash may come from the two together.
// Once per pair at the incumbent; never another value of the change's own parameter (a
// re-tune), and the candidate must fit the path without the change. With `unmeasured_only`,
// only the alternatives of rule 1 never measured in the campaign (no evaluated node applied
// them): a choice nobody compared, which comes before the moves on ideas already measured.
// With `subtrees` too (branches on), an alternative whose subtree nobody explored counts as
// unmeasured while fewer than kMaxSubtreeSwaps swaps measured it: a candidate declares that it
// requires the alternative and no evaluated node applied that candidate. A swap measured under
// an earlier incumbent is no state a follow-up builds on (it lacks the keeps since); measured
// again at the incumbent, it is, and what only runs with it is its follow-up (Pairs).
inline constexpr int kMaxSubtreeSwaps = 2;
std::vector<Requeue> Swaps(const Tree& tree, const Catalog& catalog, NodeId incumbent,
                           bool unmeasured_only = false, bool subtrees = false);
// The candidates that declare they require `action_id` and that no evaluated node applied
// (alone, as a side or a follow-up): an alternative's unexplored subtree.
std::vector<const Candidate*> UnmeasuredDependents(const Tree& tree, const Catalog& catalog,
                                                   const std::string& action_id);

// Refreshes (Move::kRefresh): at the keep of `kept`, each change kept earlier on its path whose
// action declares `refresh = true` (a `run` command that derives files from the state it runs on:
// a PGO profile trained with the flags and knobs of its day) and that `kept` does not apply
// itself, re-run on the new state: the keep made what it derived stale (a profile trained
// without -ffast-math misguides a build with it). The node's own candidate is that change, on a
// path that already holds it; it is measured and kept like any node. None at the keep of a
// refresh (two such actions would refresh each other without end), and none for a change the
// path took back out (a drop). A refresh waiting when another keep comes is not carried over:
// the next keep offers its own; at the keep of a refresh, the refreshes of other actions that
// were waiting beside it are offered again (and only those). None for an action whose refresh
// is running under the old incumbent (a parallel batch's node, re-dispatched onto the keep).
std::vector<Requeue> Refreshes(const Tree& tree, const Catalog& catalog, NodeId kept);
// The changes in the state of `state` whose action declares `refresh = true`: per action, the
// latest node that ran its command (applied it, or ran it again: model.h RerunKeys) and the
// key, in path order. A drop of the change takes it out.
struct KeptRefresh {
  NodeId node = kNoNode;
  std::string key;
};
std::vector<KeptRefresh> KeptRefreshes(const Tree& tree, const Catalog& catalog, NodeId state);
// What a node runs again on top of its own change (model.h RerunKeys): the refreshes in its
// parent's state that it neither applies itself (a refresh, a pair with one) nor takes out (a
// drop). Measured so, a candidate on a PGO-built state is judged with a profile trained on it,
// not on a state without it: a stale profile made every change measured after the demo's PGO
// lose 7-61%, knobs that change no code included (docs/search.md, step 2).
std::vector<std::string> RefreshesToRun(const Tree& tree, const Catalog& catalog, const Node& node);
// Whether `node` runs a refresh: a Move::kRefresh node, or a re-measure of one (which keeps the
// flag "move:refresh" after its own "move:remeasure").
bool IsRefresh(const Node& node);

// Alternatives as subtrees, early (docs/search.md, "Branches"): at the keep of `kept`, the swaps
// of a declared alternative of it whose subtree is hopeful — the alternative's promise times the
// best promise among its unmeasured dependents beats what the kept change measured — so that the
// alternative is judged with what only runs with it before the first winner is built on for the
// rest of the campaign. At most kMaxSubtreeSwaps per alternative (Swaps' `subtrees`).
std::vector<Requeue> SubtreeSwaps(const Tree& tree, const Catalog& catalog, NodeId kept,
                                  const Promise& promise);
// At the revert of a swap measured at the incumbent: the follow-ups its state unlocks (Pairs'
// unlocked follow-ups of that state), the hopeful ones, queued with the revert.
std::vector<Requeue> UnlockedFollowUps(const Tree& tree, const Catalog& catalog, NodeId incumbent,
                                       const Node& swap, const Promise& promise);

// The overlay of `at` with the variables the change `key` sets back at their values before it
// was kept (unset when they had none): what a drop node runs with. Requires `key` applied on
// the path of `at` by a kept node.
EnvOverlay OverlayWithout(const Tree& tree, const Catalog& catalog, NodeId at,
                          const std::string& key);

// The pairs in their order, but a pair with a side that `revisits` retries alone gives way to
// that revisit (once, where the pair stood): alone is the cheaper hypothesis, and a pair kept
// for the sake of a side that now pays alone would keep a useless, or harmful, companion. Only
// the revisits of the leading pairs' sides are spent: the others wait (the search benchmark
// found a revisit worth less than a pair per evaluation, docs/history/benchmarks-log.md).
std::vector<Requeue> PairsOrTheirSidesAlone(const Tree& tree, const std::vector<Requeue>& pairs,
                                            const std::vector<Requeue>& revisits);

}  // namespace arbor

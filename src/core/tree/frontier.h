// Frontier: the states a campaign may branch from besides the incumbent (docs/search.md,
// "Branches"). Pure: a function of the tree.
//
// The main line (the kept chain) ends at the incumbent, the best confirmed state. Every node
// judged against the incumbent that was measured and not kept — a reverted idea, a pair, a
// swap, a branch node — is a state the search knows exactly (its commit and environment) and
// may build on: its follow-ups are branch nodes under it, judged against the incumbent like it
// was. A follow-up that beats the incumbent makes its whole branch the main line.
//
// Who may be followed up, and how far, is the rule below: a reverted node that ran and was not
// crashed (no gain, not confirmed, or its check failed: a follow-up may be its fix), as long as
// its branch holds fewer than kMaxBranchChanges changes over the incumbent. Each state carries
// what its subtree already cost: how many follow-ups were evaluated under it and how many of
// those measured no gain (the visits an exploration bonus discounts).
#pragma once

#include <set>
#include <string>
#include <vector>

#include "core/model/model.h"
#include "core/tree/tree.h"

namespace arbor {

// A follow-up holds at most this many changes over the incumbent (its branch's nodes).
inline constexpr int kMaxBranchChanges = 3;

struct OpenState {
  const Node* node = nullptr;
  int changes = 0;  // changes its state holds over the incumbent (ChangeSet's size)
  int visits = 0;   // evaluated branch nodes below it
  int lost = 0;     // of which reverted without a gain (no_gain, not_confirmed)
};

// Whether `node`, judged against its base, is a state a follow-up may build on: reverted for no
// gain, not confirmed, or for accuracy, with a commit of its own.
bool MayBranchFrom(const Node& node);

// The open states below `incumbent` (Tree::Below), in Below's order, whose follow-ups would
// stay within kMaxBranchChanges.
std::vector<OpenState> Frontier(const Tree& tree, NodeId incumbent);

// The changes `node`'s state holds over its base, as a set: the candidate keys its branch's
// nodes apply, and "-<key>" for each change a drop takes out. Two nodes with the same set run
// the same hypothesis, whichever order the branch took (a+b then c, or a+c then b).
std::set<std::string> ChangeSet(const Tree& tree, const Node& node);

}  // namespace arbor

// The Orchestrator's side of the knowledge base: priors at the start, entries as nodes finish.
//
// The knowledge base is advice, never the record: when it cannot be read or written the
// campaign goes on without it and says so in an event. Entries are recorded after the node's
// outcome is in the campaign store; a process killed in between records them on resume
// (Record is idempotent by the entry's uid), so nothing is lost and nothing is doubled.
#include <algorithm>
#include <set>

#include "core/orchestrator/orchestrator.h"
#include "core/search/moves.h"

namespace arbor {

void Orchestrator::KbWarning(const std::string& what, const Error& error) {
  Mutation m;
  m.events.push_back(MakeEvent(
      kRootId, "kb",
      "knowledge base: " + what + " (" + error.message + "); the campaign goes on without it"));
  if (ports_.store->Apply(m).ok() && ports_.sink) ports_.sink->OnEvent(m.events.back());
}

KbContext Orchestrator::KnowledgeContext() const {
  KbContext context = ports_.kb_context;
  context.campaign_uid = meta_.uid;
  if (meta_.kb_time > 0) context.now = meta_.kb_time;
  context.controlled = critic_;
  return context;
}

Status Orchestrator::LoadKnowledge() {
  kb_ok_ = false;
  if (ports_.kb == nullptr) return {};
  KbContext context = KnowledgeContext();
  // Entries recorded after this campaign started (other campaigns running meanwhile) are left
  // out, so that a resume scores exactly as the uninterrupted run would have.
  if (meta_.kb_snapshot > 0) {
    KbQuery query;
    std::set<std::string> categories;
    for (const ActionSpec& a : spec_.actions) {
      query.action_ids.push_back(a.id);
      categories.insert(a.category);
    }
    query.categories.assign(categories.begin(), categories.end());
    query.max_id = meta_.kb_snapshot;
    query.exclude_campaign_uid = meta_.uid;
    auto entries = ports_.kb->Load(query);
    if (!entries.ok()) {
      KbWarning("cannot read the priors", entries.error());
      return {};
    }
    kb_priors_ = KbPriors::Compute(*entries, spec_.actions, context);
    kb_entries_ = std::move(*entries);
  }
  kb_ok_ = true;
  // Finished nodes a killed process had no time to record.
  std::vector<const Node*> finished;
  for (const Node* n : tree_.All()) {
    if (n->step == Step::kDone) finished.push_back(n);
  }
  RecordKnowledge(finished);
  return {};
}

void Orchestrator::RecordKnowledge(const std::vector<const Node*>& finished) {
  if (!kb_ok_) return;
  KbContext context = KnowledgeContext();
  std::vector<KbEntry> entries;
  std::vector<NodeId> ids;
  std::vector<NodeId> corrected;
  for (const Node* n : finished) {
    if (n == nullptr || n->id == kRootId) continue;
    // A keep the re-check took back (recheck.cc) was recorded as kept: its correction (the
    // node as it is now, reverted) supersedes that entry, so the next campaign does not
    // inherit a flaky check's win.
    const bool unkept = std::count(n->critic.flags.begin(), n->critic.flags.end(), "unkept") > 0;
    if (kb_recorded_.count(n->id) && (!unkept || kb_corrected_.count(n->id))) continue;
    if (n->outcome != Outcome::kKept && n->outcome != Outcome::kReverted &&
        n->outcome != Outcome::kCrashed) {
      continue;
    }
    // An entry describes one candidate; a pair's result belongs to neither of its two alone,
    // and a drop's (its change taken out) to no candidate.
    // Nor a branch node's (its state holds its branch's changes too); a node carried onto the
    // main line by a branch was recorded alone when it finished.
    // Nor a refresh's: it ran a change already on its path again, on a newer state; nor a node
    // that failed in such a command run again on top of its change.
    if (CompanionKey(*n) || DroppedKey(*n) || tree_.IsBranch(*n) || HasFlag(*n, "carried") ||
        IsRefresh(*n) || HasFlag(*n, kRerunFailedFlag)) {
      continue;
    }
    const ActionSpec* action = catalog_.FindAction(n->action_id);
    if (action == nullptr) continue;
    std::vector<const Node*> path;
    for (const Node* p = tree_.Find(n->parent); p != nullptr; p = tree_.Find(p->parent)) {
      path.push_back(p);
      if (p->id == kRootId) break;
    }
    KbEntry entry =
        EntryFromNode(*n, *action, context, PathHash(path), spec_.name, spec_.metric.goal);
    // Recorded before (as kept) or not, the plain entry goes first: Record is idempotent by
    // uid, and the correction supersedes whatever that uid holds.
    entries.push_back(entry);
    ids.push_back(n->id);
    if (unkept) {
      entry.uid += kKbCorrectionSuffix;
      entries.push_back(std::move(entry));
      corrected.push_back(n->id);
    }
  }
  if (entries.empty()) return;
  Status s = ports_.kb->Record(entries);
  if (!s.ok()) {
    KbWarning("cannot record " + std::to_string(entries.size()) + " entries", s.error());
    kb_ok_ = false;  // one warning, not one per node; a resume tries again
    return;
  }
  kb_recorded_.insert(ids.begin(), ids.end());
  kb_corrected_.insert(corrected.begin(), corrected.end());
}

}  // namespace arbor

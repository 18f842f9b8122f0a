// The campaigns the kill -9 stress driver kills, and the checks of their git side.
//
//  - kToy: examples/toy (build, check, benchmark, profile, Critic, keeps, a re-queue), one
//    specialist at a time. Every effect is >= 1.5x or a failure, so its tree is deterministic.
//  - kParallel: the agent campaign of tests/integration (agent_campaign.h) with
//    `[search] parallel = 2`: command-backend specialists at work in parallel worktrees, a
//    computed (not timed) benchmark.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "../integration/harness.h"
#include "kill9_store.h"

namespace arbor::stress {

enum class CampaignKind { kToy, kParallel };

const char* KindName(CampaignKind kind);
// The campaign's name in its arbor.toml (its branch is arbor/<name>).
std::string CampaignName(CampaignKind kind);

// A fresh repository holding the campaign, committed, its `[campaign] seed` set to `seed` and,
// when `max_nodes` > 0, its `[search] max_nodes` to that (a shorter campaign).
std::unique_ptr<integration::TempWorkspace> MakeCampaign(CampaignKind kind, uint64_t seed,
                                                         int max_nodes);

std::string StorePath(const integration::TempWorkspace& ws, CampaignKind kind);

// The git side against the store `s`:
//  - the branch arbor/<name> points at the incumbent's commit. Arbor records a keep before it
//    moves the branch (orchestrator.cc, Reconcile), so when the newest event is that keep
//    (`lag_allowed`) the branch may still be at an older kept commit on the incumbent's path;
//  - every kept node's commit exists and is an ancestor of the branch (same exception for the
//    newest keep).
void CheckGit(const integration::TempWorkspace& ws, CampaignKind kind, const StoreSnapshot& s,
              std::vector<std::string>* out);

// After a finished campaign: git lists the main checkout only and the campaign's worktree
// folder is empty, and the user's checkout is clean.
void CheckNoWorktrees(const integration::TempWorkspace& ws, CampaignKind kind,
                      std::vector<std::string>* out);

// What the campaign in `ws` started that outlived a killed `arbor` (reaped already): every
// process but this one whose working directory lies under the workspace's root or whose
// environment names it (target commands and agents get ARBOR_WORKTREE, arbor itself and its
// watchdog ARBOR_KB there). The watchdog kills the killed engine's commands within about two
// seconds, so this waits up to `timeout_s` for them to go; what is still alive then is an
// orphan: returned ("pid cmdline" each) and killed, so that the next run starts clean.
std::vector<std::string> Orphans(const integration::TempWorkspace& ws, double timeout_s);

}  // namespace arbor::stress

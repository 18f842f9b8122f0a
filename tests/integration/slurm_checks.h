// Helpers of the tests that run campaigns through a real Slurm cluster (slurm_test.cc,
// slurm_adopt_test.cc): started by tests/slurm/with-slurm.sh, which exports SLURM_CONF.
#pragma once

#include <cstdlib>
#include <string>
#include <vector>

#include "harness.h"

namespace arbor::integration {

inline bool HaveCluster() { return std::getenv("SLURM_CONF") != nullptr; }

#define REQUIRE_CLUSTER() \
  if (!HaveCluster()) GTEST_SKIP() << "no SLURM_CONF: run through tests/slurm/with-slurm.sh"

// The [executor] table of a Slurm campaign in `ws`, plus `more` lines.
std::string Executor(const TempWorkspace& ws, const std::string& more = "");

// A campaign named `name` (build.sh, bench.sh printing {"v": N}) with one action, app.fast,
// setting FAST=1, which the scripts use to double the metric; `executor` is appended.
std::string FastCampaign(const std::string& name, const std::string& executor);

// The ids of this user's queued or running jobs whose comment starts with `comment`.
std::vector<std::string> Jobs(const std::string& comment = "");

// Jobs of this user Slurm still has pending or running (completing ones are on their way out).
std::vector<std::string> ActiveJobs();

// Every "job" event of node `id` (`arbor show --json`).
std::vector<nlohmann::json> JobEvents(const TempWorkspace& ws, int64_t id);

}  // namespace arbor::integration

// Where a campaign keeps its state: <workspace>/.arbor/<name>/ (DESIGN.md "State of a node").
#pragma once

#include <string>

#include "core/model/spec.h"

namespace arbor {

struct CampaignPaths {
  std::string state_dir;  // <workspace>/.arbor/<name>
  std::string db;         // state_dir/arbor.db
  std::string runs;       // state_dir/runs: stdout, stderr, metrics, profiles per node and step
  std::string lock;       // state_dir/lock: one arbor process per campaign
};

CampaignPaths PathsFor(const CampaignSpec& spec);

}  // namespace arbor

#include "app/paths.h"

namespace arbor {

CampaignPaths PathsFor(const CampaignSpec& spec) {
  CampaignPaths p;
  p.state_dir = spec.workspace + "/.arbor/" + spec.name;
  p.db = p.state_dir + "/arbor.db";
  p.runs = p.state_dir + "/runs";
  p.lock = p.state_dir + "/lock";
  return p;
}

}  // namespace arbor

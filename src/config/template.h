// The commented campaign file that `arbor init` writes.
//
// Every section and key of docs/campaign-file.md appears, set to its default or commented out
// with an explanation, so a user learns the schema by editing it. The text parses with
// ParseCampaign as is (config_test checks it); only its commands are placeholders.
#pragma once

#include <string>

namespace arbor {

// The template for a campaign called `name`. Characters a campaign name may not hold become
// '-', and an empty name becomes "campaign", so the result always parses.
std::string CampaignTemplate(const std::string& name);

// `name` made a valid campaign name: characters a name may not hold become '-', leading dots
// and dashes go, and what is left empty or invalid becomes "campaign".
std::string SanitizeCampaignName(const std::string& name);

}  // namespace arbor

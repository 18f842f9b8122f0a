// Fuzzes the campaign file parser (ParseCampaign, config/campaign_loader.h) with the TOML text
// itself (the loader has a from-string entry point, so no temporary file is written), and the
// proposed-action reader (ParseProposedAction, config/proposal_loader.h) on the same text.
// Relative paths resolve against an empty folder, so `patch` actions name missing files.
// Malformed input must give a one-line error, never a crash.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "config/campaign_loader.h"
#include "config/proposal_loader.h"
#include "fuzz_util.h"

namespace {

const std::string& BaseDir() {
  static const std::string dir = [] {
    char tmpl[] = "/tmp/arbor-fuzz-campaign-XXXXXX";
    const char* made = mkdtemp(tmpl);
    if (made == nullptr) std::abort();
    return std::string(made);
  }();
  return dir;
}

// What a proposal is checked against: one known action and one agent domain.
const arbor::CampaignSpec& KnownSpec() {
  static const arbor::CampaignSpec spec = [] {
    arbor::CampaignSpec s;
    s.file = "/campaign/arbor.toml";
    arbor::ActionSpec o3;
    o3.id = "flags.o3";
    s.actions.push_back(o3);
    s.specialists["kernel"].domain = "kernel";
    return s;
  }();
  return spec;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace arbor;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  Result<CampaignSpec> spec = ParseCampaign(text, "fuzz.toml", BaseDir());
  (void)fuzz::CheckResult(spec, "ParseCampaign");
  Result<ActionSpec> action = ParseProposedAction(text, "proposal", KnownSpec(), {"kernel.old"});
  (void)fuzz::CheckResult(action, "ParseProposedAction");
  return 0;
}

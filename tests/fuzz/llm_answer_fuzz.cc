// Fuzzes what Arbor reads from a chat model's answer (specialists/llm_answer.h): the implement
// answer's blocks (ParseLlmAnswer), its ```json report (ParseAgentReport, with the proposals
// it holds checked by the campaign's action rules), and the propose answer's array
// (ExtractJsonArray + ParseProposals). Errors and rejections must be one line.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_util.h"
#include "specialists/agent_report.h"
#include "specialists/llm_answer.h"

namespace {

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

void CheckRejected(const std::vector<std::string>& rejected, const char* what) {
  for (const std::string& r : rejected) arbor::fuzz::CheckOneLine(r, what);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace arbor;
  std::string_view content(reinterpret_cast<const char*>(data), size);
  Result<LlmAnswer> answer = ParseLlmAnswer(content);
  if (fuzz::CheckResult(answer, "ParseLlmAnswer")) {
    for (const FileBlock& f : answer->files) {
      fuzz::Require(!f.path.empty(), "ParseLlmAnswer", "a file block without a path");
    }
    if (!answer->report_json.empty()) {
      Result<AgentReport> report =
          ParseAgentReport(answer->report_json, KnownSpec(), {"kernel.old"}, "fuzz");
      if (fuzz::CheckResult(report, "ParseAgentReport")) {
        CheckRejected(report->rejected, "ParseAgentReport rejected");
      }
    }
  }
  std::vector<ActionSpec> accepted;
  std::vector<std::string> rejected;
  Status s = ParseProposals(ExtractJsonArray(content), KnownSpec(), {"kernel.old"}, "fuzz", 4,
                            &accepted, &rejected);
  if (fuzz::CheckResult(s, "ParseProposals")) CheckRejected(rejected, "ParseProposals rejected");
  fuzz::Require(accepted.size() <= 4, "ParseProposals", "more proposals than max");
  return 0;
}

// FailedRunText, FailedRunJson and TailText (declared in report/views.h).
#include <string>

#include "report/views.h"

namespace arbor {

std::string TailText(std::string_view title, const std::vector<std::string>& lines,
                     std::string_view indent) {
  std::string out(indent);
  out += title;
  if (lines.empty()) return out + ": (empty)\n";
  out += " (last " + std::to_string(lines.size()) + " lines):\n";
  for (const std::string& line : lines) {
    out += indent;
    out += "  | " + line + "\n";
  }
  return out;
}

std::string FailedRunText(const FailedRun& run, std::string_view indent) {
  std::string out(indent);
  out += "failed run  " + run.label;
  if (!run.exit.empty()) out += " (" + run.exit + ")";
  out += "\n";
  out += indent;
  out += "  logs      " + run.dir + "/stdout, " + run.dir + "/stderr\n";
  const std::string inner = std::string(indent) + "  ";
  out += TailText("stdout", run.out, inner);
  out += TailText("stderr", run.err, inner);
  return out;
}

nlohmann::json FailedRunJson(const FailedRun& run) {
  return {{"label", run.label},
          {"exit", run.exit.empty() ? nlohmann::json(nullptr) : nlohmann::json(run.exit)},
          {"dir", run.dir},
          {"stdout", {{"path", run.dir + "/stdout"}, {"tail", run.out}}},
          {"stderr", {{"path", run.dir + "/stderr"}, {"tail", run.err}}}};
}

}  // namespace arbor

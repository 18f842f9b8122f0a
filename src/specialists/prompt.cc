#include "specialists/prompt.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <utility>

#include "exec/runner.h"
#include "util/strings.h"

namespace arbor {

namespace {

constexpr size_t kMaxSkillBytes = size_t{1} << 20;
constexpr size_t kProfileComponents = 10;

std::string Percent(double share) { return FormatDouble(share * 100, 3) + "%"; }

// Markdown sections in a fixed order; an empty section is left out.
class Document {
 public:
  void Section(std::string_view title, std::string_view body) {
    std::string text = Trim(body);
    if (text.empty()) return;
    if (!out_.empty()) out_ += "\n";
    out_ += "## " + std::string(title) + "\n\n" + text + "\n";
  }
  void List(std::string_view title, const std::vector<std::string>& items) {
    std::string body;
    for (const std::string& item : items) {
      std::string line = Trim(item);
      if (!line.empty()) body += "- " + line + "\n";
    }
    Section(title, body);
  }
  std::string Take() { return std::move(out_); }

 private:
  std::string out_;
};

std::string Code(std::string_view s) { return "`" + std::string(s) + "`"; }

// The largest components first (ties in profile order), with their shares.
std::string ProfileBody(const std::optional<Profile>& profile) {
  if (!profile || profile->components.empty()) return "";
  std::vector<Component> components = profile->components;
  std::stable_sort(components.begin(), components.end(),
                   [](const Component& a, const Component& b) { return a.share > b.share; });
  std::string body;
  if (profile->total_s > 0) body += "End-to-end: " + FormatDouble(profile->total_s, 4) + " s\n\n";
  for (size_t i = 0; i < components.size() && i < kProfileComponents; ++i) {
    const Component& c = components[i];
    body += "- " + c.name + (c.layer.empty() ? "" : " (" + c.layer + ")") + ": " +
            Percent(c.share) + "\n";
  }
  if (components.size() > kProfileComponents) {
    body += "- ... " + std::to_string(components.size() - kProfileComponents) + " more\n";
  }
  return body;
}

std::string System(std::string_view protocol, std::string_view skill) {
  std::string system = Trim(protocol) + "\n";
  if (std::string hard = Trim(skill); !hard.empty()) system += "\n" + hard + "\n";
  return system;
}

// The sections both prompts share, after the task: what the campaign knows so far.
void Context(const TaskContext& c, Document* doc) {
  doc->Section("Hardware", c.hardware);
  doc->Section("Profile", ProfileBody(c.profile));
  doc->List("Kept path", c.kept_path);
  doc->List("Lessons from earlier campaigns", c.lessons);
  doc->List("Failures — do not repeat", c.failures);
}

}  // namespace

std::string ComposedPrompt::Text() const {
  std::string text = "# system\n\n" + system;
  if (!text.empty() && text.back() != '\n') text += '\n';
  text += "\n# user\n\n" + user;
  if (text.back() != '\n') text += '\n';
  return text;
}

std::vector<std::string> SkillDirs(const CampaignSpec& spec) {
  std::vector<std::string> candidates;
  if (!spec.skills_dir.empty()) candidates.push_back(spec.skills_dir);
  if (const char* env = std::getenv("ARBOR_SKILLS_DIR"); env != nullptr && *env != '\0') {
    candidates.emplace_back(env);
  }
#ifdef ARBOR_SKILLS_DIR_DEFAULT
  candidates.emplace_back(ARBOR_SKILLS_DIR_DEFAULT);
#endif
  std::vector<std::string> dirs;
  for (const std::string& dir : candidates) {
    std::error_code ec;
    if (!std::filesystem::is_directory(dir, ec)) continue;
    if (std::find(dirs.begin(), dirs.end(), dir) == dirs.end()) dirs.push_back(dir);
  }
  return dirs;
}

Result<std::string> LoadSkill(const std::vector<std::string>& dirs, const std::string& name) {
  // Domains are names ([A-Za-z0-9._-]+); anything else could leave the skills folder.
  bool safe = !name.empty() && name.find('/') == std::string::npos && name.find("..") == name.npos;
  if (!safe) return MakeError("skill name '" + name + "' is not a domain name");
  for (const std::string& dir : dirs) {
    std::string path = (std::filesystem::path(dir) / (name + ".md")).string();
    std::error_code ec;
    if (!std::filesystem::is_regular_file(path, ec)) continue;
    return ReadFileBounded(path, kMaxSkillBytes);
  }
  return MakeError(
      "skill '" + name + ".md' not found in " +
      (dirs.empty() ? std::string("any skills folder (none exists)") : Join(dirs, ", ")) +
      "; expected it in the campaign's skills/, $ARBOR_SKILLS_DIR or Arbor's skills/");
}

ComposedPrompt ComposeImplement(const Task& task, std::string_view protocol, std::string_view skill,
                                std::string_view answer_format) {
  const TaskContext& c = task.context;
  std::string task_body;
  if (task.action != nullptr) {
    const ActionSpec& a = *task.action;
    task_body += "Action: " + Code(a.id);
    if (!task.value.empty()) task_body += " with value " + Code(task.value);
    task_body += "\n";
    task_body += "Layer: " + a.layer + (a.category.empty() ? "" : ", category: " + a.category);
    task_body += "\n";
  }
  if (!c.domain.empty()) task_body += "Domain: " + c.domain + "\n";
  if (!c.goal.empty()) {
    std::string goal = task.value.empty() ? c.goal : ReplaceAll(c.goal, "{value}", task.value);
    task_body += "\nGoal: " + Trim(goal) + "\n";
  }
  if (!c.targets.empty()) {
    task_body += "\nTargeted components:\n";
    for (const std::string& t : c.targets) task_body += "- " + t + "\n";
  } else if (task.action != nullptr && !task.action->targets.empty()) {
    task_body += "\nTargets: " + Join(task.action->targets, ", ") + "\n";
  }
  Document doc;
  doc.Section("Task", task_body);
  Context(c, &doc);
  doc.List("Active constraints", c.constraints);
  doc.Section("Answer format", answer_format);
  return {System(protocol, skill), doc.Take()};
}

ComposedPrompt ComposePropose(const ProposeRequest& request, std::string_view protocol,
                              std::string_view skill, std::string_view answer_format) {
  const TaskContext& c = request.context;
  std::string ask = "Propose at most " + std::to_string(request.max_actions) +
                    " new candidate actions for the " + Code(request.domain) +
                    " domain: the changes most likely to speed up the workload below.\n";
  std::vector<std::string> known = request.known;
  std::sort(known.begin(), known.end());
  if (!known.empty()) {
    ask +=
        "\nAction ids already in the campaign (use new ones; requires/conflicts may name "
        "them): " +
        Join(known, ", ") + "\n";
  }
  Document doc;
  doc.Section("Request", ask);
  Context(c, &doc);
  doc.List("Already tried", request.tried);
  doc.List("Active constraints", c.constraints);
  doc.Section("Answer format", answer_format);
  return {System(protocol, skill), doc.Take()};
}

}  // namespace arbor

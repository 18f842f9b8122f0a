#include "config/executor_loader.h"

#include "config/values.h"
#include "util/strings.h"

namespace arbor::config_internal {

namespace {

// Slurm options whose values Arbor sets itself: an `extra` one would silently change how a job
// is found, where it runs or what it inherits.
constexpr const char* kOwnOptions[] = {"--job-name", "-J",       "--chdir",
                                       "-D",         "--export", "--comment"};

bool IsOwnOption(const std::string& option) {
  for (const char* own : kOwnOptions) {
    std::string_view o(own);
    if (option == o || (StartsWith(option, o) && option.size() > o.size() &&
                        (option[o.size()] == '=' || o.size() == 2))) {
      return true;
    }
  }
  return false;
}

// `extra`: one Slurm option per item, none of those Arbor sets itself.
Status ReadExtra(const Section& s, std::vector<std::string>* out) {
  std::vector<std::string> extra;
  ARBOR_TRY(s.ReadStringArray("extra", &extra));
  if (const toml::node* node = s.Get("extra")) {
    const toml::array& items = *node->as_array();
    for (size_t i = 0; i < extra.size(); ++i) {
      std::string path = s.KeyPath("extra") + "[" + std::to_string(i) + "]";
      if (!StartsWith(extra[i], "-") || extra[i].find_first_of(" \t\n") != std::string::npos) {
        return s.Invalid(*items.get(i), path,
                         "; expected one srun option per item, like \"--qos=high\"");
      }
      if (IsOwnOption(extra[i])) {
        return s.Invalid(*items.get(i), path,
                         ": Arbor sets this option itself (it names, places and finds the job)");
      }
    }
  }
  *out = std::move(extra);
  return {};
}

constexpr const char* kRoles[] = {"build", "check", "bench", "profile"};

// [executor.<role>]: that kind of job's own hardware. A string key set to "" drops [executor]'s
// option (builds without the benchmarks' `gres`, say).
Status ReadRole(const Section& parent, const std::string& role, ExecutorSpec* e) {
  const toml::table* table = nullptr;
  ARBOR_TRY(parent.GetTable(role, &table));
  if (table == nullptr) return {};
  Section s(parent.file(), *table, "executor." + role, "in [executor." + role + "]");
  ARBOR_TRY(s.CheckKeys(
      {"partition", "account", "time_limit", "queue_timeout", "gres", "constraint", "extra"}));
  ExecutorSpec::RoleOptions r;
  const std::pair<const char*, std::optional<std::string>*> strings[] = {
      {"partition", &r.partition},
      {"account", &r.account},
      {"gres", &r.gres},
      {"constraint", &r.constraint}};
  for (const auto& [key, out] : strings) {
    if (s.Get(key) == nullptr) continue;
    std::string value;
    ARBOR_TRY(s.ReadString(key, &value));
    *out = value;
  }
  ARBOR_TRY(s.ReadDuration("time_limit", Section::Zero::kRejected, &r.time_limit_s));
  ARBOR_TRY(s.ReadDuration("queue_timeout", Section::Zero::kRejected, &r.queue_timeout_s));
  ARBOR_TRY(ReadExtra(s, &r.extra));
  e->roles[role] = std::move(r);
  return {};
}

}  // namespace

Status ReadExecutor(const Section& root, const std::string& base_dir, CampaignSpec* spec) {
  const toml::table* table = nullptr;
  ARBOR_TRY(root.GetTable("executor", &table));
  if (table == nullptr) return {};
  Section s(root.file(), *table, "executor", "in [executor]");
  ARBOR_TRY(s.CheckKeys({"kind", "partition", "account", "time_limit", "queue_timeout", "gres",
                         "constraint", "extra", "exclusive_bench", "shared_dir", "build", "check",
                         "bench", "profile"}));
  ExecutorSpec& e = spec->executor;
  std::string kind = "local";
  ARBOR_TRY(s.ReadString("kind", &kind));
  if (kind != "local" && kind != "slurm") {
    return s.Invalid(*s.Get("kind"), "executor.kind", "; expected \"local\" or \"slurm\"");
  }
  e.kind = kind == "slurm" ? ExecutorSpec::Kind::kSlurm : ExecutorSpec::Kind::kLocal;
  if (e.kind == ExecutorSpec::Kind::kSlurm && spec->target.serve.enabled()) {
    // The server would run here and its benchmark on a compute node.
    return s.AtKey("kind",
                   "[target.serve] runs its server on this machine and cannot serve Slurm "
                   "jobs; expected kind = \"local\" with [target.serve]");
  }
  if (e.kind == ExecutorSpec::Kind::kLocal) {
    for (const char* key :
         {"partition", "account", "time_limit", "queue_timeout", "gres", "constraint", "extra",
          "exclusive_bench", "shared_dir", "build", "check", "bench", "profile"}) {
      if (s.Get(key) != nullptr) {
        return s.AtKey(key, "executor." + std::string(key) +
                                " applies to Slurm jobs only; expected kind = \"slurm\" with it");
      }
    }
    return {};
  }
  ARBOR_TRY(s.ReadNonEmptyString("partition", &e.partition));
  ARBOR_TRY(s.ReadNonEmptyString("account", &e.account));
  ARBOR_TRY(s.ReadNonEmptyString("gres", &e.gres));
  ARBOR_TRY(s.ReadNonEmptyString("constraint", &e.constraint));
  ARBOR_TRY(s.ReadDuration("time_limit", Section::Zero::kRejected, &e.time_limit_s));
  ARBOR_TRY(s.ReadDuration("queue_timeout", Section::Zero::kRejected, &e.queue_timeout_s));
  ARBOR_TRY(s.ReadBool("exclusive_bench", &e.exclusive_bench));
  ARBOR_TRY(ReadExtra(s, &e.extra));
  for (const char* role : kRoles) ARBOR_TRY(ReadRole(s, role, &e));
  ARBOR_TRY(s.Require("shared_dir",
                      "the folder every compute node sees at the same path, holding the "
                      "campaign's workspace"));
  std::string shared;
  ARBOR_TRY(s.ReadNonEmptyString("shared_dir", &shared));
  e.shared_dir = ResolvePath(base_dir, shared);
  const std::string& ws = spec->workspace;
  bool under = ws == e.shared_dir || e.shared_dir == "/" || StartsWith(ws, e.shared_dir + "/");
  if (!under) {
    return s.Invalid(*s.Get("shared_dir"), "executor.shared_dir",
                     ": the workspace " + ws +
                         " (its worktrees and run folders) is not under it; compute nodes must "
                         "see them at the same path");
  }
  return {};
}

}  // namespace arbor::config_internal

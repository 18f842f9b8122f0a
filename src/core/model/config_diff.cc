#include "core/model/config_diff.h"

#include <algorithm>

#include "util/strings.h"

namespace arbor {
namespace {

// First match wins; '*' matches any run of characters, dots included. A key no rule names is
// refused: a setting added to the campaign file without a rule here is treated as one that
// changes what is measured until someone decides otherwise.
struct Rule {
  const char* pattern;
  ChangeVerdict on_added;  // the setting (an action, a value, a variable) appears
  ChangeVerdict on_other;  // it changes or disappears
};
constexpr ChangeVerdict kApplied = ChangeVerdict::kApplied;
constexpr ChangeVerdict kRefused = ChangeVerdict::kRefused;
const Rule kRules[] = {
    // What runs and how its output is read: the meaning of every sample taken so far.
    {"campaign.seed", kRefused, kRefused},  // the gate's draws: a resume decides as before
    {"target.build", kRefused, kRefused},
    {"target.check", kRefused, kRefused},
    {"target.bench", kRefused, kRefused},
    {"target.profile", kRefused, kRefused},
    {"target.env.*", kRefused, kRefused},
    {"target.pass_env", kRefused, kRefused},
    {"target.serve.command", kRefused, kRefused},  // what the benchmark talks to
    // Timeouts and limits decide whether a command may finish, not what it measures.
    {"target.*", kApplied, kApplied},
    {"executor.*time_limit", kApplied, kApplied},
    {"executor.*queue_timeout", kApplied, kApplied},
    {"executor.*account", kApplied, kApplied},
    {"executor.shared_dir", kApplied, kApplied},
    {"executor.*", kRefused, kRefused},  // the machine the benchmark runs on
    {"metric.target", kApplied, kApplied},
    {"metric.repetitions", kApplied, kApplied},
    {"metric.*", kRefused, kRefused},
    {"accuracy.max_drop", kApplied, kApplied},
    {"accuracy.*", kRefused, kRefused},
    {"profile.*", kRefused, kRefused},
    // How the search goes on from what was measured.
    {"search.*", kApplied, kApplied},
    {"critic.*", kApplied, kApplied},
    {"kb.*", kApplied, kApplied},
    {"llm.*", kApplied, kApplied},
    {"secrets.*", kApplied, kApplied},
    {"specialists.*", kApplied, kApplied},
    {"campaign.skills_dir", kApplied, kApplied},
    // An action's nodes were measured doing what it did: new actions and values are new
    // candidates, a changed or removed one would leave nodes no declared action explains.
    {"action.*.apply", kApplied, kRefused},
    {"action.*.value.*", kApplied, kRefused},
    {"action.*", kApplied, kApplied},  // priors, targets, requires/conflicts: future choices
};

// The action a key of ActionSpec's settings belongs to, when `key` is its "apply" entry.
std::optional<std::string> ActionOfApply(std::string_view key) {
  if (!StartsWith(key, "action.") || !EndsWith(key, ".apply")) return std::nullopt;
  return std::string(key.substr(7, key.size() - 7 - 6));
}

std::string Describe(const ConfigChange& c) {
  const bool whole = StartsWith(c.key, "action ");
  switch (c.kind) {
    case ChangeKind::kAdded:
      return whole || c.after.empty() ? c.key + " added" : c.key + " added (" + c.after + ")";
    case ChangeKind::kRemoved:
      return whole || c.before.empty() ? c.key + " removed"
                                       : c.key + " removed (was " + c.before + ")";
    case ChangeKind::kChanged:
      return c.key + " " + c.before + " → " + c.after;
  }
  return c.key;
}

}  // namespace

bool ConfigDiff::refused() const {
  return std::any_of(changes.begin(), changes.end(),
                     [](const ConfigChange& c) { return c.verdict == ChangeVerdict::kRefused; });
}

ChangeVerdict VerdictFor(std::string_view key, ChangeKind kind) {
  for (const Rule& r : kRules) {
    if (GlobMatch(r.pattern, key)) return kind == ChangeKind::kAdded ? r.on_added : r.on_other;
  }
  return kRefused;
}

ConfigDiff DiffConfig(const Config& before, const Config& after) {
  std::vector<ConfigChange> raw;
  size_t i = 0;
  size_t j = 0;
  while (i < before.size() || j < after.size()) {
    ConfigChange c;
    if (j == after.size() || (i < before.size() && before[i].key < after[j].key)) {
      c = {before[i].key, ChangeKind::kRemoved, before[i].value, ""};
      ++i;
    } else if (i == before.size() || after[j].key < before[i].key) {
      c = {after[j].key, ChangeKind::kAdded, "", after[j].value};
      ++j;
    } else {
      c = {after[j].key, ChangeKind::kChanged, before[i].value, after[j].value};
      ++i;
      ++j;
      if (c.before == c.after) continue;
    }
    c.verdict = VerdictFor(c.key, c.kind);
    raw.push_back(std::move(c));
  }
  // An action added or removed as a whole is one change, not one per setting.
  std::vector<std::string> whole;  // "action.<id>." of those
  ConfigDiff diff;
  for (const ConfigChange& c : raw) {
    auto id = ActionOfApply(c.key);
    if (id && c.kind != ChangeKind::kChanged) {
      whole.push_back("action." + *id + ".");
      diff.changes.push_back({"action " + *id, c.kind, c.before, c.after, c.verdict});
    }
  }
  for (const ConfigChange& c : raw) {
    bool covered = std::any_of(whole.begin(), whole.end(), [&](const std::string& p) {
      return StartsWith(c.key, p) && c.kind != ChangeKind::kChanged;
    });
    if (!covered) diff.changes.push_back(c);
  }
  std::stable_sort(diff.changes.begin(), diff.changes.end(),
                   [](const ConfigChange& a, const ConfigChange& b) { return a.key < b.key; });
  return diff;
}

std::string DescribeChanges(const ConfigDiff& diff, ChangeVerdict verdict) {
  std::vector<std::string> parts;
  for (const ConfigChange& c : diff.changes) {
    if (c.verdict == verdict) parts.push_back(Describe(c));
  }
  return Join(parts, "; ");
}

std::string RefusalMessage(const std::string& campaign, const ConfigDiff& diff) {
  std::string applied = DescribeChanges(diff, ChangeVerdict::kApplied);
  return "the campaign file changes what campaign '" + campaign +
         "' measured, so its nodes and the next ones could not be compared: " +
         DescribeChanges(diff, ChangeVerdict::kRefused) +
         (applied.empty() ? "" : " (also changed, which it could take: " + applied + ")") +
         ". Nothing was run. To go on, either start it over under the same name with `arbor run "
         "--restart` (its state is archived under .arbor/, nothing is deleted), or give the "
         "campaign a new name ([campaign] name); undoing the change continues it";
}

}  // namespace arbor

// What a campaign ran with last time against what its campaign file says now.
//
// Each run records the campaign's settings in canonical form (ConfigOf: one entry per setting,
// keyed as the campaign file names it — "search.max_nodes", "target.env.CFLAGS",
// "action.<id>.apply" — valued as the file would show it). The next run compares them with the
// file's (DiffConfig) and gives each difference a verdict:
//   applied  budgets, critic thresholds, search knobs, timeouts and limits, specialists, the
//            knowledge base, an action's priors, new actions and new values: what a continuing
//            campaign can take without anything it measured losing its meaning;
//   refused  the target's commands and environment, the metric and its guards, where the
//            benchmark runs, how profiles are read, the seed, what an action does, a removed
//            action or value: what would make the nodes measured so far incomparable with the
//            next ones.
// The rules are one table in config_diff.cc (kRules), the settings are written in
// config_of.cc; docs/cli.md, "A changed campaign file".
// Pure: no I/O, no clock.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/model/spec.h"

namespace arbor {

struct ConfigEntry {
  std::string key;
  std::string value;
  bool operator==(const ConfigEntry&) const = default;
};
using Config = std::vector<ConfigEntry>;  // sorted by key, keys unique

// The settings of `spec` (paths inside the workspace relative to it, so a moved checkout
// compares equal). Neither the name (the store is found by it) nor --no-critic (checked on its
// own: a campaign keeps one measurement protocol) is among them.
Config ConfigOf(const CampaignSpec& spec);
// One entry per line, as CampaignMeta::config stores it; Decode gives nullopt for text it did
// not write.
std::string EncodeConfig(const Config& config);
std::optional<Config> DecodeConfig(std::string_view text);

enum class ChangeKind { kAdded, kRemoved, kChanged };
enum class ChangeVerdict { kApplied, kRefused };

struct ConfigChange {
  // A setting's key, or "action <id>" for an action added or removed as a whole.
  std::string key;
  ChangeKind kind = ChangeKind::kChanged;
  std::string before;  // "" when added
  std::string after;   // "" when removed
  ChangeVerdict verdict = ChangeVerdict::kRefused;
};

struct ConfigDiff {
  std::vector<ConfigChange> changes;  // in key order
  bool empty() const { return changes.empty(); }
  bool refused() const;
};

// The verdict of a change of `key` (a setting's key) of this kind: the first rule of kRules
// whose pattern matches, refused when none does.
ChangeVerdict VerdictFor(std::string_view key, ChangeKind kind);
ConfigDiff DiffConfig(const Config& before, const Config& after);

// The changes with `verdict`, "; "-separated: `search.max_nodes 10 → 14; action x added`.
std::string DescribeChanges(const ConfigDiff& diff, ChangeVerdict verdict);
// The one-line refusal of a run whose campaign file changes what `campaign` measured: every
// change, and the two ways on (`arbor run --restart`, or a new campaign name).
std::string RefusalMessage(const std::string& campaign, const ConfigDiff& diff);

}  // namespace arbor

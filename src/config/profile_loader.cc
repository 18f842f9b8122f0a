#include "config/profile_loader.h"

#include <string>
#include <vector>

#include "util/strings.h"

namespace arbor::config_internal {
namespace {

// The names of ProfileFormat in the campaign file (formats/importers.h uses the same words).
constexpr struct {
  const char* name;
  ProfileFormat format;
} kFormats[] = {
    {"auto", ProfileFormat::kAuto},           {"arbor", ProfileFormat::kArbor},
    {"perf", ProfileFormat::kPerf},           {"chrome-trace", ProfileFormat::kChromeTrace},
    {"callgrind", ProfileFormat::kCallgrind}, {"collapsed", ProfileFormat::kCollapsed}};

Status ReadFormat(const Section& s, ProfileFormat* out) {
  const toml::node* node = s.Get("format");
  if (node == nullptr) return {};
  std::string name;
  ARBOR_TRY(s.ReadString("format", &name));
  for (const auto& entry : kFormats) {
    if (name == entry.name) {
      *out = entry.format;
      return {};
    }
  }
  return s.Invalid(*node, "profile.format",
                   "; expected \"arbor\", \"perf\", \"chrome-trace\", \"callgrind\", "
                   "\"collapsed\" or \"auto\"");
}

Status ReadTracks(const Section& s, TraceTracks* out) {
  const toml::node* node = s.Get("tracks");
  if (node == nullptr) return {};
  std::string name;
  ARBOR_TRY(s.ReadString("tracks", &name));
  if (name == "all") {
    *out = TraceTracks::kAll;
  } else if (name == "cpu") {
    *out = TraceTracks::kCpu;
  } else if (name == "gpu") {
    *out = TraceTracks::kGpu;
  } else {
    return s.Invalid(*node, "profile.tracks", "; expected \"all\", \"cpu\" or \"gpu\"");
  }
  return {};
}

Status ReadProfileFile(const Section& s, std::string* out) {
  ARBOR_TRY(s.ReadNonEmptyString("profile_file", out));
  size_t dollar = out->find('$');
  if (dollar == std::string::npos) return {};
  if (dollar == 0 && (StartsWith(*out, "$ARBOR_OUT/") || StartsWith(*out, "${ARBOR_OUT}/")) &&
      out->find('$', 1) == std::string::npos) {
    return {};
  }
  return s.Invalid(*s.Get("profile_file"), "profile.profile_file",
                   "; expected a path relative to the worktree, an absolute path, or "
                   "\"$ARBOR_OUT/NAME\" (no other variable is expanded)");
}

Status ReadGroups(const Section& profile, std::vector<ProfileGroup>* groups) {
  std::vector<const toml::table*> tables;
  ARBOR_TRY(profile.GetTableArray("group", &tables));
  for (const toml::table* table : tables) {
    Section s(profile.file(), *table, "profile.group", "in [[profile.group]]");
    ARBOR_TRY(s.CheckKeys({"name", "match", "layer"}));
    ARBOR_TRY(s.Require("name", "a component name like \"matmul\""));
    ARBOR_TRY(s.Require("match", "globs of raw names like [\"*gemm*\"]"));
    ProfileGroup group;
    ARBOR_TRY(s.ReadNonEmptyString("name", &group.name));
    const toml::node* name = s.Get("name");
    if (group.name == "other") {
      return s.Invalid(*name, "profile.group.name",
                       ": \"other\" is reserved for unmatched time; expected another name");
    }
    for (const ProfileGroup& other : *groups) {
      if (other.name == group.name) {
        return s.Invalid(*name, "profile.group.name",
                         ": declared twice; expected a unique name per group");
      }
    }
    ARBOR_TRY(s.ReadStringArray("match", &group.match));
    if (group.match.empty()) {
      return s.At(*s.Get("match"),
                  "profile.group.match is empty; expected at least one glob like \"*gemm*\"");
    }
    ARBOR_TRY(s.ReadString("layer", &group.layer));
    groups->push_back(std::move(group));
  }
  return {};
}

}  // namespace

Status ReadProfile(const Section& root, ProfileSpec* profile) {
  const toml::table* table = nullptr;
  ARBOR_TRY(root.GetTable("profile", &table));
  if (table == nullptr) return {};
  Section s(root.file(), *table, "profile", "in [profile]");
  ARBOR_TRY(s.CheckKeys({"format", "profile_file", "top_n", "tracks", "group"}));
  ARBOR_TRY(ReadFormat(s, &profile->format));
  ARBOR_TRY(ReadProfileFile(s, &profile->profile_file));
  ARBOR_TRY(s.ReadInt("top_n", 1, 1000, &profile->top_n));
  ARBOR_TRY(ReadTracks(s, &profile->tracks));
  return ReadGroups(s, &profile->groups);
}

}  // namespace arbor::config_internal

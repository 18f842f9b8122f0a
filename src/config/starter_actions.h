// The starter action catalogue (actions/*.toml, compiled in: config/embedded_text.h), written
// into a campaign file by `arbor init --detect` for what was detected.
//
// RenderStarterActions is pure: it takes what the caller found on the machine (libraries,
// commands, features) and returns the [[action]] blocks that apply, with their comments, the
// `#@` directives resolved (actions/README.md): a block for another build system is left out,
// one whose needs are not met is written commented out with the reason, placeholders are
// filled in, and `conflicts` entries naming a block that is not active are dropped, so the
// text always loads.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace arbor {

enum class BuildSystem { kCMake, kMeson, kMake, kCargo, kPython };

// "cmake", "meson", "make", "cargo", "python" (the names `#@ systems` uses).
std::string_view BuildSystemName(BuildSystem system);
std::optional<BuildSystem> ParseBuildSystem(std::string_view name);

struct StarterContext {
  BuildSystem system = BuildSystem::kCMake;
  std::set<std::string> features;                   // "openmp", "thp"
  std::map<std::string, std::string> libraries;     // soname found -> its path
  std::set<std::string> commands;                   // commands found on PATH
  std::map<std::string, std::string> placeholders;  // "OPT_LEVELS" -> "[\"2\", \"s\"]"
};

struct StarterActions {
  std::string text;                  // the blocks, ready to append to a campaign file
  std::vector<std::string> ids;      // the actions written active
  std::vector<std::string> skipped;  // "allocator.jemalloc: libjemalloc.so.2 is not ..."
};

// Every library (soname) and command a catalogue action needs (`#@ needs lib|cmd`): what the
// caller looks for on the machine.
std::vector<std::string> StarterNeededLibraries();
std::vector<std::string> StarterNeededCommands();

// The catalogue files written for `system` ("c-cxx.toml", "runtime.toml", ...);
// `c_extensions`: a Python package that compiles C or C++.
std::vector<std::string> StarterFilesFor(BuildSystem system, bool c_extensions);

// The blocks of `files` (names of embedded catalogue files) for `ctx`. An unknown file, a
// malformed directive or a placeholder the context does not fill is an Error (a bug in the
// catalogue or the caller, which the tests catch).
Result<StarterActions> RenderStarterActions(const std::vector<std::string>& files,
                                            const StarterContext& ctx);

}  // namespace arbor

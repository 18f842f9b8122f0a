// Detection's parts (config/detect.h): what each build system's files say.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "config/detect.h"

namespace arbor::detect {

// A benchmark found in the repository, or the user's.
struct Bench {
  enum class Kind { kGoogleBenchmark, kPytestBenchmark, kHyperfine, kWrk, kFio, kWallTime };
  Kind kind = Kind::kWallTime;
  std::string command;  // as run in the node's worktree, without $RUN_PREFIX
  std::string what;     // "Google Benchmark executable tiny_bench (bench/CMakeLists.txt)"
};

// What one build system's files say.
struct Plan {
  BuildSystem system = BuildSystem::kCMake;
  std::string found;       // "CMake (CMakeLists.txt)"
  std::string build;       // the build command, "" for none
  std::string build_note;  // comment lines above it, '\n'-separated
  std::string check;       // the check command
  std::string check_note;
  std::vector<Bench> benches;                     // found, best first
  std::map<std::string, std::string> env;         // the baseline environment
  std::string opt_levels = R"(["2", "3", "s"])";  // levels other than the build's own
  bool openmp = false;
  bool compiler_actions = true;  // c-cxx.toml applies (its flags reach the compiler)
  std::string compiler_note;     // why not, when it does not
  bool c_extensions = false;     // Python: compiles C or C++
};

// The plan of the build system at the top of `repo`, in order of preference; nullopt when
// there is none.
std::optional<Plan> FindPlan(const RepoFiles& repo);

// The files each system reads (for DetectFilesToRead).
bool IsBuildFile(const std::string& path);
bool IsPythonTestFile(const std::string& path);

// A command whose wall time is the metric: prints {"wall_s": ...} on its last line.
std::string WallTimeCommand(const std::string& command);

}  // namespace arbor::detect

// `arbor init --detect`: a campaign file that runs as it is, from what a repository holds.
//
// Detect is a pure function of the repository's file listing, the text of the few files it
// reads (DetectFilesToRead names them), what the caller found on the machine (HostFacts) and
// the user's options. It finds the build system (CMake, Meson, Cargo, Make, a Python package,
// in that order of preference when several are present), derives the build and check commands
// from it, finds a benchmark (a Google Benchmark executable, a bench target, pytest-benchmark
// tests, or the user's --bench command) and a metric that reads it (a preset when the tool has
// one, else the command's wall time), and adds the starter actions that fit
// (config/starter_actions.h). app/init.cc gathers the inputs and writes the file. What it
// writes, build system by build system: docs/cli.md, "arbor init --detect".
#pragma once

#include <map>
#include <set>
#include <string>
#include <vector>

#include "config/starter_actions.h"
#include "util/result.h"

namespace arbor {

struct RepoFiles {
  std::vector<std::string> paths;               // repository-relative, '/'-separated
  std::map<std::string, std::string> contents;  // text of files DetectFilesToRead named
};

struct HostFacts {
  std::map<std::string, std::string> libraries;  // soname -> path, for DetectLibraries()
  std::set<std::string> commands;                // found on PATH, of DetectCommands()
  int cpus = 1;
  std::string thp;  // transparent huge pages: "always", "madvise", "never", "" (unknown)
};

struct DetectOptions {
  std::string name;   // the campaign's name (sanitized by Detect)
  std::string bench;  // --bench: the benchmark command, "" to find one
};

struct Detection {
  BuildSystem system = BuildSystem::kCMake;
  std::string campaign_text;         // the whole campaign file
  std::vector<std::string> found;    // "build: CMake (CMakeLists.txt)", ... for the user
  std::vector<std::string> skipped;  // starter actions left out, with why
  std::vector<std::string> actions;  // starter actions written
};

// The files whose text Detect reads (build files; Python test files), at most kMaxFilesRead.
std::vector<std::string> DetectFilesToRead(const std::vector<std::string>& paths);
inline constexpr size_t kMaxFilesRead = 200;

// What the caller should look for on the machine: the starter actions' libraries (sonames)
// and commands.
std::vector<std::string> DetectLibraries();
std::vector<std::string> DetectCommands();

// The campaign file for the repository, or an Error (exit code unset) saying what is missing:
// no build system at the top of the repository, or no benchmark and no --bench.
Result<Detection> Detect(const RepoFiles& repo, const HostFacts& host,
                         const DetectOptions& options);

// `text` as a TOML string: a basic string with escapes, or a multi-line one when it holds a
// newline.
std::string TomlString(const std::string& text);

}  // namespace arbor

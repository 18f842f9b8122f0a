#include "app/init.h"

#include <sys/utsname.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "arbor/exit_codes.h"
#include "config/detect.h"
#include "config/template.h"
#include "exec/git_cli.h"
#include "exec/runner.h"
#include "util/escape.h"
#include "util/strings.h"

namespace arbor {
namespace {

namespace fs = std::filesystem;

constexpr size_t kMaxReadBytes = size_t{1} << 20;  // per build file detection reads

// The top of the git repository holding `dir`, or an Error (kExitState).
Result<std::string> RepositoryTop(const std::string& dir) {
  Result<CapturedRun> top = RunGitCli("rev-parse --show-toplevel", dir, 60);
  if (!top.ok()) return MakeError("cannot run git: " + top.error().message, kExitState);
  if (!top->result.ok()) {
    return MakeError(dir +
                         " is not in a git repository: `arbor init --detect` reads the "
                         "repository's files (git init, then commit the project)",
                     kExitState);
  }
  return Trim(top->out);
}

Result<std::vector<std::string>> ListFiles(const std::string& top) {
  Result<CapturedRun> ls = RunGitCli("ls-files -z --cached --others --exclude-standard", top, 120);
  if (!ls.ok() || !ls->result.ok()) {
    return MakeError("git ls-files failed in " + top, kExitState);
  }
  std::vector<std::string> files;
  for (const std::string& f : Split(ls->out, '\0')) {
    if (!f.empty()) files.push_back(f);
  }
  return files;
}

// Folders the dynamic loader searches on Debian and most distributions.
std::vector<std::string> LibraryDirs() {
  std::vector<std::string> dirs = {"/usr/local/lib"};
  struct utsname u {};
  if (uname(&u) == 0) {
    const std::string multiarch = std::string(u.machine) + "-linux-gnu";
    dirs.push_back("/usr/lib/" + multiarch);
    dirs.push_back("/lib/" + multiarch);
  }
  for (const char* d : {"/usr/lib64", "/lib64", "/usr/lib", "/lib"}) dirs.emplace_back(d);
  return dirs;
}

bool OnPath(const std::string& command) {
  const char* path = std::getenv("PATH");
  for (const std::string& dir : Split(path != nullptr ? path : "/usr/bin:/bin", ':')) {
    if (dir.empty()) continue;
    const std::string candidate = dir + "/" + command;
    if (access(candidate.c_str(), X_OK) == 0) return true;
  }
  return false;
}

// "madvise" from "always [madvise] never"; "" when unknown.
std::string TransparentHugePages() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string line;
  std::getline(in, line);
  const size_t open = line.find('[');
  const size_t close = line.find(']', open);
  if (open == std::string::npos || close == std::string::npos) return "";
  return line.substr(open + 1, close - open - 1);
}

HostFacts ProbeHost() {
  HostFacts host;
  for (const std::string& lib : DetectLibraries()) {
    for (const std::string& dir : LibraryDirs()) {
      std::error_code ec;
      const std::string path = dir + "/" + lib;
      if (fs::is_regular_file(path, ec)) {
        host.libraries[lib] = path;
        break;
      }
    }
  }
  for (const std::string& cmd : DetectCommands()) {
    if (OnPath(cmd)) host.commands.insert(cmd);
  }
  const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  host.cpus = cpus > 0 ? static_cast<int>(cpus) : 1;
  host.thp = TransparentHugePages();
  return host;
}

// Lists `relative` (to the repository's top) in .git/info/exclude unless git tracks it or it
// is listed already. Best effort: a failure leaves the file as an untracked one.
void Exclude(const std::string& top, const std::string& relative) {
  Result<CapturedRun> tracked =
      RunGitCli("ls-files --error-unmatch -- " + ShellQuote(relative), top, 60);
  if (tracked.ok() && tracked->result.ok()) return;
  Result<CapturedRun> where = RunGitCli("rev-parse --git-path info/exclude", top, 60);
  if (!where.ok() || !where->result.ok()) return;
  fs::path exclude = Trim(where->out);
  if (exclude.is_relative()) exclude = fs::path(top) / exclude;
  std::string text;
  {
    std::ifstream in(exclude);
    std::stringstream s;
    s << in.rdbuf();
    text = s.str();
  }
  const std::string line = "/" + relative;
  for (const std::string& l : Split(text, '\n')) {
    if (Trim(l) == line) return;
  }
  std::error_code ec;
  fs::create_directories(exclude.parent_path(), ec);
  std::ofstream out(exclude, std::ios::app);
  if (!text.empty() && text.back() != '\n') out << "\n";
  out << "# the campaign file `arbor init` wrote (docs/cli.md); `git add -f` commits it\n"
      << line << "\n";
}

Result<std::string> DetectText(const std::string& top, const std::string& name,
                               const InitOptions& options, std::string* report) {
  RepoFiles repo;
  ARBOR_TRY_ASSIGN(repo.paths, ListFiles(top));
  for (const std::string& p : DetectFilesToRead(repo.paths)) {
    Result<std::string> text = ReadFileBounded(top + "/" + p, kMaxReadBytes);
    if (text.ok()) repo.contents[p] = *text;
  }
  Result<Detection> d = Detect(repo, ProbeHost(), DetectOptions{name, options.bench});
  if (!d.ok()) return MakeError(d.error().message, kExitState);
  std::string r;
  for (const std::string& f : d->found) r += "  " + f + "\n";
  r += "  starter actions: " + std::to_string(d->actions.size()) + " (" + Join(d->actions, ", ") +
       ")\n";
  for (const std::string& s : d->skipped) r += "  left out: " + s + "\n";
  *report = r;
  return d->campaign_text;
}

}  // namespace

Result<std::string> InitCommand(const InitOptions& options) {
  if (!options.bench.empty() && !options.detect) {
    return MakeError("--bench goes with --detect", kExitUsage);
  }
  std::error_code ec;
  if (fs::exists(options.file, ec) && !options.force) {
    return MakeError(options.file + " exists; use --force to overwrite it", kExitUsage);
  }
  const fs::path file = fs::absolute(options.file).lexically_normal();
  const std::string dir = file.parent_path().string();
  const std::string name = SanitizeCampaignName(file.parent_path().filename().string());
  Result<std::string> top = RepositoryTop(dir);
  if (options.detect && !top.ok()) return top.error();
  if (options.detect && fs::weakly_canonical(*top, ec) != fs::weakly_canonical(dir, ec)) {
    return MakeError("--detect writes the campaign file at the top of the repository (" + *top +
                         "), where the build files are: run it there",
                     kExitUsage);
  }

  std::string text = CampaignTemplate(name);
  std::string report;
  if (options.detect) {
    ARBOR_TRY_ASSIGN(text, DetectText(*top, name, options, &report));
  }
  {
    std::ofstream out(file, std::ios::trunc);
    out << text;
    if (!out) return MakeError("cannot write " + options.file, kExitState);
  }
  if (top.ok()) {
    const fs::path relative =
        fs::weakly_canonical(file, ec).lexically_relative(fs::weakly_canonical(*top, ec));
    if (!relative.empty() && !StartsWith(relative.string(), "..")) Exclude(*top, relative.string());
  }
  if (options.detect) {
    return "wrote " + options.file + " from what the repository holds:\n" + report +
           "next steps\n"
           "  1. arbor try    runs each command once as a campaign would and shows what it "
           "printed\n"
           "  2. arbor run    starts the campaign (" +
           options.file + " is listed in .git/info/exclude: the workspace stays clean)\n";
  }
  return "wrote " + options.file + ": next steps\n" +
         "  1. edit the [target] commands, the [metric] and the [[action]] list\n" +
         "  2. arbor try    runs each command once as a campaign would, shows what it printed\n" +
         "                 and the metric read from it, and stores nothing\n" +
         "  3. arbor run    once `arbor try` says ready\n";
}

}  // namespace arbor

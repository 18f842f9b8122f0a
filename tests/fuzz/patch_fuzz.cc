// Fuzzes the patch parser and policy (exec/patch_policy.h): ParsePatch, then CheckPatch
// against a worktree holding a symlink and an allowlist, and CheckPaths with every line of the
// input as a path. Every refusal must be a one-line error, never a crash. The worktree is
// only lstat'ed, never written.
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include "exec/patch_policy.h"
#include "fuzz_util.h"

namespace {

// A worktree with src/a.cc, docs/ and a symlink "link" -> src.
const std::string& Worktree() {
  static const std::string dir = [] {
    char tmpl[] = "/tmp/arbor-fuzz-patch-XXXXXX";
    const char* made = mkdtemp(tmpl);
    if (made == nullptr) std::abort();
    std::string d(made);
    if (mkdir((d + "/src").c_str(), 0755) != 0 || mkdir((d + "/docs").c_str(), 0755) != 0 ||
        symlink("src", (d + "/link").c_str()) != 0) {
      std::abort();
    }
    return d;
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace arbor;
  std::string_view diff(reinterpret_cast<const char*>(data), size);
  Result<std::vector<PatchFile>> files = ParsePatch(diff);
  (void)fuzz::CheckResult(files, "ParsePatch");
  PatchPolicy open;
  PatchPolicy narrow;
  narrow.allow = {"src/**", "*.md", "docs/", "link/*"};
  for (const PatchPolicy* policy : {&open, &narrow}) {
    Status s = CheckPatch(diff, Worktree(), *policy);
    if (!s.ok()) fuzz::CheckError(s.error(), "CheckPatch");
    fuzz::Require(files.ok() || !s.ok(), "CheckPatch", "accepted a diff ParsePatch refuses");
  }
  std::vector<std::string> paths;
  size_t begin = 0;
  while (begin <= diff.size() && paths.size() < 64) {
    size_t end = diff.find('\n', begin);
    if (end == std::string_view::npos) end = diff.size();
    paths.emplace_back(diff.substr(begin, end - begin));
    begin = end + 1;
  }
  Status p = CheckPaths(paths, Worktree(), narrow);
  if (!p.ok()) fuzz::CheckError(p.error(), "CheckPaths");
  return 0;
}

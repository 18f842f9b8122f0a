// CheckPatch and the per-path rules (patch_rules.h). The rules run in passes over all files so
// the most telling violation wins: a path's shape first, then symlinks on the way (a patch that
// creates "link" and writes "link/x" is reported as through-symlink, the CVE-2023-23946
// shape), then the kind of file (binary, gitlink, symlink), then the allowlist.
#include "exec/patch_policy.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "exec/patch_rules.h"
#include "util/strings.h"

namespace arbor {
namespace patch_rules {
namespace {

// Byte sequences HFS+ ignores in names (U+200C-200F, U+202A-202E, U+206A-206F, U+FEFF), so
// ".g\u200cit" is ".git" on macOS (CVE-2014-9390).
std::string DropHfsIgnorable(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
    if (i + 2 < s.size() && byte(i) == 0xe2 &&
        ((byte(i + 1) == 0x80 && ((byte(i + 2) >= 0x8c && byte(i + 2) <= 0x8f) ||
                                  (byte(i + 2) >= 0xaa && byte(i + 2) <= 0xae))) ||
         (byte(i + 1) == 0x81 && byte(i + 2) >= 0xaa && byte(i + 2) <= 0xaf))) {
      i += 2;
      continue;
    }
    if (i + 2 < s.size() && byte(i) == 0xef && byte(i + 1) == 0xbb && byte(i + 2) == 0xbf) {
      i += 2;
      continue;
    }
    out += s[i];
  }
  return out;
}

// The component as Windows and macOS would see it: case folded, HFS-ignorable code points
// dropped, trailing dots and spaces removed (NTFS).
std::string Folded(std::string_view component) {
  std::string s = Lower(DropHfsIgnorable(component));
  while (!s.empty() && (s.back() == '.' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return out;
}

Error Violation(std::string_view rule, std::string_view path, std::string_view why) {
  std::string shown = "\"";
  for (char c : path) {
    auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      shown += '\\';
      shown += c;
    } else if (u < 0x20 || u == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\%03o", u);
      shown += buf;
    } else {
      shown += c;
    }
  }
  shown += '"';
  return MakeError("patch policy: " + std::string(rule) + ": " + shown + " " + std::string(why));
}

Status CheckPathShape(const std::string& path) {
  if (path.empty()) return Violation("bad-path", path, "is empty");
  for (char c : path) {
    auto u = static_cast<unsigned char>(c);
    if (c == '\\') return Violation("bad-path", path, "contains a backslash");
    if (u < 0x20 || u == 0x7f) return Violation("bad-path", path, "contains a control character");
  }
  if (path[0] == '/') return Violation("absolute-path", path, "is absolute");
  std::vector<std::string> parts = Split(path, '/');
  for (const std::string& part : parts) {
    if (part == "..") return Violation("path-traversal", path, "leaves the worktree");
  }
  for (const std::string& part : parts) {
    if (part.empty() || part == ".") {
      return Violation("bad-path", path, "has an empty or \".\" component");
    }
    std::string folded = Folded(part);
    if (folded == ".git" || folded == "git~1") {
      return Violation("git-dir", path, "is inside a .git directory");
    }
    if (folded == ".gitmodules" || StartsWith(folded, "gitmod~")) {
      return Violation("submodule", path, "configures submodules (.gitmodules)");
    }
  }
  return {};
}

Status CheckSymlinks(const std::string& worktree, const std::string& path, bool deleted,
                     const std::set<std::string>& new_symlinks) {
  std::vector<std::string> parts = Split(path, '/');
  std::string prefix;
  bool on_disk = true;  // false once a parent does not exist: nothing below it can be a link
  for (size_t i = 0; i + 1 < parts.size(); ++i) {
    prefix += (i ? "/" : "") + parts[i];
    if (new_symlinks.count(Lower(prefix))) {
      return Violation("through-symlink", path,
                       "goes through \"" + prefix + "\", a symlink this patch creates");
    }
    struct stat st {};
    if (on_disk && lstat((worktree + "/" + prefix).c_str(), &st) == 0) {
      if (S_ISLNK(st.st_mode)) {
        return Violation("through-symlink", path,
                         "goes through \"" + prefix + "\", a symlink in the worktree");
      }
    } else {
      on_disk = false;
    }
  }
  struct stat st {};
  if (!deleted && lstat((worktree + "/" + path).c_str(), &st) == 0 && S_ISLNK(st.st_mode)) {
    return Violation("symlink", path, "is a symlink in the worktree");
  }
  return {};
}

Status CheckAllowed(const std::string& path, const PatchPolicy& policy) {
  if (policy.allow.empty()) return {};
  for (std::string glob : policy.allow) {
    if (EndsWith(glob, "/")) glob += "**";
    if (glob.find('/') == std::string::npos) glob = "**/" + glob;
    if (PathGlobMatch(glob, path)) return {};
  }
  return Violation("outside-allowlist", path, "matches none of " + Join(policy.allow, ", "));
}

}  // namespace patch_rules

namespace {

using namespace patch_rules;  // NOLINT(google-build-using-namespace): this file's own rules

// The paths a file section reads or writes: both sides of a rename or copy.
std::vector<std::string> Paths(const PatchFile& f) {
  std::vector<std::string> out;
  if (!f.old_path.empty() || !f.created) out.push_back(f.old_path);
  if (f.new_path != f.old_path && (!f.new_path.empty() || !f.deleted)) out.push_back(f.new_path);
  return out;
}

// binary, submodule and symlink: what kind of file the section writes.
Status CheckKind(const PatchFile& f) {
  const std::string& path = f.new_path.empty() ? f.old_path : f.new_path;
  // A binary patch's content is base85 data we cannot inspect (a gitlink, a symlink target,
  // anything), so it is refused outright; agents can change binaries through a command.
  if (f.binary) return Violation("binary", path, "is a binary patch, which cannot be inspected");
  if (f.old_mode == kGitlinkMode || f.new_mode == kGitlinkMode) {
    return Violation("submodule", path, "is a submodule (gitlink, mode 160000)");
  }
  if (f.subproject_lines) {
    return Violation("submodule", path, "has \"Subproject commit\" lines (a gitlink)");
  }
  if (!f.deleted && f.new_mode == kSymlinkMode) {
    return Violation("symlink", path, "would be a symlink (mode 120000)");
  }
  if (!f.deleted && f.old_mode == kSymlinkMode) {
    return Violation("symlink", path, "changes a symlink (mode 120000)");
  }
  return {};
}

}  // namespace

Status CheckPatch(std::string_view diff, const std::string& worktree, const PatchPolicy& policy) {
  Result<std::vector<PatchFile>> files = ParsePatch(diff);
  if (!files) return MakeError("patch policy: malformed: " + files.error().message);
  if (files->empty()) return MakeError("patch policy: empty-patch: patch changes no file");
  for (const PatchFile& f : *files) {
    for (const std::string& p : Paths(f)) ARBOR_TRY(CheckPathShape(p));
  }
  std::set<std::string> new_symlinks;
  for (const PatchFile& f : *files) {
    if (!f.deleted && f.new_mode == kSymlinkMode) new_symlinks.insert(Lower(f.new_path));
  }
  for (const PatchFile& f : *files) {
    for (const std::string& p : Paths(f)) {
      ARBOR_TRY(CheckSymlinks(worktree, p, f.deleted, new_symlinks));
    }
  }
  for (const PatchFile& f : *files) ARBOR_TRY(CheckKind(f));
  for (const PatchFile& f : *files) {
    for (const std::string& p : Paths(f)) ARBOR_TRY(CheckAllowed(p, policy));
  }
  return {};
}

Status CheckPaths(const std::vector<std::string>& paths, const std::string& worktree,
                  const PatchPolicy& policy) {
  if (paths.empty()) return MakeError("patch policy: empty-patch: no file to write");
  for (const std::string& p : paths) ARBOR_TRY(CheckPathShape(p));
  for (const std::string& p : paths) ARBOR_TRY(CheckSymlinks(worktree, p, false, {}));
  for (const std::string& p : paths) ARBOR_TRY(CheckAllowed(p, policy));
  return {};
}

}  // namespace arbor

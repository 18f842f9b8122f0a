// Test helpers for exec/ tests only: temporary directories and process checks.
#pragma once

#include <dirent.h>
#include <stdlib.h>
#include <sys/types.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <vector>

namespace arbor::test {

// A fresh directory under $TMPDIR (or /tmp), removed with everything in it.
class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl =
        std::string(base != nullptr && *base != '\0' ? base : "/tmp") + "/arbor-test-XXXXXX";
    path_ = mkdtemp(tmpl.data()) != nullptr ? tmpl : "";
  }
  ~TempDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Empty when the file cannot be read: a /proc file of a process that exits while it is read
// fails with ESRCH, which libstdc++'s filebuf throws (once failed a full suite, leaking the
// caller's open DIR*).
inline std::string Slurp(const std::string& path) {
  try {
    std::ifstream in(path, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  } catch (const std::exception&) {
    return {};
  }
}

// True while `pid` exists and is not a zombie.
inline bool Alive(pid_t pid) {
  std::string stat = Slurp("/proc/" + std::to_string(pid) + "/stat");
  size_t paren = stat.rfind(')');
  return paren != std::string::npos && paren + 2 < stat.size() && stat[paren + 2] != 'Z';
}

// Live processes with `arg` as one of their arguments (tests give sleeps unique durations).
inline std::vector<pid_t> ProcessesWithArg(const std::string& arg) {
  std::vector<pid_t> out;
  DIR* dir = opendir("/proc");
  if (dir == nullptr) return out;
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    std::string cmdline = Slurp(std::string("/proc/") + e->d_name + "/cmdline");
    size_t start = 0;
    for (size_t i = 0; i <= cmdline.size(); ++i) {
      if (i == cmdline.size() || cmdline[i] == '\0') {
        if (cmdline.compare(start, i - start, arg) == 0 && Alive(std::atoi(e->d_name))) {
          out.push_back(std::atoi(e->d_name));
        }
        start = i + 1;
      }
    }
  }
  closedir(dir);
  return out;
}

}  // namespace arbor::test

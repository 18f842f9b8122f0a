#include "app/hardware.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "exec/runner.h"
#include "util/escape.h"
#include "util/strings.h"

namespace arbor {
namespace {

// Flags that change which code paths are fast: what makes a result transfer or not.
const std::set<std::string> kIsaFlags = {"sse4_2",   "avx",         "avx2", "avx512f",
                                         "avx512bw", "avx512_vnni", "fma",  "amx_tile",
                                         "asimd",    "sve",         "sve2"};
constexpr double kGpuQueryTimeoutS = 10;

// "key\t\t: value" → (key, value), or nullopt for lines without a colon.
std::optional<std::pair<std::string, std::string>> KeyValue(const std::string& line) {
  size_t colon = line.find(':');
  if (colon == std::string::npos) return std::nullopt;
  return std::pair{Trim(line.substr(0, colon)), Trim(line.substr(colon + 1))};
}

std::string FindOnPath(const std::string& tool) {
  const char* path = std::getenv("PATH");
  if (path == nullptr) return "";
  for (const std::string& dir : Split(path, ':')) {
    if (dir.empty()) continue;
    std::string candidate = dir + "/" + tool;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

// The tool's stdout, or "" when it is missing, fails or times out.
std::string Query(const std::string& tool, const std::string& args) {
  std::string path = FindOnPath(tool);
  if (path.empty()) return "";
  std::map<std::string, std::string> env;
  for (const char* name : {"PATH", "HOME", "LD_LIBRARY_PATH"}) {
    if (const char* v = std::getenv(name); v != nullptr) env[name] = v;
  }
  auto run = RunCaptured(ShellQuote(path) + " " + args, "", env, kGpuQueryTimeoutS);
  if (!run.ok() || !run->result.ok()) return "";
  return run->out;
}

std::string WithCount(const std::string& name, int count) {
  return count > 1 ? name + " x" + std::to_string(count) : name;
}

}  // namespace

void ParseCpuInfo(const std::string& cpuinfo, HardwareSignature* hw) {
  std::map<std::string, std::string> first;  // the first value of each key (CPU 0)
  std::istringstream in(cpuinfo);
  std::string line;
  while (std::getline(in, line)) {
    if (auto kv = KeyValue(line)) first.emplace(kv->first, kv->second);
  }
  hw->cpu_model = "unknown";
  for (const char* key : {"model name", "Model", "Hardware"}) {
    if (auto it = first.find(key); it != first.end() && !it->second.empty()) {
      hw->cpu_model = it->second;
      break;
    }
  }
  hw->isa.clear();
  for (const char* key : {"flags", "Features"}) {
    auto it = first.find(key);
    if (it == first.end()) continue;
    std::istringstream flags(it->second);
    std::string flag;
    while (flags >> flag) {
      if (kIsaFlags.count(flag) != 0) hw->isa.push_back(flag);
    }
  }
  std::sort(hw->isa.begin(), hw->isa.end());
  hw->isa.erase(std::unique(hw->isa.begin(), hw->isa.end()), hw->isa.end());
}

std::string ParseNvidiaSmi(const std::string& out) {
  std::vector<std::string> names;
  for (const std::string& line : Split(out, '\n')) {
    if (std::string name = Trim(line); !name.empty()) names.push_back(name);
  }
  return names.empty() ? "" : WithCount(names.front(), static_cast<int>(names.size()));
}

std::string ParseRocmSmi(const std::string& out) {
  std::string name;
  int count = 0;
  for (const std::string& line : Split(out, '\n')) {
    // "GPU[0]\t\t: Card Series: \t\tAMD Instinct MI300X OAM"
    size_t at = line.find("Card Series:");
    if (at == std::string::npos) at = line.find("Card series:");
    if (at == std::string::npos) continue;
    std::string value = Trim(line.substr(at + 12));
    if (value.empty()) continue;
    if (name.empty()) name = value;
    ++count;
  }
  return name.empty() ? "" : WithCount(name, count);
}

Result<HardwareSignature> DetectHardware() {
  if (const char* forced = std::getenv("ARBOR_HARDWARE"); forced != nullptr && *forced != '\0') {
    auto hw = HardwareSignature::Decode(forced);
    if (!hw) {
      return MakeError(std::string("ARBOR_HARDWARE: cannot parse '") + forced +
                       "' (expected cpu=...;cores=N;isa=a,b;mem=GiB;gpu=...)");
    }
    return *hw;
  }
  HardwareSignature hw;
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::stringstream text;
  text << cpuinfo.rdbuf();
  ParseCpuInfo(text.str(), &hw);
  hw.cores = static_cast<int>(std::max(1L, sysconf(_SC_NPROCESSORS_ONLN)));
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGESIZE);
  if (pages > 0 && page_size > 0) {
    hw.mem_gib = std::round(static_cast<double>(pages) * static_cast<double>(page_size) /
                            (1024.0 * 1024.0 * 1024.0));
  }
  hw.gpu = ParseNvidiaSmi(Query("nvidia-smi", "--query-gpu=name --format=csv,noheader"));
  if (hw.gpu.empty()) hw.gpu = ParseRocmSmi(Query("rocm-smi", "--showproductname"));
  return hw;
}

}  // namespace arbor

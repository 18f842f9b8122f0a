#include "faults_monitor.h"

#include <dirent.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <sstream>

#include "harness.h"

namespace arbor::stress {
namespace {

namespace fs = std::filesystem;

// Every mark "PREFIX<digits>" in `text` (NUL-separated argv or environment).
void FindMarks(const std::string& text, const std::string& prefix, std::vector<std::string>* out) {
  for (size_t pos = text.find(prefix); pos != std::string::npos; pos = text.find(prefix, pos + 1)) {
    size_t end = pos + prefix.size();
    while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
    if (end > pos + prefix.size()) out->push_back(text.substr(pos, end - pos));
  }
}

std::string Printable(std::string s) {
  std::replace(s.begin(), s.end(), '\0', ' ');
  return s.size() > 120 ? s.substr(0, 120) + "..." : s;
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  size_t i = static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5);
  return v[std::min(i, v.size() - 1)];
}

std::string Join(const std::vector<std::string>& v, size_t max) {
  std::string out;
  for (size_t i = 0; i < v.size() && i < max; ++i) out += v[i] + "\n";
  if (v.size() > max) out += "... and " + std::to_string(v.size() - max) + " more\n";
  return out;
}

}  // namespace

std::vector<std::string> Scan::Alive(const std::string& mark) const {
  auto it = by_mark.find(mark);
  return it == by_mark.end() ? std::vector<std::string>{} : it->second;
}

Monitor::Monitor(const std::vector<Fault>& faults) {
  if (!faults.empty()) prefix_ = faults.front().mark.substr(0, faults.front().mark.rfind('-') + 1);
}

Scan Monitor::ScanProcesses() const {
  Scan scan;
  DIR* dir = opendir("/proc");
  if (dir == nullptr) return scan;
  const std::string self = std::to_string(getpid());
  while (dirent* e = readdir(dir)) {
    if (!std::isdigit(static_cast<unsigned char>(e->d_name[0])) || e->d_name == self) continue;
    const std::string base = std::string("/proc/") + e->d_name;
    std::string cmdline = integration::ReadFile(base + "/cmdline");
    std::vector<std::string> marks;
    FindMarks(cmdline, prefix_, &marks);
    FindMarks(integration::ReadFile(base + "/environ"), prefix_, &marks);
    if (marks.empty() || !integration::ProcessAlive(std::atoi(e->d_name))) continue;
    std::sort(marks.begin(), marks.end());
    marks.erase(std::unique(marks.begin(), marks.end()), marks.end());
    for (const std::string& m : marks) {
      scan.by_mark[m].push_back(std::string(e->d_name) + " " + Printable(cmdline));
    }
  }
  closedir(dir);
  return scan;
}

std::vector<std::string> LeftoverCgroups(pid_t arbor_pid) {
  std::vector<std::string> out;
  const std::string name = "arbor-" + std::to_string(arbor_pid) + "-";
  std::error_code ec;
  auto it = fs::recursive_directory_iterator("/sys/fs/cgroup",
                                             fs::directory_options::skip_permission_denied, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    if (it.depth() > 6) it.disable_recursion_pending();
    if (!it->is_directory(ec)) continue;
    if (it->path().filename().string().rfind(name, 0) == 0) out.push_back(it->path().string());
  }
  return out;
}

void Stats::AddLeftovers(const Fault& f, const std::vector<std::string>& procs) {
  kinds_[f.kind].faults += 1;
  kinds_[f.kind].steps[f.step] += 1;
  kinds_[f.kind].leftovers += static_cast<int>(procs.size());
  for (const std::string& p : procs) leftover_details_.push_back(f.Value() + ": " + p);
}

void Stats::AddStatus(bool answered, double latency_s, bool during_fault, const std::string& why) {
  latency_all_.push_back(latency_s);
  if (during_fault) latency_fault_.push_back(latency_s);
  if (!answered) unanswered_.push_back(why.substr(0, 300));
}

void Stats::AddClass(const Fault& f, const std::string& cls, const std::string& detail) {
  ++classified_;
  kinds_[f.kind].classes[cls] += 1;
  if (cls != f.ExpectedClass()) {
    misclassified_.push_back(f.Value() + ": expected " + f.ExpectedClass() + ", got " + detail);
  }
}

void Stats::AddEvents(const std::string& jsonl) {
  std::istringstream in(jsonl);
  double last = -1;
  for (std::string line; std::getline(in, line);) {
    nlohmann::json j = nlohmann::json::parse(line, nullptr, false);
    if (!j.is_object() || j.value("type", "") != "event" || !j["t"].is_number()) continue;
    ++events_;
    double t = j["t"].get<double>();
    if (last >= 0) max_event_gap_s_ = std::max(max_event_gap_s_, t - last);
    last = t;
  }
}

int Stats::leftovers() const {
  int n = 0;
  for (const auto& [kind, k] : kinds_) n += k.leftovers;
  return n;
}

std::string Stats::LeftoverDetails() const { return Join(leftover_details_, 20); }
std::string Stats::MisclassifiedDetails() const { return Join(misclassified_, 20); }
std::string Stats::UnansweredDetails() const { return Join(unanswered_, 5); }

std::string Stats::Summary(int faults, uint64_t seed, double wall_s) const {
  std::ostringstream s;
  char line[512];
  s << "\n== process hygiene under injected faults: " << faults << " faults, seed " << seed << ", "
    << static_cast<long>(wall_s) << " s ==\n";
  std::snprintf(line, sizeof line, "%-19s %6s %-24s %9s  %s\n", "kind", "faults",
                "steps (build/check/bench)", "leftovers", "RCA classes");
  s << line;
  for (const auto& [kind, kind_stats] : kinds_) {
    const auto& k = kind_stats;  // a lambda below captures it (clang 14: not a binding)
    std::string classes;
    for (const auto& [cls, n] : k.classes) {
      classes += (classes.empty() ? "" : ", ") + cls + " " + std::to_string(n);
    }
    auto step = [&](const char* name) {
      auto it = k.steps.find(name);
      return std::to_string(it == k.steps.end() ? 0 : it->second);
    };
    std::string steps = step("build") + "/" + step("check") + "/" + step("bench");
    std::snprintf(line, sizeof line, "%-19s %6d %-24s %9d  %s\n", FaultKindName(kind), k.faults,
                  steps.c_str(), k.leftovers, classes.c_str());
    s << line;
  }
  std::snprintf(line, sizeof line,
                "leftovers %d, misclassified %zu, classified %d of %d\n"
                "arbor status --json: %zu calls, %zu unanswered; latency median %.3f s, max "
                "%.3f s; during a fault (%zu calls): median %.3f s, max %.3f s\n"
                "events: %d, largest gap between two events %.1f s\n",
                leftovers(), misclassified_.size(), classified_, faults, latency_all_.size(),
                unanswered_.size(), Percentile(latency_all_, 0.5), Percentile(latency_all_, 1.0),
                latency_fault_.size(), Percentile(latency_fault_, 0.5),
                Percentile(latency_fault_, 1.0), events_, max_event_gap_s_);
  s << line;
  return s.str();
}

}  // namespace arbor::stress

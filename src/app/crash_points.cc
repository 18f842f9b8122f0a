#include "app/crash_points.h"

#include <csignal>

#include "util/strings.h"

namespace arbor {

Result<CrashPoint> ParseCrashPoint(const std::string& text) {
  auto parts = Split(text, ':');
  if (parts.size() != 3 || (parts[0] != "before" && parts[0] != "after") || parts[1].empty()) {
    return MakeError("ARBOR_CRASH_AT=\"" + text + "\": expected before|after:<event-kind>:<n>");
  }
  CrashPoint p;
  p.before = parts[0] == "before";
  p.kind = parts[1];
  try {
    p.n = std::stoi(parts[2]);
  } catch (...) {
    return MakeError("ARBOR_CRASH_AT=\"" + text + "\": <n> must be a positive integer");
  }
  if (p.n < 1) return MakeError("ARBOR_CRASH_AT=\"" + text + "\": <n> must be positive");
  return p;
}

Status CrashPointStore::Apply(const Mutation& m) {
  bool hit = false;
  for (const Event& e : m.events) {
    if (e.kind == point_.kind && ++seen_ == point_.n) hit = true;
  }
  if (hit && point_.before) std::raise(SIGKILL);
  Status s = StoreWrapper::Apply(m);
  if (hit && !point_.before) std::raise(SIGKILL);
  return s;
}

}  // namespace arbor

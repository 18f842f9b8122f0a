// CrashPointStore: a Store decorator that kills the process with SIGKILL just before or just
// after the transaction carrying the n-th event of a kind, when ARBOR_CRASH_AT says so
// ("before:kept:1", "after:measured:3"). It exists so tests can prove, deterministically, that
// a kill -9 at any write loses nothing; without the variable it is not installed.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "core/model/ports.h"

namespace arbor {

struct CrashPoint {
  bool before = true;
  std::string kind;
  int n = 1;
};

// Parses ARBOR_CRASH_AT's syntax; an Error names what was expected.
Result<CrashPoint> ParseCrashPoint(const std::string& text);

class CrashPointStore : public StoreWrapper {
 public:
  CrashPointStore(Store* inner, CrashPoint point) : StoreWrapper(inner), point_(std::move(point)) {}
  Status Apply(const Mutation& m) override;

 private:
  CrashPoint point_;
  int seen_ = 0;
};

}  // namespace arbor

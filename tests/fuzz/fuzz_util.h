// Shared checks of the fuzz targets (tests/fuzz/*_fuzz.cc, docs/reliability/fuzzing.md).
//
// Every parser fuzzed here promises that malformed input is an Error whose message is one
// non-empty line naming what was wrong. A broken promise abort()s, so libFuzzer (or the corpus
// replay test) reports the input that broke it. Header-only: each target is one binary.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "util/result.h"

namespace arbor::fuzz {

// Aborts unless `message` is a non-empty single line. `what` names the call in the report.
inline void CheckOneLine(std::string_view message, const char* what) {
  if (!message.empty() && message.find('\n') == std::string_view::npos) return;
  std::fprintf(stderr, "fuzz: %s: %s error message: [%.*s]\n", what,
               message.empty() ? "empty" : "multi-line", static_cast<int>(message.size()),
               message.data());
  std::abort();
}

inline void CheckError(const Error& e, const char* what) { CheckOneLine(e.message, what); }

// Checks the error of a failed result; true when `r` holds a value.
template <typename R>
bool CheckResult(const R& r, const char* what) {
  if (r.ok()) return true;
  CheckError(r.error(), what);
  return false;
}

// Aborts with `why` when `ok` is false: an invariant a successful parse promises.
inline void Require(bool ok, const char* what, const std::string& why) {
  if (ok) return;
  std::fprintf(stderr, "fuzz: %s: %s\n", what, why.c_str());
  std::abort();
}

// The first line of `data` (without its '\n') and the rest: targets that fuzz an expression
// and a document read both from one input.
inline std::pair<std::string_view, std::string_view> SplitFirstLine(std::string_view data) {
  size_t nl = data.find('\n');
  if (nl == std::string_view::npos) return {data, {}};
  return {data.substr(0, nl), data.substr(nl + 1)};
}

}  // namespace arbor::fuzz

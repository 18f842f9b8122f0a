// ARBOR_CHECK: a violated invariant is a bug; it aborts with the location and a message.
// It is never used for bad input, which gets an Error (util/result.h).
#pragma once

#include <string>

namespace arbor::internal {
[[noreturn]] void CheckFailed(const char* file, int line, const char* cond, const std::string& msg);
}  // namespace arbor::internal

#define ARBOR_CHECK(cond, msg)                                                     \
  do {                                                                             \
    if (!(cond)) ::arbor::internal::CheckFailed(__FILE__, __LINE__, #cond, (msg)); \
  } while (0)

#include "util/check.h"

#include <cstdio>
#include <cstdlib>

namespace arbor::internal {

void CheckFailed(const char* file, int line, const char* cond, const std::string& msg) {
  std::fprintf(stderr, "arbor: internal error at %s:%d: check '%s' failed: %s\n", file, line, cond,
               msg.c_str());
  std::abort();
}

}  // namespace arbor::internal

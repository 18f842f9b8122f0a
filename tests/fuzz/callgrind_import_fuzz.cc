// Fuzzes ImportProfile (formats/importers.h) with [profile] format = kCallgrind, with and without
// grouping rules: a one-line error or a valid profile, never a crash.
#include <cstddef>
#include <cstdint>

#include "profile_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  arbor::fuzz::ImportAllWays({reinterpret_cast<const char*>(data), size},
                             arbor::ProfileFormat::kCallgrind);
  return 0;
}

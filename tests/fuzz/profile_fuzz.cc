// Fuzzes the Arbor profile format (ParseProfile, formats/metrics.h) and format detection with
// the importer it picks (ImportProfile with format = auto): a one-line error or a valid
// profile, never a crash.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "profile_check.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace arbor;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  Result<Profile> p = ParseProfile(text);
  if (fuzz::CheckResult(p, "ParseProfile")) fuzz::CheckProfile(*p, "ParseProfile");
  (void)DetectProfileFormat(text);
  fuzz::ImportAllWays(text, ProfileFormat::kAuto);
  return 0;
}

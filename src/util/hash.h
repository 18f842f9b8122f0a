// Stable content hashes (not cryptographic): FNV-1a 64, rendered as 16 hex digits.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace arbor {

uint64_t Fnv1a64(std::string_view data, uint64_t seed = 1469598103934665603ULL);
std::string HashHex(std::string_view data);

}  // namespace arbor

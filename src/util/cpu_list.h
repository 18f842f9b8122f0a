// CPU lists as Linux writes them (cpuset(7) "list format"): "0", "2-3", "0,4-5". Used by
// [search] lane_cpus (docs/lanes.md#measurement-lanes): the CPUs a measurement lane's
// benchmark processes are pinned to. Parsing is pure; an empty or malformed list, a
// descending range or a repeated CPU is an Error whose message names what is wrong.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace arbor {

// The CPUs of `text`, ascending, each once.
[[nodiscard]] Result<std::vector<int>> ParseCpuList(std::string_view text);

// "0-1,4": the canonical list of ascending, distinct CPUs.
std::string FormatCpuList(const std::vector<int>& cpus);

}  // namespace arbor

// What machine a campaign runs on: the hardware half of a knowledge-base context
// (core/knowledge/kb.h).
//
// DetectHardware() reads /proc/cpuinfo (model name, ISA flags that matter for performance
// transfer), the online CPU count and physical memory, and asks `nvidia-smi` or `rocm-smi` for
// a GPU name when one of them is on PATH (through the process runner, 10 s timeout; a tool
// that fails or times out means "no GPU reported", never an error). ARBOR_HARDWARE, in
// HardwareSignature::Encode() form ("cpu=...;cores=8;isa=avx2,fma;mem=32;gpu="), replaces
// detection entirely, so that tests and users can simulate other hardware; a malformed value
// is an Error naming the variable.
#pragma once

#include <string>

#include "core/knowledge/kb.h"
#include "util/result.h"

namespace arbor {

Result<HardwareSignature> DetectHardware();

// The parts, for tests. Model name ("model name", else arm's "Model"/"Hardware", else
// "unknown") and the sorted ISA subset (x86 "flags" / arm "Features") of /proc/cpuinfo text.
void ParseCpuInfo(const std::string& cpuinfo, HardwareSignature* hw);
// The first GPU named by `nvidia-smi --query-gpu=name --format=csv,noheader` output or by
// `rocm-smi --showproductname` output ("Card Series:"), with " xN" when N > 1; "" if none.
std::string ParseNvidiaSmi(const std::string& out);
std::string ParseRocmSmi(const std::string& out);

}  // namespace arbor

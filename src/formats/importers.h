// Profile importers: what perf, Chrome-trace exporters, callgrind and flame-graph tools write,
// turned into Arbor's Profile (DESIGN.md "Profile format").
//
// ImportProfile reads the text of the profile step (the command's stdout or its profile_file)
// in the format [profile] names, or the detected one, and groups the profiler's raw names into
// components with the [[profile.group]] rules. Like ParseProfile it is a pure function of its
// arguments: it never throws, never touches the disk, and a malformed or empty profile is an
// Error whose one-line message starts with the format ("perf: no sample lines found").
// Every successful Profile has non-empty, unique component names and shares in [0, 1] that
// sum to at most 1 (up to rounding). docs/metrics-and-profiles.md is the user reference.
#pragma once

#include <optional>
#include <string_view>

#include "core/model/model.h"
#include "core/model/spec.h"
#include "util/result.h"

namespace arbor {

// "arbor", "perf", "chrome-trace", "callgrind", "collapsed" ("auto" for kAuto): the words of
// [profile] format (config/profile_loader.cc reads them) and of error messages.
std::string_view ProfileFormatName(ProfileFormat f);

// The format `text` looks like, from its first bytes and lines; nullopt when none fits.
std::optional<ProfileFormat> DetectProfileFormat(std::string_view text);

// The profile in `text`. kArbor goes through ParseProfile unchanged (groups do not apply: its
// components are already named); every other format is imported, then grouped.
Result<Profile> ImportProfile(std::string_view text, const ProfileSpec& spec);

}  // namespace arbor

// The promises of a successful profile (formats/importers.h, formats/metrics.h), checked by
// the profile and importer fuzz targets.
#pragma once

#include <set>
#include <string>
#include <string_view>

#include "core/model/model.h"
#include "formats/importers.h"
#include "formats/metrics.h"
#include "fuzz_util.h"

namespace arbor::fuzz {

// Non-empty, unique component names, shares in [0, 1] summing to at most kMaxShareSum.
inline void CheckProfile(const Profile& p, const char* what) {
  Require(!p.components.empty(), what, "a profile without components");
  std::set<std::string> names;
  double sum = 0;
  for (const Component& c : p.components) {
    Require(!c.name.empty(), what, "a component without a name");
    Require(names.insert(c.name).second, what, "a duplicate component " + c.name);
    Require(c.share >= 0 && c.share <= 1, what, "a share out of [0, 1] for " + c.name);
    sum += c.share;
  }
  Require(sum <= kMaxShareSum + 1e-9, what, "shares summing to " + std::to_string(sum));
}

// Imports `text` as `format`, without and with grouping rules (and, for Chrome traces, every
// track selection), checking each error or profile.
inline void ImportAllWays(std::string_view text, ProfileFormat format) {
  ProfileSpec spec;
  spec.format = format;
  for (int grouped = 0; grouped < 2; ++grouped) {
    if (grouped) {
      spec.groups = {{"matmul", {"*gemm*", "matmul*"}, "kernel"},
                     {"io", {"*read*", "*write*"}, "system"},
                     {"rest", {"*"}, ""}};
      spec.top_n = 3;
    }
    int tracks = format == ProfileFormat::kChromeTrace ? 3 : 1;
    for (int t = 0; t < tracks; ++t) {
      spec.tracks = static_cast<TraceTracks>(t);
      Result<Profile> p = ImportProfile(text, spec);
      if (CheckResult(p, "ImportProfile")) CheckProfile(*p, "ImportProfile");
    }
  }
}

}  // namespace arbor::fuzz

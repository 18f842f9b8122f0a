// Fuzz-style robustness: truncations of every fixture at many offsets, and random bytes, in
// every format. Each must give an Error with a one-line message or a valid Profile — never a
// crash, an exception or shares out of range.
#include <gtest/gtest.h>

#include <random>
#include <set>

#include "formats/importers.h"
#include "formats/importers_test_util.h"

namespace arbor {
namespace {

constexpr ProfileFormat kAllFormats[] = {ProfileFormat::kAuto,      ProfileFormat::kArbor,
                                         ProfileFormat::kPerf,      ProfileFormat::kChromeTrace,
                                         ProfileFormat::kCallgrind, ProfileFormat::kCollapsed};

void ExpectSane(std::string_view text, ProfileFormat format, const std::string& what) {
  ProfileSpec spec;
  spec.format = format;
  spec.groups = {{"matmul", {"*gemm*"}, "kernel"}};
  for (int grouped = 0; grouped < 2; ++grouped) {
    if (grouped == 0) spec.groups.clear();
    Result<Profile> p = ImportProfile(text, spec);
    if (!p.ok()) {
      EXPECT_FALSE(p.error().message.empty()) << what;
      EXPECT_EQ(p.error().message.find('\n'), std::string::npos) << what;
      continue;
    }
    ASSERT_FALSE(p->components.empty()) << what;
    std::set<std::string> names;
    double sum = 0;
    for (const Component& c : p->components) {
      EXPECT_FALSE(c.name.empty()) << what;
      EXPECT_TRUE(names.insert(c.name).second) << what << " duplicate " << c.name;
      EXPECT_GE(c.share, 0) << what;
      EXPECT_LE(c.share, 1) << what;
      sum += c.share;
    }
    EXPECT_LE(sum, 1.05 + 1e-9) << what;
  }
}

TEST(ImportersFuzzTest, TruncatedFixturesNeverCrash) {
  for (const char* name : {"perf_report.txt", "perf_script.txt", "chrome_trace.json",
                           "callgrind_annotate.txt", "callgrind.out", "collapsed.txt"}) {
    std::string text = testing_profiles::Fixture(name);
    size_t step = std::max<size_t>(1, text.size() / 150);
    for (size_t cut = 0; cut < text.size(); cut += step) {
      for (ProfileFormat f : kAllFormats) {
        ExpectSane(std::string_view(text).substr(0, cut), f,
                   std::string(name) + " cut at " + std::to_string(cut));
      }
    }
  }
}

TEST(ImportersFuzzTest, TruncatedStructuredInputIsAnError) {
  // Cut inside the JSON object (the closing "]}" gone): never a profile.
  std::string trace = testing_profiles::Fixture("chrome_trace.json");
  for (size_t cut = 1; cut + 4 < trace.size(); cut += 97) {
    EXPECT_FALSE(ImportProfile(trace.substr(0, cut), ProfileSpec{}).ok()) << cut;
  }
  EXPECT_FALSE(ImportProfile("", ProfileSpec{}).ok());
}

TEST(ImportersFuzzTest, RandomBytesNeverCrash) {
  std::mt19937 rng(12345);
  const std::string alphabet = "{}[]\":,;%.0123456789 \t\nabcXBEph#=()+-*\\";
  for (int i = 0; i < 400; ++i) {
    size_t len = rng() % 300;
    std::string text;
    for (size_t k = 0; k < len; ++k) {
      text += i % 2 == 0 ? static_cast<char>(rng() % 256) : alphabet[rng() % alphabet.size()];
    }
    for (ProfileFormat f : kAllFormats) ExpectSane(text, f, "random #" + std::to_string(i));
  }
}

TEST(ImportersFuzzTest, MutatedFixturesNeverCrash) {
  std::mt19937 rng(7);
  for (const char* name :
       {"perf_report.txt", "chrome_trace.json", "callgrind_annotate.txt", "collapsed.txt"}) {
    std::string base = testing_profiles::Fixture(name);
    for (int i = 0; i < 60; ++i) {
      std::string text = base;
      for (int k = 0; k < 8; ++k) text[rng() % text.size()] = static_cast<char>(rng() % 256);
      for (ProfileFormat f : kAllFormats) ExpectSane(text, f, std::string(name) + " mutated");
    }
  }
}

}  // namespace
}  // namespace arbor

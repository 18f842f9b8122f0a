#include "store/kb_json.h"

#include <gtest/gtest.h>

namespace arbor {
namespace {

using json = nlohmann::json;

KbEntry FullEntry() {
  KbEntry e;
  e.id = 12;
  e.uid = "toy-1/12";
  e.campaign = "toy";
  e.campaign_uid = "toy-1";
  e.node = 12;
  e.action_id = "kernel.gemm-tiled";
  e.value = "32";
  e.category = "gemm";
  e.layer = "kernel";
  e.content_hash = "c0ffee";
  e.workload = {"bench=3fa2", "campaign=toy"};
  e.hardware = {"AMD EPYC 7763", 16, {"avx2", "fma"}, 64, "AMD Instinct MI300X"};
  e.path_hash = "p1";
  e.outcome = "kept";
  e.accuracy_failure = true;
  e.gain = 0.31;
  e.ci_low = 1.25;
  e.ci_high = 1.38;
  e.prior_speedup = 2;
  e.target_share = 0.41;
  e.implied_speedup = 1.9;
  e.cost_s = 40;
  e.rca = "none";
  e.lesson = "Tiling \"helps\"\nwhen — ünïcode";
  e.controlled = true;
  e.recorded_at = 1700000000.5;
  e.superseded_by = 14;
  e.conflict = "diverges from #3 (#3 reverted -2.0% vs #12 kept +31%)";
  return e;
}

KbEntry Minimal(const std::string& uid) {
  KbEntry e;
  e.uid = uid;
  e.action_id = "compiler.O3";
  e.outcome = "reverted";
  return e;
}

std::string Line(const std::string& uid) {
  return R"({"v": 1, "uid": ")" + uid + R"(", "action_id": "a", "outcome": "kept"})";
}

TEST(KbJson, EveryFieldRoundTrips) {
  const KbEntry in = FullEntry();
  const json j = KbEntryToJson(in);
  EXPECT_EQ(j["v"], 1);
  EXPECT_EQ(j["hardware"]["cpu_model"], "AMD EPYC 7763");
  EXPECT_EQ(j["workload"], json::array({"bench=3fa2", "campaign=toy"}));
  auto out = KbEntryFromJson(j);
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(KbEntryToJson(*out), j);
  EXPECT_EQ(out->hardware, in.hardware);
  EXPECT_EQ(out->gain, in.gain);
  EXPECT_EQ(out->lesson, in.lesson);
}

TEST(KbJson, AbsentOptionalsAreOmittedAndDefaulted) {
  const json j = KbEntryToJson(Minimal("u/1"));
  EXPECT_FALSE(j.contains("gain"));
  EXPECT_FALSE(j.contains("ci_low"));
  auto out = KbEntryFromJson(json::parse(Line("u/1")));
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_FALSE(out->gain.has_value());
  EXPECT_EQ(out->prior_speedup, 1);
  EXPECT_EQ(out->hardware, HardwareSignature{});
  // null is "no value" as well, and unknown fields are ignored.
  auto nulls = KbEntryFromJson(json::parse(
      R"({"v": 1, "uid": "x", "action_id": "a", "outcome": "kept", "gain": null, "new": 1})"));
  ASSERT_TRUE(nulls.ok()) << nulls.error().message;
  EXPECT_FALSE(nulls->gain.has_value());
}

TEST(KbJson, HardwareMayBeTheEncodedForm) {
  HardwareSignature h{"Test CPU", 8, {"avx2"}, 32, ""};
  json j = json::parse(Line("u/1"));
  j["hardware"] = h.Encode();
  auto out = KbEntryFromJson(j);
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ(out->hardware, h);
  j["hardware"] = "garbage";
  EXPECT_EQ(KbEntryFromJson(j).error().message, "field 'hardware': cannot decode 'garbage'");
}

TEST(KbJson, ErrorsNameTheField) {
  struct Case {
    std::string patch;
    std::string message;
  };
  const Case cases[] = {
      {R"({"gain": "fast"})", "field 'gain': expected a number or null"},
      {R"({"cost_s": true})", "field 'cost_s': expected a number"},
      {R"({"node": 1.5})", "field 'node': expected an integer"},
      {R"({"controlled": 1})", "field 'controlled': expected true or false"},
      {R"({"workload": [1]})", "field 'workload': expected an array of strings"},
      {R"({"hardware": {"cores": "8"}})", "field 'hardware': field 'cores': expected an integer"},
      {R"({"uid": ""})", "field 'uid': expected a non-empty string"},
      {R"({"lesson": 3})", "field 'lesson': expected a string"},
      {R"({"v": 2})", "format version 2 is not supported (this arbor reads 1)"},
      {R"({"v": "1"})", "field 'v': expected an integer"},
  };
  for (const Case& c : cases) {
    json j = json::parse(Line("u/1"));
    j.merge_patch(json::parse(c.patch));
    auto r = KbEntryFromJson(j);
    ASSERT_FALSE(r.ok()) << c.patch;
    EXPECT_EQ(r.error().message, c.message) << c.patch;
  }
  json j = json::parse(Line("u/1"));
  j.erase("outcome");
  EXPECT_EQ(KbEntryFromJson(j).error().message, "field 'outcome' is missing");
  j.erase("v");
  EXPECT_EQ(KbEntryFromJson(j).error().message, "field 'v' (format version) is missing");
  EXPECT_EQ(KbEntryFromJson(json::array()).error().message, "expected a JSON object");
}

TEST(KbJson, JsonLinesRoundTrip) {
  std::vector<KbEntry> in = {FullEntry(), Minimal("u/2")};
  const std::string text = ExportJsonLines(in);
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2);
  EXPECT_EQ(ExportJsonLines({}), "");
  auto out = ParseJsonLines(text);
  ASSERT_TRUE(out.ok()) << out.error().message;
  ASSERT_EQ(out->size(), 2u);
  EXPECT_EQ(ExportJsonLines(*out), text);
}

TEST(KbJson, BlankLinesAndCrLfAreFine) {
  auto out = ParseJsonLines("\n" + Line("a") + "\r\n  \n" + Line("b"));
  ASSERT_TRUE(out.ok()) << out.error().message;
  ASSERT_EQ(out->size(), 2u);
  EXPECT_EQ((*out)[1].uid, "b");
}

TEST(KbJson, MalformedLinesNameTheirNumber) {
  auto syntax = ParseJsonLines(Line("a") + "\n\n{\"v\": 1, \"uid\": \n");
  ASSERT_FALSE(syntax.ok());
  EXPECT_EQ(syntax.error().message.rfind("line 3: parse error", 0), 0u) << syntax.error().message;
  auto field = ParseJsonLines(Line("a") + "\n" + Line("b").replace(1, 6, "\"v\": 1, \"gain\": []"));
  ASSERT_FALSE(field.ok());
  EXPECT_EQ(field.error().message, "line 2: field 'gain': expected a number or null");
  auto not_object = ParseJsonLines("[1, 2]\n");
  ASSERT_FALSE(not_object.ok());
  EXPECT_EQ(not_object.error().message, "line 1: expected a JSON object");
}

TEST(KbJson, InvalidUtf8IsReplacedNotThrown) {
  KbEntry e = Minimal("u/1");
  e.lesson = "bad \xff byte";
  const std::string text = ExportJsonLines({e});
  auto out = ParseJsonLines(text);
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_NE((*out)[0].lesson, e.lesson);
  EXPECT_EQ((*out)[0].lesson.rfind("bad ", 0), 0u);
}

}  // namespace
}  // namespace arbor

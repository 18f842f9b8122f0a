#include "store/store_json.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "store/meta_codec.h"

namespace arbor {
namespace {

TEST(StoreJsonTest, NonFiniteNumbersRoundTrip) {
  const double inf = std::numeric_limits<double>::infinity();
  std::map<std::string, double> in = {{"a", inf}, {"b", -inf}, {"c", std::nan("")}, {"d", 0.1}};
  const std::string text = store_json::EncodeNumbers(in);
  EXPECT_EQ(text, R"({"a":"inf","b":"-inf","c":"nan","d":0.1})");
  auto out = store_json::DecodeNumbers(text);
  ASSERT_TRUE(out.ok()) << out.error().message;
  EXPECT_EQ((*out)["a"], inf);
  EXPECT_EQ((*out)["b"], -inf);
  EXPECT_TRUE(std::isnan((*out)["c"]));
  EXPECT_EQ((*out)["d"], 0.1);
}

TEST(StoreJsonTest, ScoreDecodesMissingFieldsAsDefaults) {
  auto score = store_json::DecodeScore(R"({"h": 2.5, "future_term": 7})");
  ASSERT_TRUE(score.ok());
  EXPECT_EQ(score->h, 2.5);
  EXPECT_EQ(score->c_norm, 1);  // ScoreTerms' default
  EXPECT_EQ(score->m_gap, 1);
}

TEST(StoreJsonTest, MalformedTextIsAnErrorNotAnException) {
  EXPECT_FALSE(store_json::DecodeOverlay("{").ok());
  EXPECT_FALSE(store_json::DecodeOverlay(R"({"A": 1})").ok());
  EXPECT_FALSE(store_json::DecodeScore("[]").ok());
  EXPECT_FALSE(store_json::DecodeScore(R"({"g": "x"})").ok());
  EXPECT_FALSE(store_json::DecodeProfile(R"({"components": {}})").ok());
  EXPECT_FALSE(store_json::DecodeNumbers(R"({"a": null})").ok());
}

TEST(StoreJsonTest, RejectionsNameTheReason) {
  auto overlay = store_json::DecodeOverlay(R"({"A":1})");
  ASSERT_FALSE(overlay.ok());
  EXPECT_NE(overlay.error().message.find("value of 'A' is not a string"), std::string::npos)
      << overlay.error().message;
  auto score = store_json::DecodeScore(R"({"g":"x"})");
  ASSERT_FALSE(score.ok());
  EXPECT_NE(score.error().message.find("field 'g' has the wrong type"), std::string::npos)
      << score.error().message;
}

// The compact fast path and the full parser agree: whitespace, escapes and unicode escapes
// (which the fast path hands over) decode like the compact text our encoders write.
TEST(StoreJsonTest, FastPathAndFullParserAgree) {
  EnvOverlay overlay = {{"A", "x \"q\" \\ \n"}, {"B", "plain"}, {"C", ""}, {"D", "\u00e9"}};
  const std::string compact = store_json::EncodeOverlay(overlay);
  auto back = store_json::DecodeOverlay(compact);
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(*back, overlay);
  auto spaced = store_json::DecodeOverlay(R"( { "B" : "plain" , "D": "\u00e9" } )");
  ASSERT_TRUE(spaced.ok()) << spaced.error().message;
  EXPECT_EQ(spaced->at("D"), "\u00e9");
  EXPECT_EQ(spaced->at("B"), "plain");
  auto unicode = store_json::DecodeOverlay(R"({"E":"\u00e9\ud83d\ude00"})");
  ASSERT_TRUE(unicode.ok()) << unicode.error().message;
  EXPECT_EQ(unicode->at("E"), "\xC3\xA9\xF0\x9F\x98\x80");

  auto score = store_json::DecodeScore(R"({ "g" : 1e-3, "c":-2.5E2, "h":"-inf", "x":{"y":1}})");
  EXPECT_FALSE(score.ok());  // nested values are not part of the format
  score = store_json::DecodeScore(R"({ "g" : 1e-3, "c":-2.5E2, "h":"-inf", "c_norm":3})");
  ASSERT_TRUE(score.ok()) << score.error().message;
  EXPECT_EQ(score->g, 1e-3);
  EXPECT_EQ(score->c, -250);
  EXPECT_EQ(score->c_norm, 3);
  EXPECT_EQ(score->h, -std::numeric_limits<double>::infinity());

  for (const char* bad : {"{", "{}x", R"({"a":1,})", R"({"a" 1})", R"({"a":})", R"({"a":1)",
                          R"({"a":01x})", "[]", "1", R"("s")", ""}) {
    EXPECT_FALSE(store_json::DecodeNumbers(bad).ok()) << bad;
  }
}

TEST(StoreJsonTest, ProfileUsesTheDocumentedFormat) {
  Profile p{.total_s = 1.5, .components = {{"matmul", "kernel", 0.5}}};
  EXPECT_EQ(store_json::EncodeProfile(p),
            R"({"components":[{"layer":"kernel","name":"matmul","share":0.5}],"total_s":1.5})");
}

TEST(StoreJsonTest, ProfileRawNamesRoundTripAndMayBeAbsent) {
  Profile p{.total_s = 2, .components = {{"matmul", "kernel", 0.6}, {"other", "other", 0.4}}};
  p.raw = {{"sgemm_128x64_nn", 0.5}, {"gemm_tiled", 0.1}};
  auto back = store_json::DecodeProfile(store_json::EncodeProfile(p));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->raw, p.raw);
  ASSERT_EQ(back->components.size(), 2u);
  EXPECT_EQ(back->components[0].name, "matmul");
  // Profiles stored before the raw list existed decode with an empty one.
  auto old = store_json::DecodeProfile(
      R"({"components":[{"layer":"kernel","name":"matmul","share":0.5}],"total_s":1.5})");
  ASSERT_TRUE(old.ok());
  EXPECT_TRUE(old->raw.empty());
  EXPECT_FALSE(store_json::DecodeProfile(R"({"total_s":1,"components":[],"raw":{}})").ok());
  EXPECT_FALSE(
      store_json::DecodeProfile(R"({"total_s":1,"components":[],"raw":[{"name":1}]})").ok());
}

TEST(StoreJsonTest, InvalidUtf8IsReplacedNotThrown) {
  auto text = store_json::EncodeOverlay({{"K", "a\xff"}});
  auto back = store_json::DecodeOverlay(text);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->at("K"), "a\xEF\xBF\xBD");
}

TEST(StoreJsonTest, EventDataMustBeAnObject) {
  EXPECT_TRUE(store_json::IsEmptyOrJsonObject(""));
  EXPECT_TRUE(store_json::IsEmptyOrJsonObject(R"({"a": [1]})"));
  EXPECT_FALSE(store_json::IsEmptyOrJsonObject("[1]"));
  EXPECT_FALSE(store_json::IsEmptyOrJsonObject("{"));
}

TEST(MetaCodecTest, UnknownKeysAreIgnoredAndMissingOnesDefault) {
  auto meta = meta_codec::Decode(
      {{"schema_version", "1"}, {"campaign.name", "x"}, {"campaign.from_the_future", "?"}});
  ASSERT_TRUE(meta.ok());
  ASSERT_TRUE(meta->has_value());
  EXPECT_EQ((*meta)->name, "x");
  EXPECT_EQ((*meta)->state, "running");
  EXPECT_EQ((*meta)->explore_boost, 1);
}

TEST(MetaCodecTest, NoCampaignRowsMeansNoMeta) {
  auto meta = meta_codec::Decode({{"schema_version", "1"}});
  ASSERT_TRUE(meta.ok());
  EXPECT_FALSE(meta->has_value());
}

TEST(MetaCodecTest, MalformedNumberIsAnError) {
  auto meta = meta_codec::Decode({{"campaign.seed", "12x"}});
  ASSERT_FALSE(meta.ok());
  EXPECT_NE(meta.error().message.find("campaign.seed"), std::string::npos);
}

}  // namespace
}  // namespace arbor

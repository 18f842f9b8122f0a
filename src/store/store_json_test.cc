#include "store/store_json.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <utility>

#include "store/critic_json.h"
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

AgentNote FullAgent() {
  AgentNote n;
  n.backend = SpecialistBackend::kLlm;
  n.domain = "kernel";
  n.confidence = 0.75;
  n.rounds = 2;
  n.prompt_tokens = 12345;
  n.completion_tokens = 678;
  n.cost = 0.0421;
  n.findings = {"the GEMM is memory-bound", "tile 64 spills"};
  n.questions = {"is AVX-512 allowed?"};
  n.proposed = {"kernel.tile-k", "kernel.prefetch"};
  return n;
}

// The root cause is stored as its word, and "" (kNone) not at all: stores read back the same.
TEST(StoreJsonTest, CriticRootCauseIsStoredAsItsWord) {
  CriticNote n;
  n.rca = RcaClass::kNotConfirmed;
  EXPECT_EQ(store_json::EncodeCritic(n), R"({"rca":"not_confirmed"})");
  n.rca = RcaClass::kNone;
  n.evidence = "e";
  EXPECT_EQ(store_json::EncodeCritic(n), R"({"evidence":"e"})");
  auto back = store_json::DecodeCritic(R"({"rca":"flaky_incumbent"})");
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->rca, RcaClass::kFlakyIncumbent);
}

// A word this build does not know (a store written by another version) does not fail the
// load, so a resume goes on: it reads as kUnknown, which no rule asks for, as the word did.
TEST(StoreJsonTest, AnUnknownRootCauseReadsAsUnknown) {
  auto n = store_json::DecodeCritic(R"({"rca":"a_later_class","evidence":"e"})");
  ASSERT_TRUE(n.ok()) << n.error().message;
  EXPECT_EQ(n->rca, RcaClass::kUnknown);
  EXPECT_EQ(n->evidence, "e");
}

TEST(StoreJsonTest, AgentNoteRoundTripsAndEmptyIsBraces) {
  EXPECT_EQ(store_json::EncodeAgent(AgentNote()), "{}");
  auto empty = store_json::DecodeAgent("{}");
  ASSERT_TRUE(empty.ok());
  EXPECT_TRUE(empty->empty());

  const AgentNote n = FullAgent();
  auto back = store_json::DecodeAgent(store_json::EncodeAgent(n));
  ASSERT_TRUE(back.ok()) << back.error().message;
  EXPECT_EQ(back->backend, n.backend);
  EXPECT_EQ(back->domain, n.domain);
  EXPECT_EQ(back->confidence, n.confidence);
  EXPECT_EQ(back->rounds, n.rounds);
  EXPECT_EQ(back->prompt_tokens, n.prompt_tokens);
  EXPECT_EQ(back->completion_tokens, n.completion_tokens);
  EXPECT_EQ(back->cost, n.cost);
  EXPECT_EQ(back->findings, n.findings);
  EXPECT_EQ(back->questions, n.questions);
  EXPECT_EQ(back->proposed, n.proposed);

  AgentNote sparse;  // empty fields are omitted
  sparse.backend = SpecialistBackend::kCommand;
  sparse.findings = {"x"};
  EXPECT_EQ(store_json::EncodeAgent(sparse), R"({"backend":"command","findings":["x"]})");
}

TEST(StoreJsonTest, MalformedAgentNamesTheField) {
  EXPECT_FALSE(store_json::DecodeAgent("{").ok());
  EXPECT_FALSE(store_json::DecodeAgent("[]").ok());
  for (const auto& [text, field] :
       {std::pair{R"({"confidence":"high"})", "confidence"},
        std::pair{R"({"rounds":1.5})", "rounds"}, std::pair{R"({"findings":["a",2]})", "findings"},
        std::pair{R"({"backend":7})", "backend"}}) {
    auto note = store_json::DecodeAgent(text);
    ASSERT_FALSE(note.ok()) << text;
    EXPECT_NE(note.error().message.find("malformed agent JSON: field '" + std::string(field) +
                                        "' has the wrong type"),
              std::string::npos)
        << note.error().message;
  }
}

ActionSpec FullAction(ApplySpec::Kind kind) {
  ActionSpec a;
  a.id = "kernel.tile-k";
  a.layer = "kernel";
  a.category = "tiling";
  a.describe = "tile the K loop \"by 64\"";
  a.targets = {"matmul.*", "attention"};
  a.speedup = 1.25;
  a.cost_s = 120.5;
  a.risk_accuracy = 0.01;
  a.risk_crash = 0.2;
  a.requires_ = {"kernel.gemm-tiled"};
  a.conflicts = {"kernel.naive", "kernel.blas"};
  a.refresh = true;
  a.apply.kind = kind;
  a.apply.env = {{"TILE_K", "{value}"}};
  a.apply.append = {{"CXXFLAGS", " -funroll-loops"}};
  a.apply.patch = "/abs/patches/tile.diff";
  a.apply.run = "sed -i s/a/b/ src/gemm.cc";
  a.apply.agent = "kernel";
  a.apply.goal = "tile K";
  a.values = {"32", "64"};
  a.line = 42;
  a.proposed_by = "kernel specialist at node 7";
  a.content_hash = "sha256:abc";
  return a;
}

TEST(StoreJsonTest, ActionRoundTripsEveryFieldAndApplyKind) {
  for (auto kind : {ApplySpec::Kind::kEnv, ApplySpec::Kind::kAppend, ApplySpec::Kind::kPatch,
                    ApplySpec::Kind::kRun, ApplySpec::Kind::kAgent}) {
    const ActionSpec a = FullAction(kind);
    auto back = store_json::DecodeAction(store_json::EncodeAction(a));
    ASSERT_TRUE(back.ok()) << back.error().message;
    EXPECT_EQ(back->id, a.id);
    EXPECT_EQ(back->layer, a.layer);
    EXPECT_EQ(back->category, a.category);
    EXPECT_EQ(back->describe, a.describe);
    EXPECT_EQ(back->targets, a.targets);
    EXPECT_EQ(back->speedup, a.speedup);
    EXPECT_EQ(back->cost_s, a.cost_s);
    EXPECT_EQ(back->risk_accuracy, a.risk_accuracy);
    EXPECT_EQ(back->risk_crash, a.risk_crash);
    EXPECT_EQ(back->requires_, a.requires_);
    EXPECT_EQ(back->conflicts, a.conflicts);
    EXPECT_TRUE(back->refresh);
    EXPECT_EQ(back->apply.kind, kind);
    EXPECT_EQ(back->apply.env, a.apply.env);
    EXPECT_EQ(back->apply.append, a.apply.append);
    EXPECT_EQ(back->apply.patch, a.apply.patch);
    EXPECT_EQ(back->apply.run, a.apply.run);
    EXPECT_EQ(back->apply.agent, a.apply.agent);
    EXPECT_EQ(back->apply.goal, a.apply.goal);
    EXPECT_EQ(back->values, a.values);
    EXPECT_EQ(back->line, a.line);
    EXPECT_EQ(back->proposed_by, a.proposed_by);
    EXPECT_EQ(back->content_hash, a.content_hash);
  }
  // Absent fields take ActionSpec's defaults.
  auto sparse = store_json::DecodeAction(R"({"id":"x","apply":{"kind":"agent","agent":"io"}})");
  ASSERT_TRUE(sparse.ok()) << sparse.error().message;
  EXPECT_EQ(sparse->speedup, ActionSpec().speedup);
  EXPECT_EQ(sparse->cost_s, ActionSpec().cost_s);
  EXPECT_FALSE(sparse->refresh);
  EXPECT_EQ(sparse->apply.kind, ApplySpec::Kind::kAgent);
  EXPECT_EQ(sparse->apply.agent, "io");
}

TEST(StoreJsonTest, MalformedActionNamesTheField) {
  for (const auto& [text, field] :
       {std::pair{R"({"id":"a","speedup":"fast"})", "speedup"},
        std::pair{R"({"id":"a","requires":"b"})", "requires"},
        std::pair{R"({"id":"a","line":"3"})", "line"},
        std::pair{R"({"id":"a","apply":[]})", "apply"},
        std::pair{R"({"id":"a","apply":{"kind":"teleport"}})", "apply.kind"},
        std::pair{R"({"id":"a","apply":{"kind":"env","env":{"A":1}}})", "apply.env"}}) {
    auto action = store_json::DecodeAction(text);
    ASSERT_FALSE(action.ok()) << text;
    EXPECT_NE(action.error().message.find("malformed action JSON: field '" + std::string(field) +
                                          "' has the wrong type"),
              std::string::npos)
        << action.error().message;
  }
  auto no_id = store_json::DecodeAction(R"({"layer":"kernel"})");
  ASSERT_FALSE(no_id.ok());
  EXPECT_NE(no_id.error().message.find("field 'id' is missing"), std::string::npos);
  EXPECT_FALSE(store_json::DecodeAction("{").ok());
}

TEST(MetaCodecTest, LlmUsageRoundTripsAndOldStoresReadZero) {
  CampaignMeta meta;
  meta.name = "c";
  meta.llm_prompt_tokens = 123456789012;
  meta.llm_completion_tokens = 42;
  meta.llm_cost = 1.0 / 3;
  meta.proposed_at = 7;
  auto decoded = meta_codec::Decode(meta_codec::Encode(meta));
  ASSERT_TRUE(decoded.ok() && decoded->has_value());
  const CampaignMeta& back = **decoded;
  EXPECT_EQ(back.llm_prompt_tokens, meta.llm_prompt_tokens);
  EXPECT_EQ(back.llm_completion_tokens, meta.llm_completion_tokens);
  EXPECT_EQ(back.llm_cost, meta.llm_cost);
  EXPECT_EQ(back.proposed_at, meta.proposed_at);

  auto old = meta_codec::Decode({{"campaign.name", "c"}, {"campaign.next_seq", "3"}});
  ASSERT_TRUE(old.ok() && old->has_value());
  EXPECT_EQ((*old)->llm_prompt_tokens, 0);
  EXPECT_EQ((*old)->llm_completion_tokens, 0);
  EXPECT_EQ((*old)->llm_cost, 0);
  EXPECT_EQ((*old)->proposed_at, 0);
}

TEST(MetaCodecTest, UnknownKeysAreIgnoredAndMissingOnesDefault) {
  auto meta = meta_codec::Decode(
      {{"schema_version", "1"}, {"campaign.name", "x"}, {"campaign.from_the_future", "?"}});
  ASSERT_TRUE(meta.ok());
  ASSERT_TRUE(meta->has_value());
  EXPECT_EQ((*meta)->name, "x");
  EXPECT_EQ((*meta)->state, CampaignState::kRunning);
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

// A state or stop reason this build does not know (one an older or newer build wrote) reads as
// kUnknown: the store still opens, and the known words read back as themselves.
TEST(MetaCodecTest, AnUnknownStateOrStopReasonReadsAsUnknown) {
  CampaignMeta meta;
  meta.name = "c";
  meta.state = CampaignState::kStopped;
  meta.stop_reason = StopReason::kMaxTime;
  meta_codec::Rows rows = meta_codec::Encode(meta);
  auto back = meta_codec::Decode(rows);
  ASSERT_TRUE(back.ok() && back->has_value());
  EXPECT_EQ((*back)->state, CampaignState::kStopped);
  EXPECT_EQ((*back)->stop_reason, StopReason::kMaxTime);
  for (auto& [key, value] : rows) {
    if (key == std::string(meta_codec::kPrefix) + "state") value = "paused";
    if (key == std::string(meta_codec::kPrefix) + "stop_reason") value = "too_noisy";
  }
  back = meta_codec::Decode(rows);
  ASSERT_TRUE(back.ok() && back->has_value());
  EXPECT_EQ((*back)->state, CampaignState::kUnknown);
  EXPECT_EQ((*back)->stop_reason, StopReason::kUnknown);
  EXPECT_EQ((*back)->name, "c");
}

}  // namespace
}  // namespace arbor

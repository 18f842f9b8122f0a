#include "app/secrets.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "app/command_target.h"
#include "store/kb_store.h"
#include "store/sqlite_store.h"
#include "store/store_testing.h"
#include "util/strings.h"

namespace arbor {
namespace {

using store_testing::ScratchDir;

constexpr std::string_view kCanary = "sk-CANARY/9x+Q\"uo\\te d\nline-7f3a";
constexpr const char* kName = "ARBOR_TEST_KEY";

Scrubber CanaryScrubber() {
  Scrubber s;
  s.Add(kName, std::string(kCanary));
  return s;
}

// The canary in every form the Scrubber knows, each inside ordinary text.
std::string EveryForm() {
  std::string text;
  for (const std::string& form : Scrubber::Forms(kCanary)) text += "<" + form + "> ";
  return text;
}

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Every byte SQLite wrote for the database at `path`: the file, its WAL and shared memory.
std::string RawBytes(const std::string& path) {
  std::string bytes;
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) bytes += ReadAll(path + suffix);
  return bytes;
}

Mutation LeakyMutation() {
  Node n = store_testing::FullNode(2, kRootId);
  n.diagnosis = "build failed: " + EveryForm();
  n.summary = "set key " + std::string(kCanary);
  n.critic.evidence = "line 3: " + EveryForm();
  n.critic.suggestion = "rotate " + std::string(kCanary);
  n.critic.constraints.push_back(Constraint{.action = "x", .reason = EveryForm()});
  n.score.kb.push_back(KbRef{.uid = "u/1", .id = 1, .weight = 1, .summary = EveryForm()});
  n.agent.findings = {EveryForm()};
  n.agent.questions = {"rotate " + std::string(kCanary) + "?"};
  Mutation m;
  m.nodes = {store_testing::RootNode(), n};
  m.events.push_back(Event{.node = 2, .kind = "crashed", .message = EveryForm(), .data = ""});
  m.events.back().data = nlohmann::json{{"tail", EveryForm()}, {"n", 2}}.dump();
  Profile p;
  p.components.push_back(Component{.name = std::string(kCanary), .layer = "l", .share = 1});
  p.raw.emplace_back(EveryForm(), 1.0);
  m.profiles.emplace_back(2, p);
  ActionSpec proposed;
  proposed.id = "kernel.prefetch";
  proposed.describe = "prefetch; key " + EveryForm();
  proposed.apply.kind = ApplySpec::Kind::kAgent;
  proposed.apply.goal = EveryForm();
  m.actions.push_back(proposed);
  m.prompts.push_back({2, "implement", "the key is " + EveryForm()});
  return m;
}

TEST(ScrubberFromEnv, ReadsSetVariablesOnly) {
  setenv("ARBOR_SECRET_TEST_A", "value-of-a-123", 1);
  setenv("ARBOR_SECRET_TEST_EMPTY", "", 1);
  unsetenv("ARBOR_SECRET_TEST_UNSET");
  Scrubber s = ScrubberFromEnv(
      {"ARBOR_SECRET_TEST_A", "ARBOR_SECRET_TEST_EMPTY", "ARBOR_SECRET_TEST_UNSET"});
  EXPECT_EQ(s.Scrub("k=value-of-a-123"), "k=[redacted:ARBOR_SECRET_TEST_A]");
  EXPECT_TRUE(ScrubberFromEnv({"ARBOR_SECRET_TEST_UNSET", "ARBOR_SECRET_TEST_EMPTY"}).empty());
  unsetenv("ARBOR_SECRET_TEST_A");
  unsetenv("ARBOR_SECRET_TEST_EMPTY");
}

TEST(ScrubbingStore, NoFormOfASecretReachesTheSqliteFile) {
  Scrubber scrubber = CanaryScrubber();
  ScratchDir dir;
  // A control: without the decorator the canary does land in the file, so the check below
  // can see it.
  {
    auto plain = SqliteStore::Open(dir.File("plain.db"), OpenMode::kReadWrite);
    ASSERT_TRUE(plain.ok());
    Status applied = (*plain)->Apply(LeakyMutation());
    ASSERT_TRUE(applied.ok()) << applied.error().message;
  }
  ASSERT_TRUE(scrubber.Contains(RawBytes(dir.File("plain.db"))));

  std::string path = dir.File("arbor.db");
  {
    auto sqlite = SqliteStore::Open(path, OpenMode::kReadWrite);
    ASSERT_TRUE(sqlite.ok());
    ScrubbingStore store(sqlite->get(), &scrubber);
    ASSERT_TRUE(store.Apply(LeakyMutation()).ok());
    auto nodes = store.LoadNodes();
    ASSERT_TRUE(nodes.ok());
    ASSERT_EQ(nodes->size(), 2u);
    EXPECT_NE((*nodes)[1].diagnosis.find("[redacted:ARBOR_TEST_KEY]"), std::string::npos);
    EXPECT_EQ((*nodes)[1].summary, "set key [redacted:ARBOR_TEST_KEY]");
    EXPECT_EQ((*nodes)[1].action_id, "kernel.gemm-tiled");  // identity is left alone
    auto events = store.LoadEvents(kNoNode, 0, -1);
    ASSERT_TRUE(events.ok());
    ASSERT_EQ(events->size(), 1u);
    EXPECT_FALSE(scrubber.Contains((*events)[0].message + (*events)[0].data));
    EXPECT_TRUE(scrubber.Contains(RawBytes(dir.File("plain.db"))));
  }
  EXPECT_FALSE(scrubber.Contains(RawBytes(path)));
}

TEST(ScrubbingKnowledgeBase, NoFormOfASecretReachesTheKbFile) {
  Scrubber scrubber = CanaryScrubber();
  ScratchDir dir;
  std::string path = dir.File("kb.db");
  {
    auto kb = KbStore::Open(path, OpenMode::kReadWrite);
    ASSERT_TRUE(kb.ok());
    ScrubbingKnowledgeBase scrubbing(kb->get(), &scrubber);
    KbEntry e;
    e.uid = "c/2";
    e.campaign_uid = "c";
    e.action_id = "a";
    e.outcome = "crashed";
    e.lesson = "crashed with " + EveryForm();
    e.conflict = std::string(kCanary);
    ASSERT_TRUE(scrubbing.Record({e}).ok());
    auto loaded = scrubbing.Load(KbQuery{});
    ASSERT_TRUE(loaded.ok());
    ASSERT_EQ(loaded->size(), 1u);
    EXPECT_NE((*loaded)[0].lesson.find("[redacted:ARBOR_TEST_KEY]"), std::string::npos);
  }
  EXPECT_FALSE(scrubber.Contains(RawBytes(path)));
}

class RecordingSink : public EventSink {
 public:
  void OnEvent(const Event& e) override { events.push_back(e); }
  void OnProgress(const Progress&) override {}
  std::vector<Event> events;
};

TEST(ScrubbingEventSink, ScrubsMessageAndData) {
  Scrubber scrubber = CanaryScrubber();
  RecordingSink inner;
  ScrubbingEventSink sink(&inner, &scrubber);
  sink.OnEvent(Event{.kind = "x", .message = EveryForm(), .data = EveryForm()});
  ASSERT_EQ(inner.events.size(), 1u);
  EXPECT_FALSE(scrubber.Contains(inner.events[0].message + inner.events[0].data));
}

// Event data must stay a JSON object (the store refuses anything else), also when a redaction
// would split an escape sequence or swallow a quote.
TEST(ScrubEvent, KeepsDataValidJson) {
  Scrubber scrubber;
  scrubber.Add("K", "nabcdef-secret");   // after '\\' in JSON text it reads as an escape
  scrubber.Add("Q", "quoted-secret\"");  // its plain form swallows a closing quote
  struct Case {
    std::string data;
    std::string want;
  };
  for (const Case& c : {
           Case{R"({"a":"secret nabcdef-secret","b":[1,"x"]})",
                R"({"a":"secret [redacted:K]","b":[1,"x"]})"},
           Case{R"({"a":"x\\nabcdef-secret y"})", R"({"a":"x\\[redacted:K] y"})"},
           Case{R"({"a":"x\nabcdef-secret y","b":"quoted-secret\""})", ""},  // replaced whole
           Case{R"({"a":"quoted-secret\"","b":2})", R"({"a":"[redacted:Q]","b":2})"},
       }) {
    Event e{.kind = "x", .data = c.data};
    ScrubEvent(scrubber, &e);
    EXPECT_TRUE(nlohmann::json::accept(e.data)) << e.data;
    EXPECT_FALSE(scrubber.Contains(e.data)) << e.data;
    if (!c.want.empty()) {
      EXPECT_EQ(e.data, c.want);
    }
  }
}

TEST(CommandTargetScrubbing, LogsTailAndDetailHoldNoSecret) {
  Scrubber scrubber;
  scrubber.Add(kName, "sk-live-0123456789abcdef");
  ScratchDir dir;
  CampaignSpec spec;
  spec.target.build =
      "echo 'token sk-live-0123456789abcdef'; echo 'c2stbGl2ZS0wMTIzNDU2Nzg5YWJjZGVm' >&2; exit 3";
  spec.target.build =
      "echo 'out sk-live-0123456789abcdef' > \"$ARBOR_OUT/metrics.json\"; " + spec.target.build;
  CommandTarget target(&spec, dir.File("runs"));
  RunContext ctx{.node = 2, .worktree = dir.File(""), .label = "build"};
  StepResult r;
  {
    SecretsLayer secrets({});  // no secret set: installs nothing
    EXPECT_TRUE(secrets.empty());
    r = target.Build(ctx);
    EXPECT_TRUE(scrubber.Contains(ReadAll(r.log_dir + "/stdout")));  // left as written
  }
  ScopedScrubber installed(&scrubber);
  r = target.Build(ctx);
  EXPECT_EQ(r.kind, ExitKind::kFailed);
  EXPECT_EQ(Trim(r.tail), "[redacted:ARBOR_TEST_KEY]");
  EXPECT_EQ(ReadAll(r.log_dir + "/stdout"), "token [redacted:ARBOR_TEST_KEY]\n");
  EXPECT_FALSE(scrubber.Contains(ReadAll(r.log_dir + "/stderr")));
  EXPECT_EQ(ReadAll(r.log_dir + "/out/metrics.json"), "out [redacted:ARBOR_TEST_KEY]\n");
}

// The layer reads the variables, installs its Scrubber for the files of the process while it
// lives, and wraps the ports only when a secret is set.
TEST(SecretsLayer, InstallsItsScrubberAndWrapsPortsWhileItLives) {
  setenv("ARBOR_SECRET_TEST_LAYER", "sk-layer-0123456789", 1);
  EXPECT_EQ(InstalledScrubber(), nullptr);
  {
    SecretsLayer secrets({"ARBOR_SECRET_TEST_LAYER"});
    ASSERT_FALSE(secrets.empty());
    EXPECT_EQ(InstalledScrubber(), &secrets.scrubber());
    EXPECT_EQ(ScrubInstalled("k=sk-layer-0123456789"), "k=[redacted:ARBOR_SECRET_TEST_LAYER]");
    ScratchDir dir;
    ASSERT_TRUE(WriteKeptFile(dir.File("report.html"), "<p>sk-layer-0123456789</p>").ok());
    EXPECT_EQ(ReadAll(dir.File("report.html")), "<p>[redacted:ARBOR_SECRET_TEST_LAYER]</p>");
    auto inner = SqliteStore::Open(dir.File("a.db"), OpenMode::kReadWrite);
    ASSERT_TRUE(inner.ok());
    EXPECT_NE(secrets.Wrap(inner->get()), inner->get());
  }
  EXPECT_EQ(InstalledScrubber(), nullptr);
  SecretsLayer none({"ARBOR_SECRET_TEST_UNSET_LAYER"});
  EXPECT_EQ(InstalledScrubber(), nullptr);
  ScratchDir dir;
  auto inner = SqliteStore::Open(dir.File("b.db"), OpenMode::kReadWrite);
  ASSERT_TRUE(inner.ok());
  EXPECT_EQ(none.Wrap(inner->get()), inner->get());
  unsetenv("ARBOR_SECRET_TEST_LAYER");
}

}  // namespace
}  // namespace arbor

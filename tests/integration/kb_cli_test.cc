// `arbor kb list|show|export|import|forget` on a real knowledge-base file (docs/cli.md).
// The harness points ARBOR_KB at <workspace>/kb.db, so nothing touches the user's.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "harness.h"

namespace arbor::integration {
namespace {

using json = nlohmann::json;

const char* const kEntries[] = {
    R"({"v": 1, "uid": "toy-1/2", "campaign": "toy", "campaign_uid": "toy-1", "node": 2,)"
    R"( "action_id": "compiler.O3", "category": "compiler", "layer": "compiler",)"
    R"( "outcome": "kept", "gain": 0.31, "ci_low": 1.25, "ci_high": 1.38, "controlled": true,)"
    R"( "hardware": {"cpu_model": "Sim CPU", "cores": 8, "isa": ["avx2"], "mem_gib": 16,)"
    R"( "gpu": ""}, "workload": ["campaign=toy"], "lesson": "O3 helps the hot loop."})",
    R"({"v": 1, "uid": "toy-1/3", "campaign": "toy", "campaign_uid": "toy-1", "node": 3,)"
    R"( "action_id": "runtime.threads", "value": "8", "category": "runtime",)"
    R"( "outcome": "reverted", "gain": -0.02})",
    R"({"v": 1, "uid": "serve-1/5", "campaign": "serve", "campaign_uid": "serve-1",)"
    R"( "node": 5, "action_id": "runtime.threads", "value": "8", "category": "runtime",)"
    R"( "outcome": "crashed", "rca": "oom"})",
};

std::string Jsonl() {
  std::string out;
  for (const char* line : kEntries) out += std::string(line) + "\n";
  return out;
}

std::vector<json> Lines(const std::string& text) {
  std::vector<json> out;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    if (!line.empty()) out.push_back(json::parse(line));
  }
  return out;
}

// What an export carries beyond ids: the store reassigns ids and recomputes the marks.
json Content(json j) {
  for (const char* key : {"id", "superseded_by", "conflict"}) j.erase(key);
  return j;
}

class IntegrationKbCli : public testing::Test {
 protected:
  ProcResult Kb(std::vector<std::string> args) {
    args.insert(args.begin(), "kb");
    return ws_.Arbor(args);
  }
  void Import() {
    WriteFile(ws_.aux() + "/in.jsonl", Jsonl());
    ProcResult r = Kb({"import", ws_.aux() + "/in.jsonl"});
    ASSERT_EQ(r.exit_code, 0) << r.Describe();
    EXPECT_EQ(r.out, "imported 3 entries, 0 already present\n");
  }
  TempWorkspace ws_;
};

TEST_F(IntegrationKbCli, ImportListShowExportRoundTrip) {
  Import();
  ProcResult again = Kb({"import", ws_.aux() + "/in.jsonl"});
  EXPECT_EQ(again.out, "imported 0 entries, 3 already present\n") << again.Describe();

  ProcResult list = Kb({"list"});
  ASSERT_EQ(list.exit_code, 0) << list.Describe();
  EXPECT_EQ(std::count(list.out.begin(), list.out.end(), '\n'), 3) << list.out;
  EXPECT_NE(list.out.find("compiler.O3"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("runtime.threads[8]"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("Sim CPU 8c"), std::string::npos) << list.out;
  ProcResult filtered = Kb({"list", "--campaign", "serve", "--json"});
  ASSERT_EQ(filtered.exit_code, 0) << filtered.Describe();
  auto lines = Lines(filtered.out);
  ASSERT_EQ(lines.size(), 1u) << filtered.out;
  EXPECT_EQ(lines[0]["uid"], "serve-1/5");
  EXPECT_EQ(Lines(Kb({"list", "--json", "--limit", "2"}).out).size(), 2u);

  ProcResult show = Kb({"show", "1"});
  ASSERT_EQ(show.exit_code, 0) << show.Describe();
  EXPECT_NE(show.out.find("O3 helps the hot loop."), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("toy-1/2"), std::string::npos) << show.out;
  ProcResult show_json = Kb({"show", "3", "--json"});
  ASSERT_EQ(show_json.exit_code, 0) << show_json.Describe();
  EXPECT_EQ(json::parse(show_json.out)["rca"], "oom");
  EXPECT_EQ(Kb({"show", "42"}).exit_code, 4);

  // Export carries the imported content, field for field (ids and marks are the file's).
  ProcResult exported = Kb({"export"});
  ASSERT_EQ(exported.exit_code, 0) << exported.Describe();
  auto out = Lines(exported.out);
  ASSERT_EQ(out.size(), 3u);
  auto in = Lines(Jsonl());
  for (size_t i = 0; i < in.size(); ++i) {
    const json& expected = in[i];
    json got = Content(out[i]);
    for (const auto& [key, value] : expected.items()) EXPECT_EQ(got[key], value) << key;
  }
  // --out writes the same text, and importing it into another file reproduces the content.
  const std::string file = ws_.aux() + "/out.jsonl";
  ProcResult to_file = Kb({"export", "--out", file});
  EXPECT_EQ(to_file.out, "exported 3 entries to " + file + "\n") << to_file.Describe();
  EXPECT_EQ(ReadFile(file), exported.out);
  const std::string other = ws_.aux() + "/other.db";
  EXPECT_EQ(Kb({"import", file, "--kb", other}).exit_code, 0);
  auto copied = Lines(Kb({"export", "--kb", other}).out);
  ASSERT_EQ(copied.size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(Content(copied[i]), Content(out[i]));
}

TEST_F(IntegrationKbCli, Forget) {
  Import();
  ProcResult none = Kb({"forget"});
  EXPECT_EQ(none.exit_code, 2) << none.Describe();
  EXPECT_EQ(Kb({"forget", "1", "--all"}).exit_code, 2);
  ProcResult one = Kb({"forget", "2"});
  EXPECT_EQ(one.out, "forgot 1 entries\n") << one.Describe();
  ProcResult by_campaign = Kb({"forget", "--campaign", "serve"});
  EXPECT_EQ(by_campaign.out, "forgot 1 entries\n") << by_campaign.Describe();
  auto left = Lines(Kb({"list", "--json"}).out);
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0]["uid"], "toy-1/2");
  EXPECT_EQ(Kb({"forget", "--all"}).out, "forgot 1 entries\n");
  EXPECT_EQ(Kb({"list"}).out, "no entries\n");
}

TEST_F(IntegrationKbCli, MalformedImportNamesTheLineAndImportsNothing) {
  std::string text = Jsonl();
  text += R"({"v": 1, "uid": "x/1", "action_id": "a", "outcome": "kept", "gain": "big"})";
  WriteFile(ws_.aux() + "/bad.jsonl", text);
  ProcResult r = Kb({"import", ws_.aux() + "/bad.jsonl"});
  EXPECT_EQ(r.exit_code, 3) << r.Describe();
  EXPECT_NE(r.err.find("bad.jsonl: line 4: field 'gain': expected a number"), std::string::npos)
      << r.err;
  EXPECT_FALSE(std::filesystem::exists(ws_.root() + "/kb.db"));
  ProcResult missing = Kb({"import", ws_.aux() + "/nowhere.jsonl"});
  EXPECT_EQ(missing.exit_code, 3) << missing.Describe();
}

TEST_F(IntegrationKbCli, MissingKnowledgeBaseIsAClearStateError) {
  for (const char* verb : {"list", "export"}) {
    ProcResult r = Kb({verb});
    EXPECT_EQ(r.exit_code, 4) << verb << ": " << r.Describe();
    EXPECT_NE(r.err.find("no knowledge base at " + ws_.root() + "/kb.db"), std::string::npos)
        << r.err;
  }
  EXPECT_EQ(Kb({"show", "1"}).exit_code, 4);
  EXPECT_EQ(Kb({"forget", "--all"}).exit_code, 4);
  EXPECT_FALSE(std::filesystem::exists(ws_.root() + "/kb.db"));  // nothing created
}

}  // namespace
}  // namespace arbor::integration

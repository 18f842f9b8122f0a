// Landscape files: malformed inputs get one line naming the file, the JSON path and the
// problem; every shipped landscape parses and has a computable optimum.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "bench/search/landscape.h"
#include "bench/search/landscape_testing.h"

namespace arbor::search {
namespace {

using nlohmann::json;

struct Case {
  const char* pointer;  // JSON pointer into the example to replace (or add)
  json value;
  std::string message;  // the whole expected error
};

std::string ErrorOf(const std::string& text) {
  Result<Landscape> l = Landscape::Parse(text, "bad.json");
  return l.ok() ? "(parsed)" : l.error().message;
}

TEST(LandscapeParseTest, ExampleParsesWithDefaults) {
  Result<Landscape> l = Landscape::Parse(testing::kExample, "example.json");
  ASSERT_TRUE(l.ok()) << l.error().message;
  EXPECT_EQ(l->name, "example");
  EXPECT_EQ(l->repetitions, 3);
  EXPECT_EQ(l->noise.cv, 0.1);
  EXPECT_EQ(l->noise.outlier_factor, 0.7);  // default
  EXPECT_EQ(l->noise.drift_period, 500);    // default
  const LandscapeAction& tile = *l->Find("kernel.tile");
  EXPECT_EQ(tile.prior.speedup, 1.4);
  EXPECT_EQ(tile.prior.cost_s, 12);
  EXPECT_EQ(tile.values[3].crash_rate, 1);
  EXPECT_EQ(l->Find("fast_a")->prior.speedup, 1.2);  // default prior
  EXPECT_EQ(l->Find("fuse")->when[0].with, std::vector<std::string>{"fast_a"});
}

TEST(LandscapeParseTest, MalformedInputsNameThePath) {
  const std::vector<Case> cases = {
      {"/actions/0/crash_rat", 0.1,
       "bad.json: actions[0].crash_rat: unknown key 'crash_rat'; expected one of id, layer, "
       "category, describe, effects, when, crash_rate, crash_with, accuracy_fail, "
       "accuracy_fixed_by, crash_unless, inflation, values, prior"},
      {"/actions/3/crash_unless", json::array({"ghost"}),
       "bad.json: actions[3].crash_unless[0]: unknown action 'ghost'; expected a declared id"},
      {"/actions/8/values/0/crash_unless", json::array({"kernel.tile"}),
       "bad.json: actions[8].values[0].crash_unless[0]: names the action itself; expected "
       "another action's id"},
      {"/actions/0/inflation", 0.5,
       "bad.json: actions[0].inflation: is 0.5, expected a number >= 1 (1 = honest readings)"},
      {"/components/2/share", 0.05, "bad.json: components: shares sum to 0.95, expected 1 (±1e-6)"},
      {"/actions/1/effects/b", 0,
       "bad.json: actions[1].effects.b: is 0, expected a speedup factor > 0"},
      {"/actions/8/values/1/crash_rate", 1.5,
       "bad.json: actions[8].values[1].crash_rate: is 1.5, expected a number in [0, 1]"},
      {"/actions/1/id", "fast_a",
       "bad.json: actions[1].id: 'fast_a' is also actions[0].id; expected unique ids"},
      {"/actions/0/effects/zz", 2,
       "bad.json: actions[0].effects.zz: unknown component 'zz'; expected a declared component or "
       "\"*\""},
      {"/actions/4/crash_with/0", "nope",
       "bad.json: actions[4].crash_with[0]: unknown action 'nope'; expected a declared id"},
      {"/actions/3/when/0/with/0", "ghost",
       "bad.json: actions[3].when[0].with[0]: unknown action 'ghost'; expected a declared id"},
      {"/actions/0/crash_rate", "high",
       "bad.json: actions[0].crash_rate: is a string \"high\", expected a number in [0, 1]"},
      {"/noise/cv", -0.1, "bad.json: noise.cv: is -0.1, expected a number >= 0"},
      {"/actions/4/prior/conflicts/0", "unsafe",
       "bad.json: actions[4].prior.conflicts[0]: names the action itself; expected another "
       "action's id"},
      {"/actions/5/accuracy_fixed_by/0", "approx",
       "bad.json: actions[5].accuracy_fixed_by[0]: names the action itself; expected another "
       "action's id"},
      {"/actions/8/values/1/value", "8",
       "bad.json: actions[8].values[1].value: \"8\" appears twice; expected unique values"},
      {"/extra", true,
       "bad.json: extra: unknown key 'extra'; expected one of name, description, base_value, "
       "repetitions, noise, components, actions"},
      {"/repetitions", 2.5,
       "bad.json: repetitions: is a number 2.5, expected an integer in [1, 1000]"},
      {"/actions/2/id", "fast a",
       "bad.json: actions[2].id: 'fast a' is not a valid id; expected letters, digits, '.', '_' "
       "or '-', not starting with '.' or '-'"},
  };
  for (const Case& c : cases) {
    json doc = json::parse(testing::kExample);
    doc[json::json_pointer(c.pointer)] = c.value;
    EXPECT_EQ(ErrorOf(doc.dump()), c.message) << c.pointer;
  }
}

TEST(LandscapeParseTest, StructuralErrors) {
  EXPECT_EQ(ErrorOf("{\"name\": "),
            "bad.json: JSON syntax error: parse error at line 1, column 10: syntax error while "
            "parsing value - unexpected end of input; expected '[', '{', or a literal");
  EXPECT_EQ(ErrorOf("[1]"), "bad.json: top level: is an array, expected an object");
  json doc = json::parse(testing::kExample);
  doc.erase("components");
  EXPECT_EQ(ErrorOf(doc.dump()), "bad.json: components: is missing; expected an array");
  doc = json::parse(testing::kExample);
  doc["actions"][0].erase("layer");
  EXPECT_EQ(ErrorOf(doc.dump()), "bad.json: actions[0].layer: is missing; expected a string");
  doc = json::parse(testing::kExample);
  doc["actions"][1]["id"] = "fast.a";  // LS_FAST_A, like fast_a
  EXPECT_EQ(ErrorOf(doc.dump()),
            "bad.json: actions[1].id: 'fast.a' and 'fast_a' map to the same variable LS_FAST_A; "
            "expected ids that differ in more than punctuation");
  doc = json::parse(testing::kExample);
  doc["actions"][0]["prior"] = {{"requires", {"fuse"}}};  // fuse already requires fast_a
  EXPECT_EQ(ErrorOf(doc.dump()),
            "bad.json: actions[0].prior.requires: requires form a cycle through 'fast_a'; "
            "expected no cycle");
  Result<Landscape> missing = Landscape::Load("/nonexistent/l.json");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.error().message,
            "/nonexistent/l.json: cannot read the landscape (No such file or directory)");
}

TEST(LandscapeParseTest, TheDocumentedExampleParsesWithTheDocumentedValues) {
  std::ifstream in(std::string(DOCS_DIR) + "/search-bench.md");
  std::stringstream text;
  text << in.rdbuf();
  const std::string doc = text.str();
  const size_t start = doc.find("```json\n");
  ASSERT_NE(start, std::string::npos);
  const size_t end = doc.find("```", start + 8);
  Result<Landscape> l = Landscape::Parse(doc.substr(start + 8, end - start - 8), "doc");
  ASSERT_TRUE(l.ok()) << l.error().message;
  Config c = {{"framework.nhwc", "on"}, {"kernel.fusion", "on"}};
  EXPECT_NEAR(l->TrueValue(c), 156.9, 0.05);
  c["kernel.tile"] = "64";
  EXPECT_NEAR(l->TrueValue(c), 171.3, 0.05);
  c["kernel.tile"] = "256";
  EXPECT_EQ(l->CrashRate(c), 1);
}

std::vector<std::string> ShippedLandscapes() {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(LANDSCAPES_DIR)) {
    if (e.path().extension() == ".json") files.push_back(e.path().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(LandscapeParseTest, EveryShippedLandscapeParsesAndHasAnOptimum) {
  std::vector<std::string> files = ShippedLandscapes();
  EXPECT_GE(files.size(), 8u);
  int inexact = 0;
  for (const std::string& file : files) {
    SCOPED_TRACE(file);
    Result<Landscape> l = Landscape::Load(file);
    ASSERT_TRUE(l.ok()) << l.error().message;
    EXPECT_EQ(l->name + ".json", std::filesystem::path(file).filename().string());
    EXPECT_FALSE(l->description.empty());
    Optimum o = FindOptimum(*l);  // its speed is the search benchmark's business, not a test's
    EXPECT_FALSE(l->Broken(o.config));
    EXPECT_NEAR(o.value, l->TrueValue(o.config), 1e-9 * o.value);
    EXPECT_GT(o.value, l->base_value);  // every landscape has something to find
    // Honesty: the campaign file's declared requires/conflicts never rule the optimum out.
    for (const auto& [id, value] : o.config) {
      for (const std::string& r : l->Find(id)->prior.requires_) {
        EXPECT_TRUE(o.config.count(r) > 0) << id << " requires " << r;
      }
      for (const std::string& c : l->Find(id)->prior.conflicts) {
        EXPECT_TRUE(o.config.count(c) == 0) << id << " conflicts with " << c;
      }
    }
    if (!o.exact) ++inexact;
    std::printf("%-28s %2zu actions, space %20llu, optimum %8.2f (%.2fx)%s\n", l->name.c_str(),
                l->actions.size(), static_cast<unsigned long long>(l->SpaceSize()), o.value,
                o.value / l->base_value, o.exact ? " exact" : "");
  }
  EXPECT_GE(inexact, 1);  // the large landscape cannot be enumerated
}

}  // namespace
}  // namespace arbor::search

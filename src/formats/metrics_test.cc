#include "formats/metrics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

namespace arbor {
namespace {

MetricSource Json(const std::string& expr) {
  return MetricSource{MetricSource::Kind::kJson, expr, "json:" + expr};
}
MetricSource Regex(const std::string& expr) {
  return MetricSource{MetricSource::Kind::kRegex, expr, "regex:" + expr};
}

struct MetricCase {
  const char* name;
  MetricSource src;
  std::string output;
  std::string metrics_file;
  double want = 0;    // when error is empty
  std::string error;  // exact message, or "" for success
};

TEST(ExtractMetricTest, Table) {
  const std::vector<MetricCase> cases = {
      {"nested object", Json("throughput.tok_per_s"), R"({"throughput": {"tok_per_s": 812.5}})", "",
       812.5, ""},
      {"array index", Json("runs.1.ms"), R"({"runs": [{"ms": 3}, {"ms": 4.5}]})", "", 4.5, ""},
      {"top-level array", Json("0"), "[7, 8]", "", 7, ""},
      {"integer", Json("n"), R"({"n": 42})", "", 42, ""},
      {"numeric string", Json("x"), R"({"x": " 1.5e3 "})", "", 1500, ""},
      {"pretty-printed whole output", Json("a.b"), "{\n  \"a\": {\n    \"b\": -2\n  }\n}\n", "", -2,
       ""},
      {"metrics.json wins over stdout", Json("v"), R"({"v": 1})", R"({"v": 2})", 2, ""},
      {"last json line", Json("v"), "log\n{\"v\": 1}\nmore log\n{\"v\": 3}\ndone\n", "", 3, ""},
      {"last line where the path resolves", Json("v"),
       "{\"v\": 1}\n{\"other\": 9}\n  {\"progress\": 1}  \n", "", 1, ""},
      {"crlf lines", Json("v"), "start\r\n{\"v\": 5}\r\nend\r\n", "", 5, ""},
      {"missing key", Json("throughput.tok_per_s"), R"({"throughput": {"tokens": 1}})", "", 0,
       "metric json:throughput.tok_per_s: key 'tok_per_s' not found under 'throughput'"},
      {"missing key with a suggestion", Json("throughput.tok_per_s"),
       R"({"throughput": {"tok_per_sec": 1}})", "", 0,
       "metric json:throughput.tok_per_s: key 'tok_per_s' not found under 'throughput' (did "
       "you mean 'tok_per_sec'?)"},
      {"missing top-level key", Json("latency.p99"), R"({"throughput": 1})", "", 0,
       "metric json:latency.p99: key 'latency' not found at the top level"},
      {"string value", Json("x"), R"({"x": "fast"})", "", 0,
       "metric json:x: value at 'x' is a string \"fast\", not a number"},
      {"null value", Json("a.x"), R"({"a": {"x": null}})", "", 0,
       "metric json:a.x: value at 'a.x' is null, not a number"},
      {"object value", Json("a"), R"({"a": {"x": 1}})", "", 0,
       "metric json:a: value at 'a' is an object, not a number"},
      {"non-finite numeric string", Json("x"), R"({"x": "inf"})", "", 0,
       "metric json:x: value at 'x' is not finite (inf)"},
      {"index out of range", Json("runs.2"), R"({"runs": [1, 2]})", "", 0,
       "metric json:runs.2: index 2 out of range under 'runs' (2 elements)"},
      {"key into array", Json("runs.ms"), R"({"runs": [1, 2]})", "", 0,
       "metric json:runs.ms: 'ms' is not an index into the array under 'runs'"},
      {"key into number", Json("a.b.c"), R"({"a": {"b": 3}})", "", 0,
       "metric json:a.b.c: 'a.b' is a number 3, not an object or array"},
      {"no json", Json("v"), "hello\nworld\n", "", 0,
       "metric json:v: no JSON object in the output (12 bytes)"},
      {"json lines without the path", Json("v"), "{\"a\": 1}\n{\"b\": 2}\n", "", 0,
       "metric json:v: key 'v' not found at the top level (in the last of 2 JSON lines of the "
       "output)"},
      {"bad metrics.json", Json("v"), "", "{\"v\": ", 0,
       "metric json:v: $ARBOR_OUT/metrics.json is not valid JSON: parse error at line 1, "
       "column 7: syntax error while parsing value - unexpected end of input; expected '[', "
       "'{', or a literal"},
      {"metrics.json without the key", Json("v"), "{\"v\": 1}", "{\"w\": 1}", 0,
       "metric json:v: key 'v' not found at the top level in $ARBOR_OUT/metrics.json"},
      {"metrics.json suggestion comes last", Json("tok_per_s"), "", R"({"tok_per_sec": 1})", 0,
       "metric json:tok_per_s: key 'tok_per_s' not found at the top level in "
       "$ARBOR_OUT/metrics.json (did you mean 'tok_per_sec'?)"},
      {"huge number in json", Json("v"), R"({"v": 1e308, "w": 2})", "", 1e308, ""},
      {"Infinity on a JSON line", Json("ops"), "warming up\n{\"ops\": Infinity}\n", "", 0,
       "metric json:ops: the JSON line of the output holds a non-finite number (Infinity), "
       "which is not a reading"},
      {"printf nan on a JSON line", Json("ops"), "{\"ops\": -nan, \"n\": 3}\n", "", 0,
       "metric json:ops: the JSON line of the output holds a non-finite number (-nan), which is "
       "not a reading"},
      {"NaN in a pretty-printed document", Json("ops"), "{\n  \"ops\": NaN\n}\n", "", 0,
       "metric json:ops: the JSON document of the output holds a non-finite number (NaN), which "
       "is not a reading"},
      {"Infinity in metrics.json", Json("ops"), "", "{\"ops\": Infinity}", 0,
       "metric json:ops: the JSON in $ARBOR_OUT/metrics.json holds a non-finite number "
       "(Infinity), which is not a reading"},
      {"a good line wins over a broken one", Json("ops"), "{\"ops\": 5}\n{\"x\": inf}\n", "", 5,
       ""},
      {"a word that starts like inf is no literal", Json("v"), "{\"v\": info}\n", "", 0,
       "metric json:v: no JSON object in the output (12 bytes)"},
      {"regex last match", Regex("tok/s: ([0-9.]+)"),
       "tok/s: 1.0\nwarmup\ntok/s: 2.0 tok/s: 2.5\nbye\n", "", 2.5, ""},
      {"regex without a group uses the match", Regex("[0-9]+\\.[0-9]+"), "took 3.25 s", "", 3.25,
       ""},
      {"regex progress bar with carriage returns", Regex("done ([0-9]+)"), "10%\r50%\rdone 7\r", "",
       7, ""},
      {"regex no match", Regex("tok/s: ([0-9.]+)"), "nothing here\n", "", 0,
       "metric regex:tok/s: ([0-9.]+): no match in the output"},
      {"regex group not a number", Regex("speed: (\\S+)"), "speed: fast\n", "", 0,
       "metric regex:speed: (\\S+): group 1 'fast' is not a number"},
      {"regex non-finite", Regex("v=(\\S+)"), "v=nan\n", "", 0,
       "metric regex:v=(\\S+): group 1 'nan' is not finite (nan)"},
      {"regex optional group absent", Regex("v(=([0-9]+))?"), "v\n", "", 0,
       "metric regex:v(=([0-9]+))?: group 1 took no part in the match 'v'"},
      {"invalid regex", Regex("v=([0-9]+"), "v=1\n", "", 0,
       "metric regex:v=([0-9]+: regex error: Mismatched '(' and ')' in regular expression"},
  };
  for (const MetricCase& c : cases) {
    SCOPED_TRACE(c.name);
    Result<double> r = ExtractMetric(c.src, c.output, c.metrics_file);
    if (c.error.empty()) {
      ASSERT_TRUE(r.ok()) << r.error().message;
      EXPECT_DOUBLE_EQ(*r, c.want);
    } else {
      ASSERT_FALSE(r.ok()) << *r;
      EXPECT_EQ(r.error().message, c.error);
    }
  }
}

TEST(ExtractMetricTest, LabelFallsBackToKindAndExpr) {
  MetricSource src{MetricSource::Kind::kJson, "x", ""};
  Result<double> r = ExtractMetric(src, "{}", "");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "metric json:x: key 'x' not found at the top level");
}

TEST(ExtractMetricTest, RegexSurvivesHugeOutput) {
  // 4 MiB of noise, a 100 KiB line (skipped: it would overflow std::regex's recursion) and the
  // metric at the end.
  std::string out;
  for (int i = 0; i < 65536; ++i) out += "noise line " + std::to_string(i) + " tok/s: 1.0 pad\n";
  out += "tok/s: " + std::string(100 * 1024, '9') + "\n";
  out += "tok/s: 77.5\n";
  Result<double> r = ExtractMetric(Regex("tok/s: (.*)"), out, "");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_DOUBLE_EQ(*r, 77.5);

  // Only the long line: no match, and the message says why.
  Result<double> none =
      ExtractMetric(Regex("tok/s: (.*)"), "tok/s: " + std::string(100 * 1024, '9'), "");
  ASSERT_FALSE(none.ok());
  EXPECT_EQ(none.error().message,
            "metric regex:tok/s: (.*): no match in the output (1 line longer than 4096 bytes "
            "skipped)");
}

TEST(ExtractMetricTest, NestedQuantifiersDoNotHang) {
  // Found by tests/fuzz/metric_regex_fuzz: libstdc++'s backtracking matcher took exponential
  // time on stacked quantifiers even for an empty output; the polynomial one (util/metric_regex.h)
  // answers at once. Without it this test runs into ctest's timeout.
  Result<double> r = ExtractMetric(Regex("s******************pUt"), "", "");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, "metric regex:s******************pUt: no match in the output");
  Result<double> classic = ExtractMetric(Regex("(a*)*b([0-9])"), std::string(64, 'a') + "\n", "");
  ASSERT_FALSE(classic.ok());
  EXPECT_EQ(classic.error().message, "metric regex:(a*)*b([0-9]): no match in the output");
}

TEST(ExtractMetricTest, BackReferencesAreRefused) {
  Result<double> r = ExtractMetric(Regex("(a)\\1"), "aa\n", "");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message.rfind("metric regex:(a)\\1: regex error: ", 0), 0u)
      << r.error().message;
}

TEST(ExtractMetricTest, OverlongCountsAreRefused) {
  // Found by tests/fuzz/metric_regex_fuzz: libstdc++ 12 overflows a long reading this number
  // (undefined behaviour, reported by UBSan).
  Result<double> r = ExtractMetric(Regex("=(\\9000000000000000000000000000000000"), "=1\n", "");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "metric regex:=(\\9000000000000000000000000000000000: regex error: a count or "
            "back-reference of 34 digits at byte 3 (at most 9)");
  EXPECT_FALSE(ExtractMetric(Regex("a{1,99999999999}"), "a\n", "").ok());
}

TEST(ExtractMetricTest, QuotedNewlinesStayOnOneLine) {
  Result<double> r = ExtractMetric(Json("x"), R"({"x": "fast\nslow"})", "");
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message,
            "metric json:x: value at 'x' is a string \"fast\\nslow\", not a number");
}

TEST(ExtractMetricTest, RegexConsidersOnlyTheLastMebibyte) {
  std::string out = "tok/s: 5\n" + std::string(2 << 20, 'x') + "\n";
  Result<double> r = ExtractMetric(Regex("tok/s: ([0-9]+)"), out, "");
  EXPECT_FALSE(r.ok());
}

TEST(ExtractMetricTest, JsonLastLineInHugeOutput) {
  std::string out;
  for (int i = 0; i < 100000; ++i) out += "{\"step\": " + std::to_string(i) + "}\n";
  out += "{\"result\": {\"v\": 9}}\n";
  for (int i = 0; i < 1000; ++i) out += "shutdown " + std::to_string(i) + "\n";
  Result<double> r = ExtractMetric(Json("result.v"), out, "");
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_DOUBLE_EQ(*r, 9);
}

struct ProfileCase {
  const char* name;
  std::string text;
  std::string error;  // exact message, or "" for success
};

TEST(ParseProfileTest, AcceptsTheDesignFormat) {
  Result<Profile> p = ParseProfile(R"({"total_s": 1.84, "components": [
    {"name": "matmul.qkv", "layer": "kernel", "share": 0.41},
    {"name": "attention",  "layer": "kernel", "share": 0.22},
    {"name": "sampling",   "share": 0.05}]})");
  ASSERT_TRUE(p.ok()) << p.error().message;
  EXPECT_DOUBLE_EQ(p->total_s, 1.84);
  ASSERT_EQ(p->components.size(), 3u);
  EXPECT_EQ(p->components[0].name, "matmul.qkv");
  EXPECT_EQ(p->components[0].layer, "kernel");
  EXPECT_DOUBLE_EQ(p->components[1].share, 0.22);
  EXPECT_EQ(p->components[2].layer, "");
}

TEST(ParseProfileTest, TakesTheLastComponentsLineOfStdout) {
  Result<Profile> p = ParseProfile(
      "profiling...\n"
      "{\"components\": [{\"name\": \"old\", \"share\": 0.5}]}\n"
      "{\"components\": [{\"name\": \"new\", \"share\": 0.5}]}\n"
      "{\"unrelated\": true}\n"
      "bye\n");
  ASSERT_TRUE(p.ok()) << p.error().message;
  ASSERT_EQ(p->components.size(), 1u);
  EXPECT_EQ(p->components[0].name, "new");
  EXPECT_EQ(p->total_s, 0);
}

TEST(ParseProfileTest, Table) {
  const std::vector<ProfileCase> cases = {
      {"shares at the tolerance", R"({"components": [{"name": "a", "share": 0.6},
                                                     {"name": "b", "share": 0.45}]})",
       ""},
      {"null layer", R"({"components": [{"name": "a", "layer": null, "share": 0}]})", ""},
      {"empty", "  \n", "profile: the output is empty"},
      {"no json", "hello\n", "profile: no JSON object with \"components\" in the output (6 bytes)"},
      {"array", "[1]", "profile: expected a JSON object, got an array"},
      {"no components", R"({"total_s": 1})", "profile: \"components\" is missing"},
      {"components not array", R"({"components": {"a": 1}})",
       "profile: \"components\" is an object, expected an array"},
      {"components empty", R"({"components": []})", "profile: \"components\" is empty"},
      {"component not object", R"({"components": [{"name": "a", "share": 0.1}, 3]})",
       "profile: components[1] is a number 3, expected an object"},
      {"name missing", R"({"components": [{"share": 0.1}]})",
       "profile: components[0].name is missing"},
      {"name empty", R"({"components": [{"name": "", "share": 0.1}]})",
       "profile: components[0].name is a string \"\", expected a non-empty string"},
      {"name not string", R"({"components": [{"name": 7, "share": 0.1}]})",
       "profile: components[0].name is a number 7, expected a non-empty string"},
      {"layer not string", R"({"components": [{"name": "a", "layer": 1, "share": 0.1}]})",
       "profile: components[0].layer is a number 1, expected a string"},
      {"share missing", R"({"components": [{"name": "a"}]})",
       "profile: components[0].share is missing"},
      {"share too big",
       R"({"components": [{"name": "a", "share": 0.1}, {"name": "b", "share": 0.1},
                          {"name": "c", "share": 1.7}]})",
       "profile: components[2].share is 1.7, expected a fraction in [0, 1]"},
      {"share negative", R"({"components": [{"name": "a", "share": -0.1}]})",
       "profile: components[0].share is -0.1, expected a fraction in [0, 1]"},
      {"share string", R"({"components": [{"name": "a", "share": "0.4"}]})",
       "profile: components[0].share is a string \"0.4\", expected a fraction in [0, 1]"},
      {"duplicate names",
       R"({"components": [{"name": "a", "share": 0.1}, {"name": "b", "share": 0.1},
                          {"name": "a", "share": 0.1}]})",
       "profile: components[2].name 'a' duplicates components[0]"},
      {"shares sum too high",
       R"({"components": [{"name": "a", "share": 0.7}, {"name": "b", "share": 0.5}]})",
       "profile: shares sum to 1.2, more than 1.05"},
      {"negative total", R"({"total_s": -1, "components": [{"name": "a", "share": 0.1}]})",
       "profile: total_s is -1, expected a non-negative number of seconds"},
      {"string total", R"({"total_s": "1s", "components": [{"name": "a", "share": 0.1}]})",
       "profile: total_s is a string \"1s\", expected a non-negative number of seconds"},
      {"invalid last line is validated",
       "log\n{\"components\": [{\"name\": \"a\", \"share\": 2}]}\n",
       "profile: components[0].share is 2, expected a fraction in [0, 1]"},
  };
  for (const ProfileCase& c : cases) {
    SCOPED_TRACE(c.name);
    Result<Profile> p = ParseProfile(c.text);
    if (c.error.empty()) {
      EXPECT_TRUE(p.ok()) << p.error().message;
    } else {
      ASSERT_FALSE(p.ok());
      EXPECT_EQ(p.error().message, c.error);
    }
  }
}

TEST(CheckMetricValueTest, ReadingsNoBenchmarkPrintsAreBadOutput) {
  MetricSpec metric;
  metric.source = Json("ops");
  EXPECT_TRUE(CheckMetricValue(metric, 812.5).ok());
  EXPECT_TRUE(CheckMetricValue(metric, 1e308).ok());  // finite: the plausibility bound's job
  auto message = [&](double v) {
    Status s = CheckMetricValue(metric, v);
    return s.ok() ? std::string("ok") : s.error().message;
  };
  EXPECT_EQ(message(-5),
            "metric json:ops: value -5 is negative: no throughput or time is (set [metric] min "
            "if yours can be)");
  EXPECT_EQ(message(0).rfind("metric json:ops: value 0 is zero: a time of 0 is a timer", 0), 0u)
      << message(0);
  EXPECT_EQ(message(std::numeric_limits<double>::infinity()),
            "metric json:ops: value inf is not finite");
  EXPECT_EQ(message(std::nan("")), "metric json:ops: value nan is not finite");
  metric.max = 1e6;
  EXPECT_EQ(message(1e11), "metric json:ops: value 1e+11 is above [metric] max 1e+06");
  metric.min = -10;  // the user's range replaces the positivity rule
  EXPECT_EQ(message(-5), "ok");
  EXPECT_EQ(message(0), "ok");
  EXPECT_EQ(message(-11), "metric json:ops: value -11 is below [metric] min -10");
}

TEST(CheckMetricValueTest, WorkIsFiniteAndNotNegative) {
  EXPECT_TRUE(CheckWorkValue(Json("work"), 0).ok());
  EXPECT_TRUE(CheckWorkValue(Json("work"), 1000).ok());
  EXPECT_EQ(CheckWorkValue(Json("work"), -1).error().message,
            "metric json:work: work -1 is not a finite, non-negative amount");
}

}  // namespace
}  // namespace arbor

#include "formats/metric_presets.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <exception>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "formats/json_document.h"
#include "formats/wrk_report.h"
#include "util/escape.h"
#include "util/metric_presets.h"
#include "util/strings.h"

namespace arbor {
namespace {

using Json = nlohmann::json;

constexpr int kMaxDocumentStarts = 64;  // lines tried as the start of the JSON document

using formats_internal::TryParseJson;

bool IsBlank(std::string_view s) { return s.find_first_not_of(" \t\r\n\f\v") == s.npos; }

// How to produce the JSON each tool is read from, for "no document" messages.
std::string_view JsonHint(MetricPreset p) {
  switch (p) {
    case MetricPreset::kGoogleBenchmark:
      return "run the benchmark with --benchmark_format=json (or --benchmark_out=$ARBOR_OUT/"
             "metrics.json --benchmark_out_format=json)";
    case MetricPreset::kHyperfine:
      return "run hyperfine with --export-json $ARBOR_OUT/metrics.json";
    case MetricPreset::kFio:
      return "run fio with --output-format=json";
    case MetricPreset::kPytestBenchmark:
      return "run pytest with --benchmark-json=$ARBOR_OUT/metrics.json";
    case MetricPreset::kWrk:
      break;
  }
  return "";
}

// One entry's reading, before entries are combined.
struct Entry {
  std::string name;
  double value = 0;
};

class PresetReader {
 public:
  PresetReader(const MetricSource& src, PresetSource p)
      : label_(src.text.empty() ? "preset:" + src.expr : src.text), p_(std::move(p)) {}

  Error Fail(const std::string& msg) const {
    return MakeError(EscapeControlChars("metric " + label_ + ": " + msg));
  }
  const PresetSource& preset() const { return p_; }
  std::string_view tool() const { return MetricPresetName(p_.preset); }

  Result<Json> Document(std::string_view output, std::string_view metrics_file) const {
    if (!IsBlank(metrics_file)) {
      if (auto doc = TryParseJson(metrics_file); doc && doc->is_object()) return *doc;
      return Fail("$ARBOR_OUT/metrics.json is not a JSON object (" +
                  std::to_string(metrics_file.size()) + " bytes)");
    }
    if (auto doc = TryParseJson(output); doc && doc->is_object()) return *doc;
    int tried = 0;
    for (size_t at = 0; at < output.size() && tried < kMaxDocumentStarts;) {
      size_t first = output.find_first_not_of(" \t", at);
      if (first != std::string_view::npos && output[first] == '{') {
        ++tried;
        if (auto doc = TryParseJson(output.substr(first)); doc && doc->is_object()) return *doc;
      }
      size_t nl = output.find('\n', at);
      if (nl == std::string_view::npos) break;
      at = nl + 1;
    }
    return Fail("no " + std::string(tool()) + " JSON document in the output (" +
                std::to_string(output.size()) + " bytes): " + std::string(JsonHint(p_.preset)));
  }

  // The array `key` of the document, or why it is not this tool's JSON.
  Result<const Json*> Array(const Json& doc, const char* key) const {
    auto it = doc.find(key);
    if (it == doc.end() || !it->is_array()) {
      return Fail("not " + std::string(tool()) + " JSON: no \"" + key + "\" array");
    }
    return &*it;
  }

  Result<double> Number(const Json& obj, const std::string& key, const std::string& where) const {
    auto it = obj.find(key);
    if (it == obj.end()) {
      std::vector<std::string> numeric;
      for (const auto& [k, v] : obj.items()) {
        if (v.is_number()) numeric.push_back(k);
      }
      return Fail(where + " has no '" + key + "' (its numbers: " + Join(numeric, ", ") + ")");
    }
    if (!it->is_number() || !std::isfinite(it->get<double>())) {
      return Fail(where + "'s '" + key + "' is not a finite number");
    }
    return it->get<double>();
  }

  // No entries read: a NAME that matched none, or an empty report.
  Error NoEntries(const std::vector<std::string>& names, std::string_view what) const {
    if (p_.select.empty()) return Fail("the output lists no " + std::string(what));
    std::vector<std::string> shown(names.begin(),
                                   names.begin() + std::min<size_t>(names.size(), 10));
    return Fail("no " + std::string(what) + " named '" + p_.select + "' (" +
                (shown.empty() ? std::string("none listed") : Join(shown, ", ")) +
                (names.size() > shown.size() ? ", ..." : "") + ")");
  }

  // One value from several entries: the geometric mean, each entry weighing the same.
  Result<double> GeometricMean(const std::vector<Entry>& entries) const {
    if (entries.size() == 1) return entries.front().value;
    double log_sum = 0;
    for (const Entry& e : entries) {
      if (!(e.value > 0)) {
        return Fail("cannot combine " + std::to_string(entries.size()) + " entries by their " +
                    "geometric mean: '" + e.name + "' reads " + FormatDouble(e.value) +
                    "; name one with preset:" + std::string(tool()) + ":" + p_.field + ":NAME");
      }
      log_sum += std::log(e.value);
    }
    return std::exp(log_sum / static_cast<double>(entries.size()));
  }

 private:
  std::string label_;
  PresetSource p_;
};

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string StringOr(const Json& obj, const char* key, const std::string& fallback) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : fallback;
}

bool IsTrue(const Json& obj, const char* key) {
  auto it = obj.find(key);
  return it != obj.end() && it->is_boolean() && it->get<bool>();
}

// ---- Google Benchmark (--benchmark_format=json) ------------------------------------------

std::optional<double> NanosecondsPer(const std::string& unit) {
  if (unit == "ns") return 1;
  if (unit == "us") return 1e3;
  if (unit == "ms") return 1e6;
  if (unit == "s") return 1e9;
  return std::nullopt;
}

Result<double> ReadGoogleBenchmark(const PresetReader& r, const Json& doc) {
  ARBOR_TRY_ASSIGN(auto benchmarks, r.Array(doc, "benchmarks"));
  const std::string& field = r.preset().field;
  std::vector<std::string> order;  // run names in output order
  std::map<std::string, std::vector<double>> runs;
  std::vector<std::string> names;
  for (const Json& b : *benchmarks) {
    if (!b.is_object()) return r.Fail("a \"benchmarks\" entry is not an object");
    const std::string name = StringOr(b, "name", "");
    const std::string run_name = StringOr(b, "run_name", name);
    names.push_back(name);
    if (StringOr(b, "run_type", "iteration") != "iteration") continue;  // mean, median, ...
    const std::string& select = r.preset().select;
    if (!select.empty() && select != name && select != run_name) continue;
    if (IsTrue(b, "error_occurred")) {
      return r.Fail("benchmark '" + name +
                    "' failed: " + StringOr(b, "error_message", "(no message)"));
    }
    const std::string where = "benchmark '" + name + "'";
    ARBOR_TRY_ASSIGN(double value, r.Number(b, field, where));
    if (field == "real_time" || field == "cpu_time") {
      const std::string unit = StringOr(b, "time_unit", "ns");
      std::optional<double> scale = NanosecondsPer(unit);
      if (!scale) return r.Fail(where + " has an unknown time_unit '" + unit + "'");
      value *= *scale;
    }
    if (runs.find(run_name) == runs.end()) order.push_back(run_name);
    runs[run_name].push_back(value);
  }
  if (order.empty()) return r.NoEntries(names, "benchmark");
  std::vector<Entry> entries;
  for (const std::string& n : order) entries.push_back({n, Median(runs[n])});
  return r.GeometricMean(entries);
}

// ---- hyperfine (--export-json) -----------------------------------------------------------

Result<double> ReadHyperfine(const PresetReader& r, const Json& doc) {
  ARBOR_TRY_ASSIGN(auto results, r.Array(doc, "results"));
  std::vector<Entry> entries;
  std::vector<std::string> names;
  for (const Json& res : *results) {
    if (!res.is_object()) return r.Fail("a \"results\" entry is not an object");
    const std::string command = StringOr(res, "command", "");
    names.push_back(command);
    if (!r.preset().select.empty() && r.preset().select != command) continue;
    if (auto codes = res.find("exit_codes"); codes != res.end() && codes->is_array()) {
      for (const Json& c : *codes) {
        if (c.is_number_integer() && c.get<long long>() != 0) {
          return r.Fail("command '" + command + "' exited " + std::to_string(c.get<long long>()) +
                        " in one of its runs");
        }
      }
    }
    ARBOR_TRY_ASSIGN(auto v, r.Number(res, r.preset().field, "command '" + command + "'"));
    entries.push_back({command, v});
  }
  if (entries.empty()) return r.NoEntries(names, "command");
  return r.GeometricMean(entries);
}

// ---- pytest-benchmark (--benchmark-json) --------------------------------------------------

Result<double> ReadPytestBenchmark(const PresetReader& r, const Json& doc) {
  ARBOR_TRY_ASSIGN(auto benchmarks, r.Array(doc, "benchmarks"));
  std::vector<Entry> entries;
  std::vector<std::string> names;
  for (const Json& b : *benchmarks) {
    if (!b.is_object()) return r.Fail("a \"benchmarks\" entry is not an object");
    const std::string name = StringOr(b, "name", "");
    names.push_back(name);
    const std::string& select = r.preset().select;
    if (!select.empty() && select != name && select != StringOr(b, "fullname", "")) continue;
    auto stats = b.find("stats");
    if (stats == b.end() || !stats->is_object()) {
      return r.Fail("not pytest-benchmark JSON: benchmark '" + name + "' has no \"stats\"");
    }
    ARBOR_TRY_ASSIGN(auto v, r.Number(*stats, r.preset().field, "benchmark '" + name + "'"));
    entries.push_back({name, v});
  }
  if (entries.empty()) return r.NoEntries(names, "benchmark");
  return r.GeometricMean(entries);
}

// ---- fio (--output-format=json) -----------------------------------------------------------

// A latency block in microseconds: "lat_ns"/"clat_ns" (fio 3), else "lat"/"clat" (fio 2, us).
const Json* LatencyBlock(const Json& dir, const std::string& base, double* to_us) {
  if (auto it = dir.find(base + "_ns"); it != dir.end() && it->is_object()) {
    *to_us = 1e-3;
    return &*it;
  }
  if (auto it = dir.find(base); it != dir.end() && it->is_object()) {
    *to_us = 1;
    return &*it;
  }
  return nullptr;
}

// fio's percentile keys are printf("%f"): "99.000000", "99.900000".
std::string PercentileKey(double p) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%f", p);
  return buf;
}

Result<double> ReadFio(const PresetReader& r, const Json& doc) {
  ARBOR_TRY_ASSIGN(auto jobs, r.Array(doc, "jobs"));
  const std::string& field = r.preset().field;
  std::optional<FioPercentile> pct = ParseFioPercentileField(field);
  const bool latency = pct.has_value() || EndsWith(field, "_lat_us");
  std::vector<std::string> dirs = {"read", "write", "trim"};
  if (pct) {
    dirs = {pct->direction};
  } else if (field != "iops" && field != "bw") {
    dirs = {field.substr(0, field.find('_'))};
  }
  const std::string metric = latency ? "" : (EndsWith(field, "bw") ? "bw_bytes" : "iops");
  double total = 0;
  std::optional<double> worst;  // latency: the slowest job's
  std::vector<std::string> names;
  int matched = 0;
  for (const Json& job : *jobs) {
    if (!job.is_object()) return r.Fail("a \"jobs\" entry is not an object");
    const std::string name = StringOr(job, "jobname", "");
    names.push_back(name);
    if (!r.preset().select.empty() && r.preset().select != name) continue;
    ++matched;
    if (auto e = job.find("error"); e != job.end() && e->is_number() && e->get<double>() != 0) {
      return r.Fail("job '" + name + "' reported error " + FormatDouble(e->get<double>()));
    }
    for (const std::string& d : dirs) {
      auto dir = job.find(d);
      if (dir == job.end() || !dir->is_object()) continue;
      const std::string where = "job '" + name + "' " + d;
      if (!latency) {
        ARBOR_TRY_ASSIGN(auto v, r.Number(*dir, metric, where));
        total += v;
        continue;
      }
      auto ios = dir->find("total_ios");
      if (ios != dir->end() && ios->is_number() && ios->get<double>() == 0) continue;  // no I/O
      double to_us = 1;
      const Json* block = LatencyBlock(*dir, pct ? "clat" : "lat", &to_us);
      if (block == nullptr) return r.Fail(where + " has no latency statistics");
      double us = 0;
      if (pct) {
        auto ps = block->find("percentile");
        if (ps == block->end() || !ps->is_object()) {
          return r.Fail(where + " has no completion-latency percentiles");
        }
        ARBOR_TRY_ASSIGN(auto v,
                         r.Number(*ps, PercentileKey(pct->percentile), where + " percentile"));
        us = v * to_us;
      } else {
        ARBOR_TRY_ASSIGN(auto v, r.Number(*block, "mean", where + " latency"));
        us = v * to_us;
      }
      worst = std::max(worst.value_or(us), us);
    }
  }
  if (matched == 0) return r.NoEntries(names, "job");
  if (!latency) return total;
  if (!worst) return r.Fail("no job did any " + dirs.front() + " I/O");
  return *worst;
}

// ---- wrk (text) ---------------------------------------------------------------------------

Result<double> ReadWrk(const PresetReader& r, std::string_view output) {
  std::optional<WrkReport> w = ParseWrkReport(output);
  if (!w) {
    return r.Fail("no 'Requests/sec:' line in the output (" + std::to_string(output.size()) +
                  " bytes): not a wrk report, or wrk did not finish");
  }
  const std::string& field = r.preset().field;
  if (field == "errors") return w->non_2xx_3xx + w->socket_errors;
  if (w->non_2xx_3xx > 0) {
    return r.Fail(FormatDouble(w->non_2xx_3xx) + " responses were not 2xx or 3xx" +
                  (w->requests ? " (of " + FormatDouble(*w->requests) + ")" : "") +
                  ": a server that answers with errors is not faster (read 'errors' as a "
                  "guard to see them)");
  }
  auto need = [&](const std::optional<double>& v, const char* line) -> Result<double> {
    if (!v) return r.Fail(std::string("no ") + line + " in the wrk report");
    return *v;
  };
  if (field == "requests_per_sec") return w->requests_per_sec;
  if (field == "transfer_per_sec") return need(w->transfer_per_sec, "'Transfer/sec:' line");
  if (field == "requests") return need(w->requests, "'N requests in' line");
  if (field == "latency_avg_ms") return need(w->latency_avg_ms, "'Latency' line");
  if (field == "latency_stdev_ms") return need(w->latency_stdev_ms, "'Latency' line");
  if (field == "latency_max_ms") return need(w->latency_max_ms, "'Latency' line");
  // latency_pNN_ms
  const double p = std::stod(field.substr(9, field.size() - 12));
  auto it = w->latency_percentiles_ms.find(p);
  if (it == w->latency_percentiles_ms.end()) {
    return r.Fail("no " + FormatDouble(p) +
                  "% line in a 'Latency Distribution' of the report: run wrk with --latency");
  }
  return it->second;
}

}  // namespace

Result<double> ExtractPresetMetric(const MetricSource& src, std::string_view output,
                                   std::string_view metrics_file_text) {
  Result<PresetSource> parsed = ParsePresetExpr(src.expr);
  if (!parsed.ok()) {
    const std::string label = src.text.empty() ? "preset:" + src.expr : src.text;
    return MakeError(EscapeControlChars("metric " + label + ": " + parsed.error().message));
  }
  PresetReader r(src, *parsed);
  try {
    if (parsed->preset == MetricPreset::kWrk) return ReadWrk(r, output);
    ARBOR_TRY_ASSIGN(Json doc, r.Document(output, metrics_file_text));
    switch (parsed->preset) {
      case MetricPreset::kGoogleBenchmark:
        return ReadGoogleBenchmark(r, doc);
      case MetricPreset::kHyperfine:
        return ReadHyperfine(r, doc);
      case MetricPreset::kFio:
        return ReadFio(r, doc);
      case MetricPreset::kPytestBenchmark:
        return ReadPytestBenchmark(r, doc);
      case MetricPreset::kWrk:
        break;
    }
    return r.Fail("unknown preset");
  } catch (const std::exception& e) {
    return r.Fail(std::string("could not read the output: ") + e.what());
  }
}

bool PresetReadsMetricsFile(const MetricSource& src) {
  if (src.kind != MetricSource::Kind::kPreset) return false;
  Result<PresetSource> parsed = ParsePresetExpr(src.expr);
  return parsed.ok() && parsed->preset != MetricPreset::kWrk;
}

}  // namespace arbor

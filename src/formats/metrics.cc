#include "formats/metrics.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <exception>
#include <nlohmann/json.hpp>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "formats/json_document.h"
#include "formats/metric_presets.h"
#include "util/escape.h"
#include "util/metric_regex.h"
#include "util/strings.h"

namespace arbor {
namespace {

using Json = nlohmann::json;

std::string_view TrimView(std::string_view s) {
  const char* kSpace = " \t\r\n\f\v";
  size_t b = s.find_first_not_of(kSpace);
  if (b == std::string_view::npos) return {};
  size_t e = s.find_last_not_of(kSpace);
  return s.substr(b, e - b + 1);
}

// Calls fn(line) for each line of `text` from the last to the first ('\n' and '\r' both end a
// line, so progress bars redrawn with '\r' count as many lines) until fn returns true.
template <typename Fn>
void ForEachLineBackward(std::string_view text, Fn fn) {
  size_t end = text.size();
  while (true) {
    size_t sep = end == 0 ? std::string_view::npos : text.find_last_of("\r\n", end - 1);
    size_t begin = sep == std::string_view::npos ? 0 : sep + 1;
    if (fn(text.substr(begin, end - begin))) return;
    if (sep == std::string_view::npos) return;
    end = sep;
  }
}

std::string Shorten(std::string_view s, size_t max = 40) {
  if (s.size() <= max) return std::string(s);
  return std::string(s.substr(0, max)) + "...";
}

// "a number 3", "a string \"fast\"", "an object", ... for messages.
std::string Describe(const Json& j) {
  switch (j.type()) {
    case Json::value_t::object:
      return "an object";
    case Json::value_t::array:
      return "an array";
    case Json::value_t::string:
      return "a string \"" + Shorten(j.get_ref<const std::string&>()) + "\"";
    case Json::value_t::boolean:
      return j.get<bool>() ? "a boolean true" : "a boolean false";
    case Json::value_t::null:
      return "null";
    case Json::value_t::number_integer:
    case Json::value_t::number_unsigned:
    case Json::value_t::number_float:
      return "a number " + FormatDouble(j.get<double>());
    default:
      return "an unsupported value";
  }
}

// A double from the whole of `s` (surrounding blanks and a leading '+' allowed); may be inf/nan.
std::optional<double> ParseNumber(std::string_view s) {
  s = TrimView(s);
  if (!s.empty() && s.front() == '+') s.remove_prefix(1);
  if (s.empty()) return std::nullopt;
  double v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

using formats_internal::TryParseJson;

bool LooksLikeObject(std::string_view line) {
  return line.size() >= 2 && line.front() == '{' && line.back() == '}';
}

// The first bare non-finite number in JSON-like text (`Infinity` from Python's json.dumps,
// `inf`/`nan` from printf), or "": JSON cannot hold one, so such a document does not parse,
// and the user should hear why rather than "no JSON object".
std::string NonFiniteLiteral(std::string_view text) {
  static constexpr std::string_view kWords[] = {"Infinity", "NaN", "inf", "nan", "INF", "NAN"};
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != ':' && text[i] != '[' && text[i] != ',') continue;
    size_t j = i + 1;
    while (j < text.size() && (text[j] == ' ' || text[j] == '\t')) ++j;
    size_t start = j;
    if (j < text.size() && (text[j] == '-' || text[j] == '+')) ++j;
    for (std::string_view w : kWords) {
      if (text.substr(j, w.size()) != w) continue;
      size_t end = j + w.size();
      if (end < text.size() && std::isalnum(static_cast<unsigned char>(text[end]))) continue;
      return std::string(text.substr(start, end - start));
    }
  }
  return "";
}

// The value at `path` in `doc`, or why it is not there (without the metric prefix).
struct Lookup {
  const Json* value = nullptr;
  std::string error;
  std::string hint;  // " (did you mean 'x'?)" for a near-miss key, appended last
};

Lookup Resolve(const Json& doc, const std::vector<std::string>& path) {
  const Json* cur = &doc;
  std::string where;
  for (const std::string& key : path) {
    std::string under = where.empty() ? "at the top level" : "under '" + where + "'";
    if (cur->is_object()) {
      auto it = cur->find(key);
      if (it == cur->end()) {
        std::string hint;
        if (key.size() >= 4) {  // shorter keys are near everything
          std::vector<std::string> keys;
          for (const auto& [k, v] : cur->items()) keys.push_back(k);
          hint = ClosestMatch(key, keys);
        }
        return {nullptr, "key '" + key + "' not found " + under,
                hint.empty() ? "" : " (did you mean '" + hint + "'?)"};
      }
      cur = &*it;
    } else if (cur->is_array()) {
      size_t index = 0;
      auto [ptr, ec] = std::from_chars(key.data(), key.data() + key.size(), index);
      if (key.empty() || ec != std::errc() || ptr != key.data() + key.size()) {
        return {nullptr, "'" + key + "' is not an index into the array " + under};
      }
      if (index >= cur->size()) {
        return {nullptr, "index " + key + " out of range " + under + " (" +
                             std::to_string(cur->size()) + " elements)"};
      }
      cur = &(*cur)[index];
    } else {
      std::string what = where.empty() ? "the document" : "'" + where + "'";
      return {nullptr, what + " is " + Describe(*cur) + ", not an object or array"};
    }
    where += (where.empty() ? "" : ".") + key;
  }
  return {cur, ""};
}

std::string Prefix(MetricSource::Kind kind) {
  switch (kind) {
    case MetricSource::Kind::kJson:
      return "json:";
    case MetricSource::Kind::kRegex:
      return "regex:";
    case MetricSource::Kind::kPreset:
      return "preset:";
  }
  return "";
}

class MetricReader {
 public:
  explicit MetricReader(const MetricSource& src)
      : label_(!src.text.empty() ? src.text : Prefix(src.kind) + src.expr) {}

  // Messages quote the output's strings and keys, which may hold newlines: escaped here.
  Error Fail(const std::string& msg) const {
    return MakeError(EscapeControlChars("metric " + label_ + ": " + msg));
  }

  Result<double> Finite(double v, const std::string& what) const {
    if (!std::isfinite(v)) return Fail(what + " is not finite (" + FormatDouble(v) + ")");
    return v;
  }

  Result<double> FromJson(const Json& value, const std::string& path) const {
    std::string what = "value at '" + path + "'";
    if (value.is_number()) return Finite(value.get<double>(), what);
    if (value.is_string()) {
      if (auto v = ParseNumber(value.get_ref<const std::string&>())) return Finite(*v, what);
    }
    return Fail(what + " is " + Describe(value) + ", not a number");
  }

 private:
  std::string label_;
};

Result<double> ExtractJson(const MetricSource& src, std::string_view output,
                           std::string_view metrics_file_text) {
  MetricReader r(src);
  std::vector<std::string> path =
      src.expr.empty() ? std::vector<std::string>{} : Split(src.expr, '.');
  auto from_doc = [&](const Json& doc, const std::string& suffix) -> Result<double> {
    Lookup l = Resolve(doc, path);
    if (l.value == nullptr) return r.Fail(l.error + suffix + l.hint);
    return r.FromJson(*l.value, src.expr);
  };

  auto non_finite = [&](std::string_view text, const std::string& where) -> std::optional<Error> {
    std::string literal = NonFiniteLiteral(text);
    if (literal.empty()) return std::nullopt;
    return r.Fail("the JSON " + where + " holds a non-finite number (" + literal +
                  "), which is not a reading");
  };
  if (!TrimView(metrics_file_text).empty()) {
    if (!TryParseJson(metrics_file_text)) {
      if (auto e = non_finite(metrics_file_text, "in $ARBOR_OUT/metrics.json")) return *e;
    }
    try {
      return from_doc(Json::parse(metrics_file_text.begin(), metrics_file_text.end()),
                      " in $ARBOR_OUT/metrics.json");
    } catch (const std::exception& e) {
      std::string what = e.what();
      size_t close = what.find("] ");
      if (StartsWith(what, "[json.exception") && close != std::string::npos) {
        what = what.substr(close + 2);
      }
      return r.Fail("$ARBOR_OUT/metrics.json is not valid JSON: " + what);
    }
  }

  std::string_view trimmed = TrimView(output);
  if (!trimmed.empty() && (trimmed.front() == '{' || trimmed.front() == '[')) {
    if (auto doc = TryParseJson(trimmed); doc && doc->is_structured()) return from_doc(*doc, "");
  }

  // Logs around the JSON: the last line that is an object in which the path resolves.
  std::optional<Json> found;
  std::optional<Lookup> last_miss;
  std::optional<Error> broken;  // the last object line that holds Infinity or NaN
  int objects = 0;
  ForEachLineBackward(output, [&](std::string_view line) {
    line = TrimView(line);
    if (!LooksLikeObject(line)) return false;
    std::optional<Json> doc = TryParseJson(line);
    if (!doc && !broken) broken = non_finite(line, "line of the output");
    if (!doc || !doc->is_object()) return false;
    ++objects;
    Lookup l = Resolve(*doc, path);
    if (l.value == nullptr) {
      if (!last_miss) last_miss = l;
      return false;
    }
    found = std::move(doc);
    return true;
  });
  if (found) return from_doc(*found, "");
  if (broken) return *broken;
  if (!trimmed.empty() && (trimmed.front() == '{' || trimmed.front() == '[')) {
    if (auto e = non_finite(trimmed, "document of the output")) return *e;
  }
  if (objects == 0) {
    return r.Fail("no JSON object in the output (" + std::to_string(output.size()) + " bytes)");
  }
  return r.Fail(last_miss->error + " (in the last of " + std::to_string(objects) + " JSON line" +
                (objects == 1 ? "" : "s") + " of the output)" + last_miss->hint);
}

Result<double> ExtractRegex(const MetricSource& src, std::string_view output) {
  MetricReader r(src);
  Result<std::regex> compiled = CompileMetricRegex(src.expr);
  if (!compiled.ok()) return r.Fail("regex error: " + compiled.error().message);
  const std::regex& re = *compiled;
  try {
    std::string_view window = output;
    if (window.size() > kRegexWindowBytes) {
      window = window.substr(window.size() - kRegexWindowBytes);
      size_t nl = window.find('\n');  // drop the partial first line
      if (nl != std::string_view::npos) window.remove_prefix(nl + 1);
    }
    std::cmatch last;
    bool matched = false;
    int skipped = 0;
    ForEachLineBackward(window, [&](std::string_view line) {
      if (line.size() > kRegexMaxLineBytes) {
        ++skipped;
        return false;
      }
      for (std::cregex_iterator it(line.data(), line.data() + line.size(), re), end; it != end;
           ++it) {
        last = *it;
        matched = true;
      }
      return matched;
    });
    if (!matched) {
      std::string note;
      if (skipped > 0) {
        note = " (" + std::to_string(skipped) + " line" + (skipped == 1 ? "" : "s") +
               " longer than " + std::to_string(kRegexMaxLineBytes) + " bytes skipped)";
      }
      return r.Fail("no match in the output" + note);
    }
    size_t group = last.size() > 1 ? 1 : 0;
    if (!last[group].matched) {
      return r.Fail("group 1 took no part in the match '" + Shorten(last.str(0)) + "'");
    }
    std::string text = last.str(group);
    std::optional<double> v = ParseNumber(text);
    std::string what = "group " + std::to_string(group) + " '" + Shorten(text) + "'";
    if (!v) return r.Fail(what + " is not a number");
    return r.Finite(*v, what);
  } catch (const std::regex_error& e) {
    return r.Fail(std::string("regex error: ") + e.what());
  } catch (const std::exception& e) {
    return r.Fail(std::string("could not match: ") + e.what());
  }
}

// ---- Profiles ---------------------------------------------------------------------------

Error ProfileError(const std::string& msg) {
  return MakeError(EscapeControlChars("profile: " + msg));
}

// "1.7" for numbers (the value speaks for itself), else Describe().
std::string Shown(const Json& j) {
  return j.is_number() ? FormatDouble(j.get<double>()) : Describe(j);
}

Result<Component> ParseComponent(const Json& c, size_t i, std::set<std::string>* seen,
                                 std::vector<std::string>* names) {
  std::string at = "components[" + std::to_string(i) + "]";
  if (!c.is_object()) return ProfileError(at + " is " + Describe(c) + ", expected an object");
  Component out;
  auto name = c.find("name");
  if (name == c.end()) return ProfileError(at + ".name is missing");
  if (!name->is_string() || name->get_ref<const std::string&>().empty()) {
    return ProfileError(at + ".name is " + Describe(*name) + ", expected a non-empty string");
  }
  out.name = name->get<std::string>();
  if (!seen->insert(out.name).second) {
    size_t first = 0;
    while ((*names)[first] != out.name) ++first;
    return ProfileError(at + ".name '" + out.name + "' duplicates components[" +
                        std::to_string(first) + "]");
  }
  names->push_back(out.name);
  auto layer = c.find("layer");
  if (layer != c.end() && !layer->is_null()) {
    if (!layer->is_string()) {
      return ProfileError(at + ".layer is " + Describe(*layer) + ", expected a string");
    }
    out.layer = layer->get<std::string>();
  }
  auto share = c.find("share");
  if (share == c.end()) return ProfileError(at + ".share is missing");
  double v = share->is_number() ? share->get<double>() : -1;
  if (!share->is_number() || !std::isfinite(v) || v < 0 || v > 1) {
    return ProfileError(at + ".share is " + Shown(*share) + ", expected a fraction in [0, 1]");
  }
  out.share = v;
  return out;
}

Result<Profile> ProfileFromJson(const Json& doc) {
  if (!doc.is_object()) return ProfileError("expected a JSON object, got " + Describe(doc));
  Profile p;
  auto total = doc.find("total_s");
  if (total != doc.end() && !total->is_null()) {
    if (!total->is_number() || !std::isfinite(total->get<double>()) || total->get<double>() < 0) {
      return ProfileError("total_s is " + Shown(*total) +
                          ", expected a non-negative number of seconds");
    }
    p.total_s = total->get<double>();
  }
  auto comps = doc.find("components");
  if (comps == doc.end()) return ProfileError("\"components\" is missing");
  if (!comps->is_array()) {
    return ProfileError("\"components\" is " + Describe(*comps) + ", expected an array");
  }
  if (comps->empty()) return ProfileError("\"components\" is empty");
  std::set<std::string> seen;
  std::vector<std::string> names;
  double sum = 0;
  for (size_t i = 0; i < comps->size(); ++i) {
    ARBOR_TRY_ASSIGN(Component c, ParseComponent((*comps)[i], i, &seen, &names));
    sum += c.share;
    p.components.push_back(std::move(c));
  }
  if (sum > kMaxShareSum) {
    return ProfileError("shares sum to " + FormatDouble(sum, 4) + ", more than " +
                        FormatDouble(kMaxShareSum));
  }
  return p;
}

}  // namespace

Result<double> ExtractMetric(const MetricSource& src, std::string_view output,
                             std::string_view metrics_file_text) {
  switch (src.kind) {
    case MetricSource::Kind::kRegex:
      return ExtractRegex(src, output);
    case MetricSource::Kind::kPreset:
      return ExtractPresetMetric(src, output, metrics_file_text);
    case MetricSource::Kind::kJson:
      break;
  }
  return ExtractJson(src, output, metrics_file_text);
}

bool ReadsMetricsFile(const MetricSource& src) {
  return src.kind == MetricSource::Kind::kJson || PresetReadsMetricsFile(src);
}

Status CheckMetricValue(const MetricSpec& metric, double value) {
  MetricReader r(metric.source);
  const std::string v = "value " + FormatDouble(value);
  if (!std::isfinite(value)) return r.Fail(v + " is not finite");
  if (metric.max && value > *metric.max) {
    return r.Fail(v + " is above [metric] max " + FormatDouble(*metric.max));
  }
  if (metric.min) {
    if (value < *metric.min) {
      return r.Fail(v + " is below [metric] min " + FormatDouble(*metric.min));
    }
  } else if (value < 0) {
    return r.Fail(v + " is negative: no throughput or time is (set [metric] min if yours can be)");
  } else if (value == 0) {
    return r.Fail(v +
                  " is zero: a time of 0 is a timer that read nothing, a rate of 0 a run "
                  "that did nothing (set [metric] min = 0 if yours can be)");
  }
  return {};
}

Status CheckWorkValue(const MetricSource& work, double value) {
  MetricReader r(work);
  if (!std::isfinite(value) || value < 0) {
    return r.Fail("work " + FormatDouble(value) + " is not a finite, non-negative amount");
  }
  return {};
}

Result<Profile> ParseProfile(std::string_view text) {
  std::string_view trimmed = TrimView(text);
  if (trimmed.empty()) return ProfileError("the output is empty");
  if (auto doc = TryParseJson(trimmed)) return ProfileFromJson(*doc);
  std::optional<Json> found;
  ForEachLineBackward(text, [&](std::string_view line) {
    line = TrimView(line);
    if (!LooksLikeObject(line)) return false;
    std::optional<Json> doc = TryParseJson(line);
    if (!doc || !doc->is_object() || !doc->contains("components")) return false;
    found = std::move(doc);
    return true;
  });
  if (!found) {
    return ProfileError("no JSON object with \"components\" in the output (" +
                        std::to_string(text.size()) + " bytes)");
  }
  return ProfileFromJson(*found);
}

}  // namespace arbor

#include "store/store_json.h"

#include <charconv>
#include <nlohmann/json.hpp>

#include "store/json_numbers.h"

namespace arbor::store_json {
namespace {

using nlohmann::json;

// Environment values and messages are almost always UTF-8; a stray invalid byte becomes
// U+FFFD rather than failing the whole Apply (nlohmann's default is to throw).
std::string Dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

using internal::Number;
using internal::ParseNonFinite;
using internal::ReadNumber;

// Streams the members of a flat JSON object (string or number values) to a visitor without
// building a DOM. Overlay and score are decoded for every node on a cold load of the tree,
// and the DOM's allocations were most of LoadNodes' time. Visitor provides
//   bool String(const std::string& key, std::string& value);
//   bool Number(const std::string& key, double value);
// returning false (after setting *why) to reject a member.
template <typename Visitor>
class FlatObjectSax final : public nlohmann::json_sax<json> {
 public:
  FlatObjectSax(Visitor* visitor, std::string* why) : visitor_(visitor), why_(why) {}

  bool null() override { return Reject("null value"); }
  bool boolean(bool /*val*/) override { return Reject("boolean value"); }
  bool number_integer(number_integer_t val) override { return Num(static_cast<double>(val)); }
  bool number_unsigned(number_unsigned_t val) override { return Num(static_cast<double>(val)); }
  bool number_float(number_float_t val, const string_t& /*s*/) override { return Num(val); }
  bool string(string_t& val) override {
    return depth_ == 1 ? visitor_->String(key_, val) : Reject("not an object");
  }
  bool binary(binary_t& /*val*/) override { return Reject("binary value"); }
  bool start_object(std::size_t /*elements*/) override {
    return ++depth_ == 1 || Reject("nested value");
  }
  bool key(string_t& val) override {
    key_.swap(val);
    return true;
  }
  bool end_object() override {
    --depth_;
    return true;
  }
  bool start_array(std::size_t /*elements*/) override {
    return Reject(depth_ == 0 ? "not an object" : "nested value");
  }
  bool end_array() override { return true; }
  bool parse_error(std::size_t /*position*/, const std::string& /*last_token*/,
                   const nlohmann::detail::exception& ex) override {
    return Reject(ex.what());
  }

 private:
  bool Num(double v) { return depth_ == 1 ? visitor_->Number(key_, v) : Reject("not an object"); }
  bool Reject(const std::string& why) {
    if (why_->empty()) *why_ = why + (key_.empty() ? "" : " at '" + key_ + "'");
    return false;
  }

  Visitor* visitor_;
  std::string* why_;
  std::string key_;
  int depth_ = 0;
};

// The fast path for what our own encoders write: a compact flat object whose strings have no
// escapes ({"k":"v","n":1.5}). It avoids nlohmann's lexer, whose per-character token buffer
// and strtod were most of a cold LoadNodes. Anything else (whitespace, escapes, a hand-edited
// row) returns false and the caller re-reads the text with the full parser, which is the
// reference for both acceptance and error messages.
template <typename Visitor>
bool ReadCompactFlatObject(std::string_view text, Visitor* visitor) {
  size_t i = 0;
  auto read_string = [&](std::string* out) {
    if (i >= text.size() || text[i] != '"') return false;
    const size_t start = ++i;
    while (i < text.size() && text[i] != '"') {
      if (text[i] == '\\' || static_cast<unsigned char>(text[i]) < 0x20) return false;
      ++i;
    }
    if (i >= text.size()) return false;
    out->assign(text.substr(start, i - start));
    ++i;
    return true;
  };
  if (text.size() < 2 || text.front() != '{') return false;
  ++i;
  if (text[i] == '}') return i + 1 == text.size();
  std::string key;
  std::string value;
  for (;;) {
    if (!read_string(&key) || i >= text.size() || text[i++] != ':' || i >= text.size()) {
      return false;
    }
    if (text[i] == '"') {
      if (!read_string(&value) || !visitor->String(key, value)) return false;
    } else {
      if (text[i] != '-' && (text[i] < '0' || text[i] > '9')) return false;
      double d = 0;
      auto [end, ec] = std::from_chars(text.data() + i, text.data() + text.size(), d);
      if (ec != std::errc()) return false;
      i = end - text.data();
      if (!visitor->Number(key, d)) return false;
    }
    if (i >= text.size()) return false;
    const char sep = text[i++];
    if (sep == '}') return i == text.size();
    if (sep != ',') return false;
  }
}

// Feeds `text` to `visitor` (which has a `std::string* why`), fast path first; `reset` undoes
// a fast path that gave up midway.
template <typename Visitor, typename Reset>
Status VisitFlatObject(std::string_view text, const char* what, Visitor* visitor, Reset reset) {
  if (ReadCompactFlatObject(text, visitor)) return {};
  reset();
  std::string& why = *visitor->why;  // shared with the visitor, which explains its rejections
  why.clear();
  FlatObjectSax<Visitor> sax(visitor, &why);
  const bool ok =
      json::sax_parse(text.begin(), text.end(), &sax, nlohmann::detail::input_format_t::json,
                      /*strict=*/true);
  if (ok) return {};
  if (why.empty()) why = "not an object";
  return MakeError(std::string("malformed ") + what + " JSON (" + why +
                   "): " + std::string(text.substr(0, 80)));
}

// Parses `text` as a JSON object without exceptions.
Result<json> ParseObject(std::string_view text, const char* what) {
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    return MakeError(std::string("malformed ") + what +
                     " JSON: " + std::string(text.substr(0, 80)));
  }
  return j;
}

// Reads optional numeric field `key` of object `j` into `out` (left unchanged when absent).
bool ReadField(const json& j, const char* key, double* out) {
  auto it = j.find(key);
  return it == j.end() || ReadNumber(*it, out);
}

bool ReadField(const json& j, const char* key, std::string* out) {
  auto it = j.find(key);
  if (it == j.end()) return true;
  if (!it->is_string()) return false;
  *out = it->get<std::string>();
  return true;
}

Error BadField(const char* what, const char* key) {
  return MakeError(std::string("malformed ") + what + " JSON: field '" + key +
                   "' has the wrong type");
}

}  // namespace

std::string EncodeOverlay(const EnvOverlay& overlay) {
  if (overlay.empty()) return "{}";
  json j = json::object();
  for (const auto& [k, v] : overlay) j[k] = v;
  return Dump(j);
}

Result<EnvOverlay> DecodeOverlay(std::string_view text) {
  EnvOverlay out;
  if (text == "{}") return out;  // the common case; skips the parser on bulk loads
  struct Visitor {
    EnvOverlay* out;
    std::string* why;
    bool String(const std::string& k, std::string& v) {
      // Keys arrive sorted (EncodeOverlay writes a std::map), so the hint makes this O(1).
      out->insert_or_assign(out->end(), k, std::move(v));
      return true;
    }
    bool Number(const std::string& k, double /*v*/) {
      *why = "value of '" + k + "' is not a string";
      return false;
    }
  };
  std::string why;
  Visitor visitor{&out, &why};
  ARBOR_TRY(VisitFlatObject(text, "overlay", &visitor, [&] { out.clear(); }));
  return out;
}

// The table of ScoreTerms fields: one place for the JSON key of each term.
namespace {
struct ScoreField {
  std::string_view key;  // a view: compared against every decoded key without strlen
  double ScoreTerms::*member;
};
constexpr ScoreField kScoreFields[] = {
    {"g", &ScoreTerms::g},
    {"c", &ScoreTerms::c},
    {"c_norm", &ScoreTerms::c_norm},
    {"r_acc", &ScoreTerms::r_acc},
    {"r_crash", &ScoreTerms::r_crash},
    {"m_gap", &ScoreTerms::m_gap},
    {"bonus", &ScoreTerms::bonus},
    {"exploit", &ScoreTerms::exploit},
    {"h", &ScoreTerms::h},
    {"speedup", &ScoreTerms::speedup},
    {"measured", &ScoreTerms::measured},
};

// The knowledge-base entries behind a score are rare next to the numbers, so they ride in the
// flat object as one string member holding a JSON array (the flat decoder stays DOM-free).
constexpr std::string_view kKbRefsKey = "kb";

std::string EncodeKbRefs(const std::vector<KbRef>& refs) {
  json a = json::array();
  for (const KbRef& r : refs)
    a.push_back({{"uid", r.uid}, {"id", r.id}, {"w", Number(r.weight)}, {"why", r.summary}});
  return Dump(a);
}

bool DecodeKbRefs(const std::string& text, std::vector<KbRef>* out) {
  json a = json::parse(text, nullptr, false);
  if (!a.is_array()) return false;
  for (const json& r : a) {
    if (!r.is_object() || !r.contains("uid") || !r["uid"].is_string()) return false;
    KbRef ref;
    ref.uid = r["uid"].get<std::string>();
    if (r.contains("id") && r["id"].is_number_integer()) ref.id = r["id"].get<int64_t>();
    if (r.contains("w") && r["w"].is_number()) ref.weight = r["w"].get<double>();
    if (r.contains("why") && r["why"].is_string()) ref.summary = r["why"].get<std::string>();
    out->push_back(std::move(ref));
  }
  return true;
}
}  // namespace

std::string EncodeScore(const ScoreTerms& score) {
  json j = json::object();
  for (const auto& f : kScoreFields) j[f.key] = Number(score.*f.member);
  if (!score.kb.empty()) j[kKbRefsKey] = EncodeKbRefs(score.kb);
  return Dump(j);
}

Result<ScoreTerms> DecodeScore(std::string_view text) {
  ScoreTerms out;
  struct Visitor {
    ScoreTerms* out;
    std::string* why;
    bool Number(const std::string& k, double v) {
      for (const auto& f : kScoreFields) {
        if (k == f.key) out->*f.member = v;
      }
      return true;  // a term this binary does not know (written by a newer one) is skipped
    }
    bool String(const std::string& k, std::string& v) {
      if (k == kKbRefsKey) {
        if (DecodeKbRefs(v, &out->kb)) return true;
        *why = "field 'kb' is not a list of knowledge-base references";
        return false;
      }
      double d = 0;
      if (!ParseNonFinite(v, &d)) {
        *why = "field '" + k + "' has the wrong type";
        return false;
      }
      return Number(k, d);
    }
  };
  std::string why;
  Visitor visitor{&out, &why};
  ARBOR_TRY(VisitFlatObject(text, "score", &visitor, [&] { out = ScoreTerms(); }));
  return out;
}

std::string EncodeNumbers(const std::map<std::string, double>& numbers) {
  if (numbers.empty()) return "{}";
  json j = json::object();
  for (const auto& [k, v] : numbers) j[k] = Number(v);
  return Dump(j);
}

Result<std::map<std::string, double>> DecodeNumbers(std::string_view text) {
  std::map<std::string, double> out;
  if (text == "{}") return out;
  struct Visitor {
    std::map<std::string, double>* out;
    std::string* why;
    bool Number(const std::string& k, double v) {
      out->insert_or_assign(out->end(), k, v);
      return true;
    }
    bool String(const std::string& k, std::string& v) {
      double d = 0;
      if (!ParseNonFinite(v, &d)) {
        *why = "'" + k + "' is not a number";
        return false;
      }
      return Number(k, d);
    }
  };
  std::string why;
  Visitor visitor{&out, &why};
  ARBOR_TRY(VisitFlatObject(text, "sample extra", &visitor, [&] { out.clear(); }));
  return out;
}

std::string EncodeProfile(const Profile& profile) {
  json components = json::array();
  for (const auto& c : profile.components) {
    components.push_back({{"name", c.name}, {"layer", c.layer}, {"share", Number(c.share)}});
  }
  json out{{"total_s", Number(profile.total_s)}, {"components", std::move(components)}};
  if (!profile.raw.empty()) {  // imported profiles only; absent in older stores
    json raw = json::array();
    for (const auto& [name, share] : profile.raw) {
      raw.push_back({{"name", name}, {"share", Number(share)}});
    }
    out["raw"] = std::move(raw);
  }
  return Dump(out);
}

Result<Profile> DecodeProfile(std::string_view text) {
  ARBOR_TRY_ASSIGN(auto j, ParseObject(text, "profile"));
  Profile out;
  if (!ReadField(j, "total_s", &out.total_s)) return BadField("profile", "total_s");
  auto it = j.find("components");
  if (it == j.end()) return out;
  if (!it->is_array()) return BadField("profile", "components");
  for (const auto& c : *it) {
    if (!c.is_object()) return BadField("profile", "components");
    Component comp;
    if (!ReadField(c, "name", &comp.name)) return BadField("profile", "name");
    if (!ReadField(c, "layer", &comp.layer)) return BadField("profile", "layer");
    if (!ReadField(c, "share", &comp.share)) return BadField("profile", "share");
    out.components.push_back(std::move(comp));
  }
  auto raw = j.find("raw");
  if (raw == j.end()) return out;
  if (!raw->is_array()) return BadField("profile", "raw");
  for (const auto& r : *raw) {
    std::pair<std::string, double> entry;
    if (!r.is_object() || !ReadField(r, "name", &entry.first) ||
        !ReadField(r, "share", &entry.second)) {
      return BadField("profile", "raw");
    }
    out.raw.push_back(std::move(entry));
  }
  return out;
}

bool IsEmptyOrJsonObject(std::string_view text) {
  if (text.empty()) return true;
  json j = json::parse(text, nullptr, /*allow_exceptions=*/false);
  return !j.is_discarded() && j.is_object();
}

}  // namespace arbor::store_json

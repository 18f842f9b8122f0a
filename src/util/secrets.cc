#include "util/secrets.h"

#include <algorithm>
#include <functional>
#include <utility>

#include "util/escape.h"

namespace arbor {
namespace {

constexpr std::string_view kBase64Std =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
constexpr std::string_view kBase64Url =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
constexpr std::string_view kHexLower = "0123456789abcdef";
constexpr std::string_view kHexUpper = "0123456789ABCDEF";

enum class Padding { kNone, kPad };

std::string Base64(std::string_view bytes, std::string_view alphabet, Padding padding) {
  std::string out;
  out.reserve((bytes.size() + 2) / 3 * 4);
  size_t i = 0;
  for (; i + 3 <= bytes.size(); i += 3) {
    unsigned v = static_cast<unsigned char>(bytes[i]) << 16 |
                 static_cast<unsigned char>(bytes[i + 1]) << 8 |
                 static_cast<unsigned char>(bytes[i + 2]);
    for (int shift : {18, 12, 6, 0}) out += alphabet[(v >> shift) & 63];
  }
  size_t rest = bytes.size() - i;
  if (rest == 0) return out;
  unsigned v = static_cast<unsigned char>(bytes[i]) << 16;
  if (rest == 2) v |= static_cast<unsigned char>(bytes[i + 1]) << 8;
  out += alphabet[(v >> 18) & 63];
  out += alphabet[(v >> 12) & 63];
  if (rest == 2) out += alphabet[(v >> 6) & 63];
  if (padding == Padding::kPad) out.append(3 - rest, '=');
  return out;
}

// The characters of the base64 encoding of `value` that do not depend on its neighbours when
// it starts `shift` bytes (0, 1 or 2) after a 3-byte boundary of a larger blob: exactly the
// 6-bit groups that lie inside the value's bits [8·shift, 8·(shift + n)).
std::string Base64Core(std::string_view value, size_t shift, std::string_view alphabet) {
  std::string shifted(shift, '\0');
  shifted.append(value);
  std::string encoded = Base64(shifted, alphabet, Padding::kNone);
  size_t first = (8 * shift + 5) / 6;
  size_t last = 8 * (shift + value.size()) / 6;  // exclusive
  return encoded.substr(first, last - first);
}

std::string Hex(std::string_view bytes, std::string_view digits) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (char c : bytes) {
    auto u = static_cast<unsigned char>(c);
    out += digits[u >> 4];
    out += digits[u & 15];
  }
  return out;
}

// Percent-encoding of everything but RFC 3986's unreserved characters and `also_safe`
// (Python's quote() keeps '/', JavaScript's encodeURIComponent keeps "!'()*"); form encoding
// writes a space as '+'.
enum class Space { kPercent, kPlus };
std::string PercentEncode(std::string_view bytes, std::string_view digits,
                          std::string_view also_safe, Space space) {
  std::string out;
  for (char c : bytes) {
    auto u = static_cast<unsigned char>(c);
    bool unreserved = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                      c == '-' || c == '.' || c == '_' || c == '~';
    if (unreserved || also_safe.find(c) != std::string_view::npos) {
      out += c;
    } else if (c == ' ' && space == Space::kPlus) {
      out += '+';
    } else {
      out += '%';
      out += digits[u >> 4];
      out += digits[u & 15];
    }
  }
  return out;
}

std::string ReplaceAll(std::string text, std::string_view from, std::string_view to) {
  for (size_t pos = text.find(from); pos != std::string::npos;
       pos = text.find(from, pos + to.size())) {
    text.replace(pos, from.size(), to);
  }
  return text;
}

}  // namespace

std::vector<std::string> Scrubber::Forms(std::string_view value) {
  std::vector<std::string> forms;
  forms.emplace_back(value);
  for (std::string_view alphabet : {kBase64Std, kBase64Url}) {
    forms.push_back(Base64(value, alphabet, Padding::kPad));
    forms.push_back(Base64(value, alphabet, Padding::kNone));
    for (size_t shift = 0; shift < 3; ++shift) {
      forms.push_back(Base64Core(value, shift, alphabet));
    }
  }
  for (std::string_view digits : {kHexLower, kHexUpper}) {
    forms.push_back(Hex(value, digits));
    for (std::string_view safe : {"", "/", "!'()*"}) {
      forms.push_back(PercentEncode(value, digits, safe, Space::kPercent));
    }
    forms.push_back(JsonEscape(value, digits, JsonSlash::kKeep));
  }
  forms.push_back(PercentEncode(value, kHexUpper, "", Space::kPlus));
  forms.push_back(JsonEscape(value, kHexLower, JsonSlash::kEscape));
  // JSON text embedded in another JSON string (a log line carried in an event's data).
  forms.push_back(
      JsonEscape(JsonEscape(value, kHexLower, JsonSlash::kKeep), kHexLower, JsonSlash::kKeep));
  forms.push_back(ReplaceAll(std::string(value), "\n", "\\n"));
  forms.push_back(ReplaceAll(ReplaceAll(std::string(value), "\r", "\\r"), "\n", "\\n"));

  std::sort(forms.begin(), forms.end());
  forms.erase(std::unique(forms.begin(), forms.end()), forms.end());
  // A short base64 core could only come from a short value; never search for an empty form.
  std::erase_if(forms, [](const std::string& f) { return f.size() < kMinSecretLength; });
  return forms;
}

void Scrubber::Add(std::string name, std::string value) {
  // Short values would redact ordinary text (see the header): not secrets worth the damage.
  if (value.size() < kMinSecretLength) return;
  names_.push_back(std::move(name));
  for (std::string& form : Forms(value)) {
    bool known = std::any_of(patterns_.begin(), patterns_.end(),
                             [&](const Pattern& p) { return p.text == form; });
    if (known) continue;
    max_length_ = std::max(max_length_, form.size());
    patterns_.push_back(Pattern{std::move(form), names_.size() - 1});
  }
}

// Each form is searched for separately with Boyer-Moore-Horspool from the standard library:
// with a few dozen forms per secret and skips of about a form's length, a multi-MB log takes
// milliseconds, so a multi-pattern automaton (Aho-Corasick) or a regex library is not worth a
// dependency.
std::vector<Scrubber::Span> Scrubber::Find(std::string_view text) const {
  std::vector<Span> found;
  for (const Pattern& p : patterns_) {
    std::boyer_moore_horspool_searcher searcher(p.text.begin(), p.text.end());
    auto it = text.begin();
    while (true) {
      auto [match, match_end] = searcher(it, text.end());
      if (match == text.end()) break;
      size_t begin = static_cast<size_t>(match - text.begin());
      found.push_back(Span{begin, begin + p.text.size(), &names_[p.name_index]});
      it = match + 1;  // overlapping occurrences too: the union is redacted
    }
  }
  std::sort(found.begin(), found.end(), [](const Span& a, const Span& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end > b.end;
  });
  std::vector<Span> merged;
  for (const Span& s : found) {
    if (!merged.empty() && s.begin <= merged.back().end) {
      merged.back().end = std::max(merged.back().end, s.end);
    } else {
      merged.push_back(s);
    }
  }
  return merged;
}

std::string Scrubber::Scrub(std::string_view text) const {
  std::vector<Span> spans = Find(text);
  if (spans.empty()) return std::string(text);
  std::string out;
  out.reserve(text.size());
  size_t at = 0;
  for (const Span& s : spans) {
    out.append(text.substr(at, s.begin - at));
    out += "[redacted:" + *s.name + "]";
    at = s.end;
  }
  out.append(text.substr(at));
  return out;
}

bool Scrubber::Contains(std::string_view text) const {
  for (const Pattern& p : patterns_) {
    std::boyer_moore_horspool_searcher searcher(p.text.begin(), p.text.end());
    if (searcher(text.begin(), text.end()).first != text.end()) return true;
  }
  return false;
}

}  // namespace arbor

// Scrubber: removes the values of secret variables (API keys, tokens) from text before the text
// is stored, logged or sent anywhere (docs/secrets.md).
//
// Add() takes a variable's name and value and precomputes every form of the value to look for:
// the plain bytes; base64 (standard and URL-safe alphabets, padded and unpadded) and, because a
// value embedded in a larger base64 blob encodes differently depending on its offset mod 3, the
// stable core of each of the three offset-shifted encodings; hex (lower and upper case);
// percent-encoding (%2F and %2f styles, and '+' for spaces); JSON string escaping (also
// escaped twice, with \/ and with upper-case \u00XX); and the value with escaped newlines.
// Scrub() replaces every occurrence of any form with "[redacted:NAME]"; overlapping or adjacent
// occurrences become one redaction, so no byte of any occurrence survives.
//
// Values shorter than kMinSecretLength are ignored: a short value ("1", "true", "admin") also
// occurs in ordinary text, and redacting it everywhere would destroy logs and diagnoses while
// protecting next to nothing (a value that short is guessable anyway).
//
// A Scrubber is immutable after its last Add(); const methods may be called from any thread.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace arbor {

inline constexpr size_t kMinSecretLength = 6;

class Scrubber {
 public:
  // Registers `value` under `name` (the variable's name, shown in redactions). Values shorter
  // than kMinSecretLength are ignored (see above); adding the same value twice is harmless.
  void Add(std::string name, std::string value);

  // `text` with every occurrence of every form of every value replaced by "[redacted:NAME]".
  std::string Scrub(std::string_view text) const;
  // Whether `text` holds any form of any value (for tests and audits).
  bool Contains(std::string_view text) const;
  // No value registered: Scrub() returns its input unchanged.
  bool empty() const { return patterns_.empty(); }

  // One redaction: bytes [begin, end) of the text, named after the variable whose form starts
  // first there. Spans are sorted, disjoint and never adjacent.
  struct Span {
    size_t begin = 0;
    size_t end = 0;
    const std::string* name = nullptr;
  };
  std::vector<Span> Find(std::string_view text) const;
  // The longest form: a stream scrubbed in pieces must overlap them by at least this minus 1.
  size_t max_pattern_length() const { return max_length_; }

  // Every form of `value` that Add() would look for (deduplicated), for tests and docs.
  static std::vector<std::string> Forms(std::string_view value);

 private:
  struct Pattern {
    std::string text;
    size_t name_index = 0;
  };
  std::vector<std::string> names_;
  std::vector<Pattern> patterns_;
  size_t max_length_ = 0;
};

}  // namespace arbor

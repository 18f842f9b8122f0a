#include "util/escape.h"

#include <algorithm>
#include <cstring>

namespace arbor {

std::string EscapeControlChars(std::string_view s) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size());
  for (char c : s) {
    auto u = static_cast<unsigned char>(c);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else if (u < 0x20 || u == 0x7f) {
      out += "\\x";
      out += kHex[u >> 4];
      out += kHex[u & 0xf];
    } else {
      out += c;
    }
  }
  return out;
}

std::string JsonEscape(std::string_view bytes, std::string_view digits, JsonSlash slash) {
  std::string out;
  for (char c : bytes) {
    auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '/':
        out += slash == JsonSlash::kEscape ? "\\/" : "/";
        break;
      default:
        if (u < 0x20) {
          out += "\\u00";
          out += digits[u >> 4];
          out += digits[u & 15];
        } else {
          out += c;
        }
    }
  }
  return out;
}

std::string ShellQuote(const std::string& s) {
  auto safe = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c != '\0' && std::strchr("_@%+=:,./-", c) != nullptr);
  };
  if (!s.empty() && std::all_of(s.begin(), s.end(), safe)) return s;
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

}  // namespace arbor

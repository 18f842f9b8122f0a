#include "util/escape.h"

#include <algorithm>
#include <cstring>

#include "util/strings.h"

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

std::string QuoteForMessage(std::string_view s) {
  std::string body;
  body.reserve(s.size());
  for (char c : s) {
    if (c == '"' || c == '\\') body += '\\';
    body += c;
  }
  return "\"" + EscapeControlChars(body) + "\"";
}

std::vector<std::string> VisibleTail(std::string_view text, size_t max_lines, size_t max_bytes) {
  const bool cut = text.size() > max_bytes;
  if (cut) text.remove_prefix(text.size() - max_bytes);
  std::vector<std::string> lines;
  if (text.empty()) return lines;
  if (text.back() == '\n') text.remove_suffix(1);
  // Walk back from the end so only the lines shown are escaped.
  size_t end = text.size();
  while (lines.size() < max_lines) {
    size_t nl = end == 0 ? std::string_view::npos : text.rfind('\n', end - 1);
    size_t begin = nl == std::string_view::npos ? 0 : nl + 1;
    std::string line = EscapeControlChars(text.substr(begin, end - begin));
    lines.push_back(begin == 0 && cut ? "..." + line : line);
    if (begin == 0) break;
    end = nl;
  }
  std::reverse(lines.begin(), lines.end());
  return lines;
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

std::string JsonString(std::string_view s) { return "\"" + JsonEscape(s) + "\""; }

std::string TomlBasicString(std::string_view s) {
  // TOML's escapes are JSON's (\/ aside); TOML also escapes DEL, which JSON leaves as it is.
  std::string body = ReplaceAll(JsonEscape(s, "0123456789ABCDEF"), "\x7f", "\\u007F");
  return "\"" + body + "\"";
}

std::string HtmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (char ch : text) {
    switch (ch) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += ch;
    }
  }
  return out;
}

std::string ShellQuote(const std::string& s, ShellQuoting quoting) {
  auto safe = [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c != '\0' && std::strchr("_@%+=:,./-", c) != nullptr);
  };
  if (quoting == ShellQuoting::kWhenNeeded && !s.empty() && std::all_of(s.begin(), s.end(), safe)) {
    return s;
  }
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

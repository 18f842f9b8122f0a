#include "util/strings.h"

#include <algorithm>
#include <cstdio>

namespace arbor {

std::string Trim(std::string_view s) {
  size_t b = 0;
  size_t e = s.size();
  while (b < e && (s[b] == ' ' || s[b] == '\t' || s[b] == '\n' || s[b] == '\r')) ++b;
  while (e > b && (s[e - 1] == ' ' || s[e - 1] == '\t' || s[e - 1] == '\n' || s[e - 1] == '\r'))
    --e;
  return std::string(s.substr(b, e - b));
}

std::vector<std::string> Split(std::string_view s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == sep) {
      out.emplace_back(s.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

bool StartsWith(std::string_view s, std::string_view prefix) {
  return s.size() >= prefix.size() && s.substr(0, prefix.size()) == prefix;
}

bool EndsWith(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

std::string Join(const std::vector<std::string>& parts, std::string_view sep) {
  std::string out;
  for (size_t i = 0; i < parts.size(); ++i) {
    if (i) out += sep;
    out += parts[i];
  }
  return out;
}

std::string ReplaceAll(std::string s, std::string_view from, std::string_view to) {
  if (from.empty()) return s;
  size_t pos = 0;
  while ((pos = s.find(from, pos)) != std::string::npos) {
    s.replace(pos, from.size(), to);
    pos += to.size();
  }
  return s;
}

namespace {

// Matches one bracket class starting at p[pi] == '['; returns the index after ']' or npos.
size_t MatchClass(std::string_view p, size_t pi, char c, bool* matched) {
  size_t i = pi + 1;
  bool negate = i < p.size() && (p[i] == '!' || p[i] == '^');
  if (negate) ++i;
  bool hit = false;
  bool first = true;
  for (; i < p.size() && (first || p[i] != ']'); ++i, first = false) {
    if (i + 2 < p.size() && p[i + 1] == '-' && p[i + 2] != ']') {
      if (c >= p[i] && c <= p[i + 2]) hit = true;
      i += 2;
    } else if (p[i] == c) {
      hit = true;
    }
  }
  if (i >= p.size()) return std::string_view::npos;
  *matched = hit != negate;
  return i + 1;
}

}  // namespace

bool GlobMatch(std::string_view p, std::string_view t) {
  // Iterative matcher with single-star backtracking: linear in practice, no recursion.
  size_t pi = 0;
  size_t ti = 0;
  size_t star_p = std::string_view::npos;
  size_t star_t = 0;
  while (ti < t.size()) {
    if (pi < p.size() && p[pi] == '*') {
      star_p = pi++;
      star_t = ti;
      continue;
    }
    if (pi < p.size()) {
      if (p[pi] == '?') {
        ++pi;
        ++ti;
        continue;
      }
      if (p[pi] == '[') {
        bool matched = false;
        size_t next = MatchClass(p, pi, t[ti], &matched);
        if (next != std::string_view::npos) {
          if (matched) {
            pi = next;
            ++ti;
            continue;
          }
        } else if (p[pi] == t[ti]) {  // unterminated '[' is a literal
          ++pi;
          ++ti;
          continue;
        }
      } else if (p[pi] == t[ti]) {
        ++pi;
        ++ti;
        continue;
      }
    }
    if (star_p == std::string_view::npos) return false;
    pi = star_p + 1;
    ti = ++star_t;
  }
  while (pi < p.size() && p[pi] == '*') ++pi;
  return pi == p.size();
}

namespace {

// PathGlobMatch from pattern index `pi` and path index `ti`; `memo` caches failures (1) per
// (pi, ti), which keeps the backtracking over several '**' polynomial.
bool PathGlobFrom(std::string_view p, std::string_view t, size_t pi, size_t ti,
                  std::vector<char>* memo) {
  char& seen = (*memo)[pi * (t.size() + 1) + ti];
  if (seen) return false;
  bool matched = false;
  if (pi == p.size()) {
    matched = ti == t.size();
  } else if (p.substr(pi, 3) == "**/") {
    matched = PathGlobFrom(p, t, pi + 3, ti, memo);  // zero directories
    for (size_t k = ti; !matched && k < t.size(); ++k) {
      if (t[k] == '/') matched = PathGlobFrom(p, t, pi + 3, k + 1, memo);
    }
  } else if (p.substr(pi, 2) == "**") {
    for (size_t k = ti; !matched && k <= t.size(); ++k)
      matched = PathGlobFrom(p, t, pi + 2, k, memo);
  } else if (p[pi] == '*') {
    for (size_t k = ti; !matched && k <= t.size(); ++k) {
      matched = PathGlobFrom(p, t, pi + 1, k, memo);
      if (k < t.size() && t[k] == '/') break;
    }
  } else if (ti < t.size() && t[ti] != '/' && p[pi] == '?') {
    matched = PathGlobFrom(p, t, pi + 1, ti + 1, memo);
  } else if (ti < t.size() && p[pi] == '[') {
    bool hit = false;
    size_t next = MatchClass(p, pi, t[ti], &hit);
    if (next == std::string_view::npos) {  // unterminated '[' is a literal
      matched = t[ti] == '[' && PathGlobFrom(p, t, pi + 1, ti + 1, memo);
    } else {
      matched = hit && t[ti] != '/' && PathGlobFrom(p, t, next, ti + 1, memo);
    }
  } else if (ti < t.size() && p[pi] == t[ti]) {
    matched = PathGlobFrom(p, t, pi + 1, ti + 1, memo);
  }
  if (!matched) seen = 1;
  return matched;
}

}  // namespace

bool PathGlobMatch(std::string_view pattern, std::string_view path) {
  std::vector<char> memo((pattern.size() + 1) * (path.size() + 1), 0);
  return PathGlobFrom(pattern, path, 0, 0, &memo);
}

size_t EditDistance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1);
  std::vector<size_t> cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
    }
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::string ClosestMatch(std::string_view word, const std::vector<std::string>& candidates) {
  size_t limit = std::max<size_t>(2, word.size() / 3);
  size_t best = limit + 1;
  std::string out;
  for (const auto& c : candidates) {
    size_t d = EditDistance(word, c);
    if (d < best) {
      best = d;
      out = c;
    }
  }
  return out;
}

std::string FormatDouble(double v, int digits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

}  // namespace arbor

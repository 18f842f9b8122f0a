// ParsePatch (patch_policy.h): reads a diff the way `git apply` does, so the policy checks the
// very paths git would write. Where git's parser is lenient the parser is strict: names that
// disagree, a short hunk or a bad escape make the whole patch malformed.
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "exec/patch_policy.h"
#include "util/escape.h"
#include "util/strings.h"

namespace arbor {
namespace {

constexpr std::string_view kDevNull = "/dev/null";

// `why` may quote unquoted names (git's "\012" is a newline): escaped to stay one line.
Error Malformed(size_t line, const std::string& why) {
  return MakeError(EscapeControlChars("line " + std::to_string(line) + ": " + why));
}

// Undoes git's C-style quoting of `s`, which starts with '"'; sets *end after the closing '"'.
Result<std::string> Unquote(std::string_view s, size_t line, size_t* end) {
  std::string out;
  for (size_t i = 1; i < s.size(); ++i) {
    char c = s[i];
    if (c == '"') {
      *end = i + 1;
      return out;
    }
    if (c != '\\') {
      out += c;
      continue;
    }
    if (++i == s.size()) break;
    // Pairs of (escape letter, character) for git's C-style quoting.
    constexpr std::string_view kEscapes = "a\ab\bf\fn\nr\rt\tv\v\\\\\"\"";
    if (size_t e = kEscapes.find(s[i]); e != std::string_view::npos && e % 2 == 0) {
      out += kEscapes[e + 1];
      continue;
    }
    auto octal = [&](size_t k) { return k < s.size() && s[k] >= '0' && s[k] <= '7'; };
    if (s[i] > '3' || !octal(i) || !octal(i + 1) || !octal(i + 2)) {
      return Malformed(line, "bad escape in quoted name");
    }
    out += static_cast<char>((s[i] - '0') * 64 + (s[i + 1] - '0') * 8 + (s[i + 2] - '0'));
    i += 2;
  }
  return Malformed(line, "unterminated quoted name");
}

// The name as `git apply -p1` resolves it: the first component removed, unless absolute.
std::string StripPrefix(std::string name) {
  if (name.empty() || name[0] == '/') return name;
  size_t slash = name.find('/');
  return slash == std::string::npos ? name : name.substr(slash + 1);
}

// The name of a "--- " / "+++ " line (raw, before stripping): quoted, or up to a tab.
Result<std::string> TraditionalName(std::string_view rest, size_t line) {
  if (!rest.empty() && rest[0] == '"') {
    size_t end = 0;
    Result<std::string> name = Unquote(rest, line, &end);
    if (name.ok() && end < rest.size() && rest[end] != '\t' && rest[end] != ' ') {
      return Malformed(line, "text after a quoted name");
    }
    return name;
  }
  std::string_view name = rest.substr(0, rest.find('\t'));
  if (name.size() == rest.size() && name.find(' ') != std::string_view::npos) {
    // git writes a tab after names with spaces; without it the name's end is a guess.
    return Malformed(line, "a name with a space must end with a tab");
  }
  return std::string(name);
}

// The two names of a "diff --git " line, stripped; nullopt when git could not tell them apart
// (unquoted names with spaces that differ: only rename/copy lines can then name the files).
Result<std::pair<std::optional<std::string>, std::optional<std::string>>> HeaderNames(
    std::string_view rest, size_t line) {
  using Names = std::pair<std::optional<std::string>, std::optional<std::string>>;
  auto second = [&](std::string first, std::string_view tail) -> Result<Names> {
    if (!tail.empty() && tail[0] == '"') {
      size_t end = 0;
      ARBOR_TRY_ASSIGN(std::string b, Unquote(tail, line, &end));
      if (end != tail.size()) return Malformed(line, "text after a quoted name");
      return Names{StripPrefix(std::move(first)), StripPrefix(std::move(b))};
    }
    return Names{StripPrefix(std::move(first)), StripPrefix(std::string(tail))};
  };
  if (!rest.empty() && rest[0] == '"') {
    size_t end = 0;
    ARBOR_TRY_ASSIGN(std::string a, Unquote(rest, line, &end));
    if (end >= rest.size() || rest[end] != ' ') return Malformed(line, "one name in diff --git");
    return second(std::move(a), rest.substr(end + 1));
  }
  if (size_t q = rest.find(" \""); q != std::string_view::npos && rest.back() == '"') {
    return second(std::string(rest.substr(0, q)), rest.substr(q + 1));
  }
  std::vector<size_t> spaces;
  for (size_t i = 0; i < rest.size(); ++i) {
    if (rest[i] == ' ') spaces.push_back(i);
  }
  if (spaces.empty()) return Malformed(line, "one name in diff --git");
  if (spaces.size() == 1)
    return second(std::string(rest.substr(0, spaces[0])), rest.substr(spaces[0] + 1));
  for (size_t sp : spaces) {
    std::string a = StripPrefix(std::string(rest.substr(0, sp)));
    if (a == StripPrefix(std::string(rest.substr(sp + 1)))) return Names{a, a};
  }
  return Names{std::nullopt, std::nullopt};
}

bool ValidMode(std::string_view mode) {
  if (mode.empty() || mode.size() > 6) return false;
  for (char c : mode) {
    if (c < '0' || c > '7') return false;
  }
  return true;
}

// One file section being read, with every name it gives for the old and the new file.
struct Section {
  PatchFile file;
  size_t line = 0;  // of its first header line
  std::optional<std::string> header_old, header_new, minus, plus, from, to;
  bool minus_null = false, plus_null = false;
};

// Sets `slot` to `name`, or fails when a different name was already given.
Status Give(std::optional<std::string>* slot, std::string name, size_t line) {
  if (slot->has_value() && **slot != name) {
    return Malformed(line, "the file is named both \"" + **slot + "\" and \"" + name + "\"");
  }
  *slot = std::move(name);
  return {};
}

// Resolves a section's names and appends its PatchFile to `out`.
Status Finish(Section s, std::vector<PatchFile>* out) {
  const std::optional<std::string>* olds[] = {&s.from, &s.minus, &s.header_old};
  const std::optional<std::string>* news[] = {&s.to, &s.plus, &s.header_new};
  std::optional<std::string> old_name;
  std::optional<std::string> new_name;
  for (const auto* o : olds) {
    if (o->has_value()) ARBOR_TRY(Give(&old_name, **o, s.line));
  }
  for (const auto* n : news) {
    if (n->has_value()) ARBOR_TRY(Give(&new_name, **n, s.line));
  }
  if (s.minus_null && s.plus_null) return Malformed(s.line, "both sides are /dev/null");
  s.file.created = s.file.created || s.minus_null;
  s.file.deleted = s.file.deleted || s.plus_null;
  if (s.file.created && s.file.deleted) return Malformed(s.line, "file both created and deleted");
  if ((!old_name && !s.file.created) || (!new_name && !s.file.deleted)) {
    return Malformed(s.line, "cannot tell which file this section changes");
  }
  s.file.old_path = old_name.value_or("");
  s.file.new_path = new_name.value_or("");
  out->push_back(std::move(s.file));
  return {};
}

// Parses "@@ -a[,b] +c[,d] @@" into the old and new line counts.
Status HunkCounts(std::string_view h, size_t line, long* old_count, long* new_count) {
  auto number = [&](size_t* i, long* v) {
    size_t start = *i;
    *v = 0;
    while (*i < h.size() && h[*i] >= '0' && h[*i] <= '9' && *v < 100000000) {
      *v = *v * 10 + (h[(*i)++] - '0');
    }
    return *i > start;
  };
  auto range = [&](size_t* i, char sign, long* count) {
    long start = 0;
    if (*i >= h.size() || h[(*i)++] != sign || !number(i, &start)) return false;
    *count = 1;
    if (*i < h.size() && h[*i] == ',') {
      ++*i;
      return number(i, count);
    }
    return true;
  };
  size_t i = 3;
  if (!range(&i, '-', old_count) || i >= h.size() || h[i++] != ' ' || !range(&i, '+', new_count) ||
      h.substr(i, 3) != " @@") {
    return Malformed(line, "bad hunk header");
  }
  return {};
}

}  // namespace

Result<std::vector<PatchFile>> ParsePatch(std::string_view diff) {
  enum class State { kText, kHeader, kHunk };
  std::vector<std::string_view> lines;
  for (size_t start = 0; start < diff.size();) {
    size_t nl = diff.find('\n', start);
    if (nl == std::string_view::npos) nl = diff.size();
    lines.push_back(diff.substr(start, nl - start));
    start = nl + 1;
  }
  std::vector<PatchFile> files;
  std::optional<Section> cur;
  State state = State::kText;
  long old_left = 0;
  long new_left = 0;
  auto close = [&]() -> Status {
    if (cur) ARBOR_TRY(Finish(std::move(*cur), &files));
    cur.reset();
    return {};
  };
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string_view l = lines[i];
    size_t n = i + 1;
    if (state == State::kHunk) {
      char c = l.empty() ? ' ' : l[0];
      if (c == '\\') continue;  // "\ No newline at end of file"
      if (c != ' ' && c != '-' && c != '+') {
        return Malformed(
            n, "hunk ends early (" + std::to_string(old_left + new_left) + " lines missing)");
      }
      if (c != '+') --old_left;
      if (c != '-') --new_left;
      if (old_left < 0 || new_left < 0) return Malformed(n, "hunk longer than its header");
      if (StartsWith(l.substr(l.empty() ? 0 : 1), "Subproject commit ")) {
        cur->file.subproject_lines = true;
      }
      if (old_left == 0 && new_left == 0) state = State::kText;
      continue;
    }
    if (StartsWith(l, "diff --git ")) {
      ARBOR_TRY(close());
      ARBOR_TRY_ASSIGN(auto names, HeaderNames(l.substr(11), n));
      cur = Section{};
      cur->line = n;
      cur->header_old = names.first;
      cur->header_new = names.second;
      state = State::kHeader;
      continue;
    }
    if (StartsWith(l, "@@ -")) {
      if (!cur) return Malformed(n, "hunk without a file header");
      ARBOR_TRY(HunkCounts(l, n, &old_left, &new_left));
      state = old_left == 0 && new_left == 0 ? State::kText : State::kHunk;
      continue;
    }
    bool pair = StartsWith(l, "--- ") && i + 1 < lines.size() && StartsWith(lines[i + 1], "+++ ");
    if (state == State::kText && pair) {  // a plain "--- x" / "+++ y" section
      ARBOR_TRY(close());
      cur = Section{};
      cur->line = n;
      state = State::kHeader;
    }
    if (state == State::kHeader || pair) {
      auto rest = [&](size_t prefix) { return l.substr(prefix); };
      auto mode = [&](size_t prefix, std::string* slot) -> Status {
        if (!ValidMode(rest(prefix))) return Malformed(n, "bad file mode");
        *slot = std::string(rest(prefix));
        return {};
      };
      auto name = [&](size_t prefix, std::optional<std::string>* slot, bool* null) -> Status {
        ARBOR_TRY_ASSIGN(auto raw, TraditionalName(rest(prefix), n));
        if (raw == kDevNull) {
          *null = true;
          return {};
        }
        return Give(slot, StripPrefix(raw), n);
      };
      // rename/copy from/to: the whole rest of the line or a quoted name, without a prefix.
      auto plain = [&](size_t prefix, std::optional<std::string>* slot) -> Status {
        std::string_view r = rest(prefix);
        if (r.empty() || r[0] != '"') return Give(slot, std::string(r), n);
        size_t end = 0;
        ARBOR_TRY_ASSIGN(std::string unquoted, Unquote(r, n, &end));
        if (end != r.size()) return Malformed(n, "text after a quoted name");
        return Give(slot, std::move(unquoted), n);
      };
      PatchFile& f = cur->file;
      if (StartsWith(l, "--- ")) {
        ARBOR_TRY(name(4, &cur->minus, &cur->minus_null));
      } else if (StartsWith(l, "+++ ")) {
        ARBOR_TRY(name(4, &cur->plus, &cur->plus_null));
      } else if (StartsWith(l, "old mode ")) {
        ARBOR_TRY(mode(9, &f.old_mode));
      } else if (StartsWith(l, "new mode ")) {
        ARBOR_TRY(mode(9, &f.new_mode));
      } else if (StartsWith(l, "new file mode ")) {
        f.created = true;
        ARBOR_TRY(mode(14, &f.new_mode));
      } else if (StartsWith(l, "deleted file mode ")) {
        f.deleted = true;
        ARBOR_TRY(mode(18, &f.old_mode));
      } else if (StartsWith(l, "rename from ") || StartsWith(l, "rename old ")) {
        f.renamed = true;
        ARBOR_TRY(plain(StartsWith(l, "rename from ") ? 12 : 11, &cur->from));
      } else if (StartsWith(l, "rename to ") || StartsWith(l, "rename new ")) {
        f.renamed = true;
        ARBOR_TRY(plain(StartsWith(l, "rename to ") ? 10 : 11, &cur->to));
      } else if (StartsWith(l, "copy from ")) {
        f.copied = true;
        ARBOR_TRY(plain(10, &cur->from));
      } else if (StartsWith(l, "copy to ")) {
        f.copied = true;
        ARBOR_TRY(plain(8, &cur->to));
      } else if (StartsWith(l, "index ")) {
        std::vector<std::string> parts = Split(Trim(rest(6)), ' ');
        if (parts.size() > 1) {
          if (!ValidMode(parts[1])) return Malformed(n, "bad file mode");
          if (f.old_mode.empty()) f.old_mode = parts[1];
          if (f.new_mode.empty()) f.new_mode = parts[1];
        }
      } else if (StartsWith(l, "GIT binary patch") || StartsWith(l, "Binary files ")) {
        f.binary = true;
        state = State::kText;
      } else if (!StartsWith(l, "similarity index ") && !StartsWith(l, "dissimilarity index ")) {
        state = State::kText;  // the end of the extended headers; git skips such text
      }
      continue;
    }
    if (cur && (StartsWith(l, "GIT binary patch") || StartsWith(l, "Binary files "))) {
      cur->file.binary = true;
    }
  }
  if (state == State::kHunk) {
    return Malformed(lines.size(), "patch ends inside a hunk (" +
                                       std::to_string(old_left + new_left) + " lines missing)");
  }
  ARBOR_TRY(close());
  return files;
}

std::vector<std::string> PatchTargets(std::string_view diff) {
  std::vector<std::string> paths;
  Result<std::vector<PatchFile>> files = ParsePatch(diff);
  if (!files) return paths;
  for (const PatchFile& f : *files) {
    if (!f.deleted && !f.new_path.empty()) paths.push_back(f.new_path);
  }
  return paths;
}

}  // namespace arbor

#include "config/starter_actions.h"

#include <algorithm>
#include <array>
#include <utility>

#include "config/embedded_text.h"
#include "util/strings.h"

namespace arbor {
namespace {

constexpr std::array<std::pair<BuildSystem, std::string_view>, 5> kSystems = {{
    {BuildSystem::kCMake, "cmake"},
    {BuildSystem::kMeson, "meson"},
    {BuildSystem::kMake, "make"},
    {BuildSystem::kCargo, "cargo"},
    {BuildSystem::kPython, "python"},
}};

struct Block {
  std::vector<std::string> lines;
  std::string id;
  std::vector<std::string> systems;  // empty: every system
  std::vector<std::vector<std::string>> needs;
};

std::vector<std::string> Words(std::string_view s) {
  std::vector<std::string> out;
  for (const std::string& w : Split(s, ' ')) {
    if (!w.empty()) out.push_back(w);
  }
  return out;
}

// The preamble (the file's opening comment) and its blocks.
Result<std::pair<std::vector<std::string>, std::vector<Block>>> SplitBlocks(std::string_view file,
                                                                            std::string_view text) {
  std::vector<std::string> lines = Split(text, '\n');
  std::vector<size_t> starts;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (Trim(lines[i]) != "[[action]]") continue;
    size_t start = i;
    while (start > 0 && StartsWith(lines[start - 1], "#")) --start;
    starts.push_back(start);
  }
  std::vector<std::string> preamble(
      lines.begin(),
      lines.begin() + static_cast<std::ptrdiff_t>(starts.empty() ? lines.size() : starts[0]));
  std::vector<Block> blocks;
  for (size_t b = 0; b < starts.size(); ++b) {
    const size_t end = b + 1 < starts.size() ? starts[b + 1] : lines.size();
    Block block;
    for (size_t i = starts[b]; i < end; ++i) {
      const std::string& line = lines[i];
      if (StartsWith(line, "#@")) {
        std::vector<std::string> w = Words(line.substr(2));
        if (!w.empty() && w[0] == "systems" && w.size() > 1) {
          block.systems.assign(w.begin() + 1, w.end());
        } else if (!w.empty() && w[0] == "needs" &&
                   ((w.size() == 4 && (w[1] == "lib" || w[1] == "cmd")) ||
                    (w.size() == 3 && w[1] == "feature"))) {
          block.needs.emplace_back(w.begin() + 1, w.end());
        } else {
          return MakeError(std::string(file) + ": malformed directive '" + line + "'");
        }
      }
      if (StartsWith(line, "id = \"")) block.id = line.substr(6, line.rfind('"') - 6);
      block.lines.push_back(line);
    }
    while (!block.lines.empty() && Trim(block.lines.back()).empty()) block.lines.pop_back();
    if (block.id.empty()) return MakeError(std::string(file) + ": an [[action]] without an id");
    blocks.push_back(std::move(block));
  }
  while (!preamble.empty() && Trim(preamble.back()).empty()) preamble.pop_back();
  return std::make_pair(std::move(preamble), std::move(blocks));
}

std::string FeatureNote(const std::string& feature) {
  if (feature == "openmp") return "the project uses OpenMP (its build files name it)";
  if (feature == "thp") return "transparent huge pages enabled (madvise or always)";
  return feature;
}

// Why the block cannot be written active, or "" when it can.
std::string Unmet(const Block& block, const StarterContext& ctx) {
  for (const std::vector<std::string>& n : block.needs) {
    if (n[0] == "lib" && ctx.libraries.count(n[1]) == 0) {
      return n[1] + " is not installed (apt-get install " + n[2] + ")";
    }
    if (n[0] == "cmd" && ctx.commands.count(n[1]) == 0) {
      return n[1] + " is not on PATH (apt-get install " + n[2] + ")";
    }
    if (n[0] == "feature" && ctx.features.count(n[1]) == 0) {
      if (n[1] == "openmp") return "the project does not use OpenMP (none in its build files)";
      if (n[1] == "thp") return "transparent huge pages are off on this machine (never)";
      return "needs " + n[1];
    }
  }
  return "";
}

// `line` with every @NAME@ / @lib:SONAME@ replaced; nullopt (with `why`) when one cannot be.
std::optional<std::string> Substitute(const std::string& line, const StarterContext& ctx,
                                      bool literal_string, std::string* why) {
  std::string out;
  size_t at = 0;
  while (true) {
    size_t open = line.find('@', at);
    size_t close = open == std::string::npos ? open : line.find('@', open + 1);
    if (close == std::string::npos) break;
    const std::string key = line.substr(open + 1, close - open - 1);
    std::string value;
    if (StartsWith(key, "lib:")) {
      auto it = ctx.libraries.find(key.substr(4));
      if (it == ctx.libraries.end()) {
        *why = "placeholder @" + key + "@ without a library";
        return std::nullopt;
      }
      value = it->second;
    } else {
      auto it = ctx.placeholders.find(key);
      if (it == ctx.placeholders.end()) {
        *why = "placeholder @" + key + "@ not filled";
        return std::nullopt;
      }
      value = it->second;
    }
    if (literal_string && value.find("'''") != std::string::npos) {
      *why = "@" + key + "@ holds ''' and cannot be quoted";
      return std::nullopt;
    }
    out += line.substr(at, open - at) + value;
    at = close + 1;
  }
  return out + line.substr(at);
}

// `conflicts = ["a", "b"]` keeping only active ids; "" when none is left.
std::string FilterConflicts(const std::string& line, const std::set<std::string>& active) {
  std::vector<std::string> kept;
  size_t at = line.find('[');
  while (at != std::string::npos) {
    size_t open = line.find('"', at);
    if (open == std::string::npos) break;
    size_t close = line.find('"', open + 1);
    if (close == std::string::npos) break;
    std::string id = line.substr(open + 1, close - open - 1);
    if (active.count(id) != 0) kept.push_back("\"" + id + "\"");
    at = close + 1;
  }
  return kept.empty() ? "" : "conflicts = [" + Join(kept, ", ") + "]";
}

// A directive as the campaign file shows it.
std::string ShownDirective(const std::string& line) {
  std::vector<std::string> w = Words(line.substr(2));
  if (w.size() == 4 && w[0] == "needs") {
    return "# needs: " + w[2] + " (Debian package " + w[3] + ")";
  }
  if (w.size() == 3 && w[0] == "needs") return "# needs: " + FeatureNote(w[2]);
  return "";
}

}  // namespace

std::string_view BuildSystemName(BuildSystem system) {
  for (const auto& [s, name] : kSystems) {
    if (s == system) return name;
  }
  return "";
}

std::optional<BuildSystem> ParseBuildSystem(std::string_view name) {
  for (const auto& [s, n] : kSystems) {
    if (n == name) return s;
  }
  return std::nullopt;
}

namespace {
std::vector<std::string> Needed(const std::string& kind) {
  std::set<std::string> out;
  for (const EmbeddedText& t : StarterCatalogueFiles()) {
    for (const std::string& line : Split(t.text, '\n')) {
      std::vector<std::string> w =
          StartsWith(line, "#@") ? Words(line.substr(2)) : std::vector<std::string>{};
      if (w.size() == 4 && w[0] == "needs" && w[1] == kind) out.insert(w[2]);
    }
  }
  return {out.begin(), out.end()};
}
}  // namespace

std::vector<std::string> StarterNeededLibraries() { return Needed("lib"); }
std::vector<std::string> StarterNeededCommands() { return Needed("cmd"); }

std::vector<std::string> StarterFilesFor(BuildSystem system, bool c_extensions) {
  switch (system) {
    case BuildSystem::kCMake:
    case BuildSystem::kMeson:
    case BuildSystem::kMake:
      return {"c-cxx.toml", "runtime.toml"};
    case BuildSystem::kCargo:
      return {"rust.toml", "runtime.toml"};
    case BuildSystem::kPython:
      if (c_extensions) return {"c-cxx.toml", "runtime.toml"};
      return {"runtime.toml"};
  }
  return {"runtime.toml"};
}

Result<StarterActions> RenderStarterActions(const std::vector<std::string>& files,
                                            const StarterContext& ctx) {
  const std::string system(BuildSystemName(ctx.system));
  struct Chosen {
    std::vector<std::string> preamble;
    std::vector<std::pair<Block, std::string>> blocks;  // block, why it is skipped ("" = active)
  };
  std::vector<Chosen> chosen;
  std::set<std::string> active;
  StarterActions out;
  for (const std::string& name : files) {
    const EmbeddedText* file = nullptr;
    for (const EmbeddedText& t : StarterCatalogueFiles()) {
      if (t.name == name) file = &t;
    }
    if (file == nullptr) return MakeError("no starter catalogue file '" + name + "'");
    ARBOR_TRY_ASSIGN(auto split, SplitBlocks(file->name, file->text));
    Chosen c;
    c.preamble = std::move(split.first);
    for (Block& b : split.second) {
      if (!b.systems.empty() &&
          std::find(b.systems.begin(), b.systems.end(), system) == b.systems.end()) {
        continue;
      }
      std::string why = Unmet(b, ctx);
      if (why.empty()) {
        active.insert(b.id);
        out.ids.push_back(b.id);
      } else {
        out.skipped.push_back(b.id + ": " + why);
      }
      c.blocks.emplace_back(std::move(b), why);
    }
    chosen.push_back(std::move(c));
  }

  std::vector<std::string> text;
  for (const Chosen& c : chosen) {
    if (c.blocks.empty()) continue;
    text.push_back("");
    for (const std::string& l : c.preamble) text.push_back(l);
    for (const auto& [block, why] : c.blocks) {
      text.push_back("");
      if (!why.empty()) text.push_back("# skipped: " + why);
      bool in_literal = false;  // inside a ''' string, where '#' is not a comment
      for (const std::string& line : block.lines) {
        if (StartsWith(line, "#@")) {
          std::string shown = ShownDirective(line);
          if (!shown.empty()) text.push_back(shown);
          continue;
        }
        std::string l = line;
        if (why.empty() && StartsWith(l, "#") && !in_literal) {
          text.push_back(l);  // a comment: copied as it is
          continue;
        }
        if (!why.empty()) {  // written commented out, placeholders left as they are
          text.push_back(StartsWith(l, "#") && !in_literal ? l : "# " + l);
        } else {
          if (StartsWith(Trim(l), "conflicts = [")) {
            l = FilterConflicts(l, active);
            if (l.empty()) continue;
          }
          std::string problem;
          std::optional<std::string> s = Substitute(l, ctx, in_literal, &problem);
          if (!s) return MakeError("starter action " + block.id + ": " + problem);
          text.push_back(*s);
        }
        size_t quotes = 0;
        for (size_t p = line.find("'''"); p != std::string::npos; p = line.find("'''", p + 3)) {
          ++quotes;
        }
        if (quotes % 2 == 1) in_literal = !in_literal;
      }
    }
  }
  out.text = Join(text, "\n") + "\n";
  return out;
}

}  // namespace arbor

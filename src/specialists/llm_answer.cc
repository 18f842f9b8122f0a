#include "specialists/llm_answer.h"

#include <set>
#include <utility>

#include "util/strings.h"

namespace arbor {
namespace {

struct Block {
  std::string info;  // the opening fence's info string, trimmed
  std::string body;  // its lines, each ending in '\n'
  int line = 0;      // 1-based line of the opening fence
};

// The number of backticks a line starts with.
size_t Backticks(std::string_view line) {
  size_t n = 0;
  while (n < line.size() && line[n] == '`') ++n;
  return n;
}

// The fenced blocks of `text`. A fence opens with 3 or more backticks at the start of a line
// and closes with a line of at least as many backticks and nothing else but spaces.
Result<std::vector<Block>> Blocks(std::string_view text) {
  std::vector<std::string> lines = Split(text, '\n');
  if (!lines.empty() && lines.back().empty()) lines.pop_back();
  std::vector<Block> out;
  size_t fence = 0;  // backticks of the open block; 0 outside a block
  for (size_t i = 0; i < lines.size(); ++i) {
    std::string_view line = lines[i];
    size_t ticks = Backticks(line);
    if (fence == 0) {
      if (ticks < 3 || line.find('`', ticks) != std::string_view::npos) continue;
      fence = ticks;
      out.push_back(Block{Trim(line.substr(ticks)), "", static_cast<int>(i + 1)});
    } else if (ticks >= fence && Trim(line.substr(ticks)).empty()) {
      fence = 0;
    } else {
      out.back().body.append(line).push_back('\n');
    }
  }
  if (fence != 0) {
    return MakeError("the ```" + out.back().info + " block opened at line " +
                     std::to_string(out.back().line) + " is not closed (was the answer cut off?)");
  }
  return out;
}

}  // namespace

Result<LlmAnswer> ParseLlmAnswer(std::string_view content) {
  ARBOR_TRY_ASSIGN(std::vector<Block> blocks, Blocks(content));
  LlmAnswer answer;
  std::set<std::string> paths;
  bool has_json = false;
  for (Block& b : blocks) {
    std::string kind = b.info.substr(0, b.info.find_first_of(" \t"));
    bool bare_diff =
        b.info.empty() && (StartsWith(b.body, "diff --git ") || StartsWith(b.body, "--- "));
    if (kind == "diff" || kind == "patch" || bare_diff) {
      answer.diff += b.body;
    } else if (StartsWith(b.info, "file:")) {
      std::string path = Trim(std::string_view(b.info).substr(5));
      while (StartsWith(path, "./")) path.erase(0, 2);
      if (path.empty()) {
        return MakeError("the ```file: block at line " + std::to_string(b.line) + " names no path");
      }
      if (!paths.insert(path).second) {
        return MakeError("the file \"" + path + "\" is given twice (line " +
                         std::to_string(b.line) + ")");
      }
      answer.files.push_back(FileBlock{std::move(path), std::move(b.body)});
    } else if (kind == "json") {
      answer.report_json = std::move(b.body);
      has_json = true;
    }
  }
  if (answer.diff.empty() && answer.files.empty() && !has_json) {
    return MakeError(std::string(kNoChangeMessage));
  }
  return answer;
}

std::string ExtractJsonArray(std::string_view content) {
  Result<std::vector<Block>> blocks = Blocks(content);
  if (blocks) {
    for (const Block& b : *blocks) {
      std::string body = Trim(b.body);
      if (StartsWith(body, "[")) return body;
    }
  }
  size_t open = content.find('[');
  size_t close = content.rfind(']');
  if (open != std::string_view::npos && close != std::string_view::npos && open < close) {
    return std::string(content.substr(open, close - open + 1));
  }
  return Trim(content);
}

}  // namespace arbor

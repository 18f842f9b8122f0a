// LlmAnswer: what Arbor takes from a chat model's answer (specialists/llm_specialist.h).
//
// An implement answer holds fenced blocks at the start of a line (``` or longer, closed by a
// fence at least as long, so a file that itself contains ``` can be given in a ```` block):
//   ```diff (or ```patch)  a unified diff against the original files; several are concatenated
//                          (an unlabelled block that starts like a diff counts as one)
//   ```file:<path>         the whole new content of <path> (relative to the worktree)
//   ```json                the report (specialists/agent_report.h); the last one wins
// Everything else (prose, other blocks) is ignored. A propose answer is a JSON array of
// actions, bare or in a fenced block. Pure functions: no I/O, thread-safe.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "util/result.h"

namespace arbor {

// The message of an answer that changes nothing: no diff, no file and (checked by the caller
// once the report is parsed) no env in its report.
inline constexpr std::string_view kNoChangeMessage =
    "the answer has no ```diff block, no ```file: block and no env in its report";

struct FileBlock {
  std::string path;     // as written after "file:", a leading "./" removed
  std::string content;  // the block's lines, each ending in '\n'
};

struct LlmAnswer {
  std::string diff;  // every diff block, in order, each ending in '\n' ("" when none)
  std::vector<FileBlock> files;
  std::string report_json;  // the last json block ("" when none)
};

// Extracts the blocks of an implement answer. Errors: a block left open (a cut-off answer), a
// file block without a path or given twice, and an answer with no diff, file or json block
// (kNoChangeMessage).
Result<LlmAnswer> ParseLlmAnswer(std::string_view content);

// The JSON text of a propose answer: the first fenced block whose content starts with '[',
// else the text from the first '[' to the last ']', else the whole answer trimmed (the caller's
// JSON parser then says what is wrong with it).
std::string ExtractJsonArray(std::string_view content);

}  // namespace arbor

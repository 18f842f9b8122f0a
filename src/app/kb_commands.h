// `arbor kb list|show|export|import|forget`: the knowledge base seen from the command line.
//
// Where the knowledge base is (KbPath): `--kb PATH` beats everything; then the campaign file's
// `[kb] path` (for campaigns: a project may pin its own knowledge base, and that choice is
// written down where the campaign is); then $ARBOR_KB; then $XDG_DATA_HOME/arbor/kb.db; then
// ~/.local/share/arbor/kb.db. The `arbor kb` verbs read no campaign file: they use `--kb`,
// else the environment, else the default.
//
// Each verb returns the text to print on stdout, or an Error whose code is one of
// include/arbor/exit_codes.h: kExitUsage for contradictory options, kExitState for a missing
// knowledge base or entry, kExitConfig for a malformed import file, kExitStore when the SQLite
// file cannot be opened or written. list/show/export never create or modify the file.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "store/kb_store.h"
#include "util/result.h"

namespace arbor {

// The resolved path for a campaign whose `[kb] path` is `configured` ("" when it has none).
// "" only when nothing at all says where (no ARBOR_KB, XDG_DATA_HOME or HOME).
std::string KbPath(const std::string& configured);

struct KbOptions {
  std::string kb;            // --kb PATH: beats everything
  bool json = false;         // list/show: JSON (one line per entry for list)
  KbFilter filter;           // list: which entries; forget: --campaign/--action
  std::vector<int64_t> ids;  // forget: these ids
  bool all = false;          // forget --all
  std::string out;           // export --out FILE ("": stdout)
};

Result<std::string> KbList(const KbOptions& options);
Result<std::string> KbShow(const KbOptions& options, int64_t id);
Result<std::string> KbExport(const KbOptions& options);
Result<std::string> KbImport(const KbOptions& options, const std::string& file);
Result<std::string> KbForget(const KbOptions& options);

// One line of `arbor kb list` (no newline): id, outcome, candidate, gain and interval,
// category, campaign, short hardware, and marks for superseded or conflicting entries.
std::string KbListLine(const KbEntry& e);

}  // namespace arbor

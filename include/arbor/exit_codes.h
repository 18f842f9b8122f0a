// Exit codes of the `arbor` command: a contract for scripts and CI jobs (docs/cli.md).
#pragma once

namespace arbor {

inline constexpr int kExitOk = 0;
inline constexpr int kExitInternal = 1;  // a bug, or a failure with no better class
inline constexpr int kExitUsage = 2;     // unknown verb/option, bad argument
inline constexpr int kExitConfig = 3;    // campaign file error, or a verb not built yet
inline constexpr int kExitState = 4;     // workspace/state: not a repo, dirty, no campaign
inline constexpr int kExitStore = 5;     // the SQLite store cannot be opened or written
inline constexpr int kExitBaseline = 6;  // the unmodified workspace fails to build/check/bench
inline constexpr int kExitNothingEvaluated = 7;  // finished without evaluating a single change
inline constexpr int kExitConfigChanged = 8;     // the campaign file changes what was measured
inline constexpr int kExitInterrupted = 130;

}  // namespace arbor

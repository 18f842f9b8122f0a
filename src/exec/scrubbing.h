// The file side of secret scrubbing (docs/secrets.md): one Scrubber per process, through which
// every file Arbor keeps goes.
//
// The composition root installs the campaign's Scrubber once (app/secrets.h SecretsLayer);
// from then on
//   * the runner scrubs every command's captured stdout and stderr, and the files and folders
//     a RunSpec names in `kept_paths` (a target step's $ARBOR_OUT, a coding agent's report), as
//     soon as the command has ended and before anyone reads them (runner.h);
//   * files Arbor writes itself (an agent's task, the HTML report) go through WriteKeptFile;
//   * short texts a step reports (its tail, a diagnosis) go through ScrubInstalled.
// A new writer is covered by default: a command's output is scrubbed unless its RunSpec says
// it is transient (read back and deleted by the caller, like git's). Without an installed
// Scrubber (no secret configured, unit tests) everything is left as written. The installed
// Scrubber is borrowed and must outlive its installation; it is immutable, so any thread may
// use it.
#pragma once

#include <string>
#include <string_view>

#include "util/result.h"
#include "util/secrets.h"

namespace arbor {

// Installs `scrubber` for the whole process (nullptr: none); returns the one it replaces.
const Scrubber* InstallScrubber(const Scrubber* scrubber);
// The installed Scrubber, or nullptr.
const Scrubber* InstalledScrubber();

// Installs a Scrubber for its lifetime, then puts back the one installed before.
class ScopedScrubber {
 public:
  explicit ScopedScrubber(const Scrubber* scrubber) : previous_(InstallScrubber(scrubber)) {}
  ~ScopedScrubber() { InstallScrubber(previous_); }
  ScopedScrubber(const ScopedScrubber&) = delete;
  ScopedScrubber& operator=(const ScopedScrubber&) = delete;

 private:
  const Scrubber* previous_;
};

// `text` with the installed Scrubber applied (unchanged when none is installed).
std::string ScrubInstalled(std::string text);

// ScrubFileInPlace reads files in pieces of this size (plus the overlap).
inline constexpr size_t kScrubChunkBytes = 1 << 20;

// Rewrites the file at `path` with every secret redacted, atomically (a temporary file in the
// same folder, fsynced, renamed over it, same permissions), and only when it holds a secret:
// a clean file is read but never written. Streams in chunks that overlap by the longest form,
// so files of any size take bounded memory and no occurrence across a chunk boundary is missed.
// A missing file is not an error (a command may not have written it).
Status ScrubFileInPlace(const std::string& path, const Scrubber& scrubber);

// Scrubs `path` with the installed Scrubber: a regular file, or every regular file under a
// folder (recursively; symbolic links are neither followed nor rewritten). A file that cannot
// be scrubbed (disk full, permissions) is deleted: its secret must not outlive the run.
// Returns how many files were deleted so. Nothing happens without an installed Scrubber or
// when `path` does not exist.
int ScrubKept(const std::string& path);

// Writes `text`, scrubbed with the installed Scrubber, to `path` atomically (a temporary file
// beside it, renamed over it): a reader never sees half of it.
Status WriteKeptFile(const std::string& path, std::string_view text);

}  // namespace arbor

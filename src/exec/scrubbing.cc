#include "exec/scrubbing.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

namespace arbor {
namespace {

std::atomic<const Scrubber*> g_installed{nullptr};

std::string Errno(const std::string& what) { return what + ": " + std::strerror(errno); }

Status WriteAll(int fd, std::string_view data, const std::string& path) {
  while (!data.empty()) {
    ssize_t n = ::write(fd, data.data(), data.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return MakeError(Errno("cannot write " + path));
    data.remove_prefix(static_cast<size_t>(n));
  }
  return {};
}

// Reads `in` in chunks of kScrubChunkBytes, appending each to `*buffer`; false at the end.
bool ReadChunk(std::ifstream& in, std::string* buffer) {
  size_t old = buffer->size();
  buffer->resize(old + kScrubChunkBytes);
  in.read(buffer->data() + old, static_cast<std::streamsize>(kScrubChunkBytes));
  buffer->resize(old + static_cast<size_t>(in.gcount()));
  return in.gcount() > 0;
}

// Whether the file holds a secret, reading it once with chunks overlapping by the longest form.
Result<bool> FileContainsSecret(const std::string& path, const Scrubber& scrubber) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return MakeError(Errno("cannot read " + path));
  size_t overlap = scrubber.max_pattern_length() - 1;
  std::string buffer;
  while (ReadChunk(in, &buffer)) {
    if (scrubber.Contains(buffer)) return true;
    if (buffer.size() > overlap) buffer.erase(0, buffer.size() - overlap);
  }
  if (in.bad()) return MakeError(Errno("cannot read " + path));
  return false;
}

// Copies `path` into the open file `fd` with every secret redacted. Of each buffer, only the
// part before the last (longest form - 1) bytes is final: an occurrence starting later may
// continue in the next chunk. A redaction that crosses that point holds it back too.
Status CopyScrubbed(const std::string& path, const Scrubber& scrubber, int fd,
                    const std::string& tmp) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return MakeError(Errno("cannot read " + path));
  size_t overlap = scrubber.max_pattern_length() - 1;
  std::string buffer;
  bool more = true;
  while (more) {
    more = ReadChunk(in, &buffer);
    std::vector<Scrubber::Span> spans = scrubber.Find(buffer);
    size_t cut = buffer.size();
    if (more) {
      cut = buffer.size() > overlap ? buffer.size() - overlap : 0;
      for (const Scrubber::Span& s : spans) {
        if (s.begin < cut && s.end > cut) cut = s.begin;
      }
    }
    std::string out;
    size_t at = 0;
    for (const Scrubber::Span& s : spans) {
      if (s.end > cut) break;
      out.append(buffer, at, s.begin - at);
      out += "[redacted:" + *s.name + "]";
      at = s.end;
    }
    out.append(buffer, at, cut - at);
    ARBOR_TRY(WriteAll(fd, out, tmp));
    buffer.erase(0, cut);
  }
  if (in.bad()) return MakeError(Errno("cannot read " + path));
  return {};
}

// Removes a file that could not be scrubbed; true when it is gone.
bool Discard(const std::string& path) {
  std::error_code ec;
  std::filesystem::remove(path, ec);
  return !ec;
}

}  // namespace

const Scrubber* InstallScrubber(const Scrubber* scrubber) {
  return g_installed.exchange(scrubber != nullptr && !scrubber->empty() ? scrubber : nullptr);
}

const Scrubber* InstalledScrubber() { return g_installed.load(); }

std::string ScrubInstalled(std::string text) {
  const Scrubber* scrubber = InstalledScrubber();
  return scrubber == nullptr || text.empty() ? text : scrubber->Scrub(text);
}

Status ScrubFileInPlace(const std::string& path, const Scrubber& scrubber) {
  if (scrubber.empty()) return {};
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return {};
    return MakeError(Errno("cannot stat " + path));
  }
  if (!S_ISREG(st.st_mode)) return {};
  ARBOR_TRY_ASSIGN(auto dirty, FileContainsSecret(path, scrubber));
  if (!dirty) return {};

  std::string tmp = path + ".scrub-XXXXXX";
  int fd = ::mkstemp(tmp.data());
  if (fd < 0) return MakeError(Errno("cannot create a temporary file next to " + path));
  Status written = CopyScrubbed(path, scrubber, fd, tmp);
  if (written.ok() && ::fchmod(fd, st.st_mode & 07777) != 0) {
    written = MakeError(Errno("cannot chmod " + tmp));
  }
  if (written.ok() && ::fsync(fd) != 0) written = MakeError(Errno("cannot fsync " + tmp));
  if (::close(fd) != 0 && written.ok()) written = MakeError(Errno("cannot close " + tmp));
  if (written.ok() && ::rename(tmp.c_str(), path.c_str()) != 0) {
    written = MakeError(Errno("cannot rename " + tmp + " to " + path));
  }
  if (!written.ok()) ::unlink(tmp.c_str());
  return written;
}

int ScrubKept(const std::string& path) {
  const Scrubber* scrubber = InstalledScrubber();
  if (scrubber == nullptr || path.empty()) return 0;
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status status = fs::symlink_status(path, ec);
  if (ec || fs::is_symlink(status)) return 0;
  std::vector<std::string> files;
  if (fs::is_regular_file(status)) {
    files.push_back(path);
  } else if (fs::is_directory(status)) {
    // A symbolic link is listed, never followed: what it points to is not Arbor's file.
    for (auto it = fs::recursive_directory_iterator(path, ec);
         !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
      if (it->is_regular_file(ec) && !it->is_symlink(ec)) files.push_back(it->path().string());
    }
  }
  int deleted = 0;
  for (const std::string& file : files) {
    if (!ScrubFileInPlace(file, *scrubber).ok() && Discard(file)) ++deleted;
  }
  return deleted;
}

Status WriteKeptFile(const std::string& path, std::string_view text) {
  const std::string scrubbed = ScrubInstalled(std::string(text));
  std::string tmp = path + ".tmp-XXXXXX";
  int fd = ::mkstemp(tmp.data());
  if (fd < 0) return MakeError(Errno("cannot create a temporary file next to " + path));
  Status written = WriteAll(fd, scrubbed, tmp);
  if (written.ok() && ::fchmod(fd, 0644) != 0) written = MakeError(Errno("cannot chmod " + tmp));
  if (::close(fd) != 0 && written.ok()) written = MakeError(Errno("cannot close " + tmp));
  if (written.ok() && ::rename(tmp.c_str(), path.c_str()) != 0) {
    written = MakeError(Errno("cannot write " + path));
  }
  if (!written.ok()) ::unlink(tmp.c_str());
  return written;
}

}  // namespace arbor

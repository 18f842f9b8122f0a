#include "app/secrets.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>

namespace arbor {
namespace {

void ScrubText(const Scrubber& scrubber, std::string* text) {
  if (!text->empty()) *text = scrubber.Scrub(*text);
}

using OrderedJson = nlohmann::ordered_json;

void ScrubJsonStrings(const Scrubber& scrubber, OrderedJson* j) {
  if (j->is_string()) {
    *j = scrubber.Scrub(j->get_ref<const std::string&>());
  } else if (j->is_object()) {
    OrderedJson scrubbed = OrderedJson::object();
    for (auto& [key, value] : j->items()) {
      ScrubJsonStrings(scrubber, &value);
      scrubbed[scrubber.Scrub(key)] = std::move(value);
    }
    *j = std::move(scrubbed);
  } else if (j->is_array()) {
    for (OrderedJson& element : *j) ScrubJsonStrings(scrubber, &element);
  }
}

// Scrubs JSON text and keeps it valid JSON (the store refuses event data that is not a JSON
// object). Scrubbing the text directly keeps its formatting, but a redaction may start or end
// inside an escape sequence or swallow a quote; then the decoded strings are scrubbed and the
// document re-serialised. If even that shows a form of a secret (its escapes spell one), the
// data is replaced whole: losing it is better than leaking or failing the write.
std::string ScrubJsonText(const Scrubber& scrubber, const std::string& text) {
  std::string direct = scrubber.Scrub(text);
  if (direct == text || OrderedJson::accept(direct) || !OrderedJson::accept(text)) return direct;
  try {
    OrderedJson j = OrderedJson::parse(text);
    ScrubJsonStrings(scrubber, &j);
    std::string dumped = j.dump(-1, ' ', false, OrderedJson::error_handler_t::replace);
    if (!scrubber.Contains(dumped)) return dumped;
  } catch (const OrderedJson::exception&) {
    // Fall through to the replacement below.
  }
  return R"({"redacted":"held a secret that could not be scrubbed as JSON"})";
}

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

}  // namespace

Scrubber ScrubberFromEnv(const std::vector<std::string>& variable_names) {
  Scrubber scrubber;
  for (const std::string& name : variable_names) {
    const char* value = std::getenv(name.c_str());
    if (value != nullptr && *value != '\0') scrubber.Add(name, value);
  }
  return scrubber;
}

void ScrubNode(const Scrubber& scrubber, Node* node) {
  ScrubText(scrubber, &node->diagnosis);
  ScrubText(scrubber, &node->summary);
  ScrubText(scrubber, &node->critic.evidence);
  ScrubText(scrubber, &node->critic.suggestion);
  for (KbRef& ref : node->score.kb) ScrubText(scrubber, &ref.summary);
  for (Constraint& c : node->critic.constraints) ScrubText(scrubber, &c.reason);
  for (std::string& f : node->agent.findings) ScrubText(scrubber, &f);
  for (std::string& q : node->agent.questions) ScrubText(scrubber, &q);
}

void ScrubEvent(const Scrubber& scrubber, Event* event) {
  ScrubText(scrubber, &event->message);
  if (!event->data.empty()) event->data = ScrubJsonText(scrubber, event->data);
}

void ScrubProfile(const Scrubber& scrubber, Profile* profile) {
  for (Component& c : profile->components) ScrubText(scrubber, &c.name);
  for (auto& [name, share] : profile->raw) ScrubText(scrubber, &name);
}

void ScrubKbEntry(const Scrubber& scrubber, KbEntry* entry) {
  ScrubText(scrubber, &entry->lesson);
  ScrubText(scrubber, &entry->conflict);
  ScrubText(scrubber, &entry->rca);
}

Status ScrubbingStore::Apply(const Mutation& m) {
  if (scrubber_->empty()) return StoreWrapper::Apply(m);
  Mutation scrubbed = m;
  for (Node& n : scrubbed.nodes) ScrubNode(*scrubber_, &n);
  for (Event& e : scrubbed.events) ScrubEvent(*scrubber_, &e);
  for (auto& [node, profile] : scrubbed.profiles) ScrubProfile(*scrubber_, &profile);
  if (scrubbed.meta) ScrubText(*scrubber_, &scrubbed.meta->stop_reason);
  // A proposed action's prose is a specialist's words; its apply spec is configuration that
  // later runs, and is left alone like a node's overlay.
  for (ActionSpec& a : scrubbed.actions) {
    ScrubText(*scrubber_, &a.describe);
    ScrubText(*scrubber_, &a.apply.goal);
  }
  for (Mutation::Prompt& p : scrubbed.prompts) ScrubText(*scrubber_, &p.text);
  return StoreWrapper::Apply(scrubbed);
}

Status ScrubbingKnowledgeBase::Record(const std::vector<KbEntry>& entries) {
  if (scrubber_->empty()) return inner_->Record(entries);
  std::vector<KbEntry> scrubbed = entries;
  for (KbEntry& e : scrubbed) ScrubKbEntry(*scrubber_, &e);
  return inner_->Record(scrubbed);
}

void ScrubbingEventSink::OnEvent(const Event& e) {
  Event scrubbed = e;
  ScrubEvent(*scrubber_, &scrubbed);
  inner_->OnEvent(scrubbed);
}

Status ScrubFileInPlace(const std::string& path, const Scrubber& scrubber) {
  if (scrubber.empty()) return {};
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    if (errno == ENOENT) return {};
    return MakeError(Errno("cannot stat " + path));
  }
  if (!S_ISREG(st.st_mode)) return {};
  auto dirty = FileContainsSecret(path, scrubber);
  if (!dirty.ok()) return dirty.error();
  if (!*dirty) return {};

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

}  // namespace arbor

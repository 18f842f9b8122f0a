// Wiring of util/secrets.h's Scrubber into everything a campaign writes (docs/secrets.md).
//
// The values of the LLM API-key variables and of the user's secret variables must never reach
// the store, the knowledge base, any file under the campaign's state folder, the report or
// the live event views. SecretsLayer below is the one place a run sets that up: files go
// through exec/scrubbing.h, the ports through the decorators here, which scrub text on its
// way in and forward everything else unchanged. Each decorator borrows its Scrubber and its
// inner port, which must outlive it.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/model/ports.h"
#include "exec/scrubbing.h"
#include "util/result.h"
#include "util/secrets.h"

namespace arbor {

// A Scrubber over the current values of `variable_names` (getenv); unset or empty variables,
// and values shorter than kMinSecretLength, are ignored.
Scrubber ScrubberFromEnv(const std::vector<std::string>& variable_names);

// Every free-text field of a node that may quote a command's output or a specialist's words.
// Identity and configuration (action id, value, category, commit, overlay) are left alone:
// they come from the campaign file and resume depends on them.
void ScrubNode(const Scrubber& scrubber, Node* node);
void ScrubEvent(const Scrubber& scrubber, Event* event);
void ScrubProfile(const Scrubber& scrubber, Profile* profile);
void ScrubKbEntry(const Scrubber& scrubber, KbEntry* entry);

// A Store that scrubs every mutation before the inner store sees it; loads are forwarded.
class ScrubbingStore : public StoreWrapper {
 public:
  ScrubbingStore(Store* inner, const Scrubber* scrubber)
      : StoreWrapper(inner), scrubber_(scrubber) {}
  Status Apply(const Mutation& m) override;

 private:
  const Scrubber* scrubber_;
};

// A KnowledgeBase that scrubs entries' text before recording them.
class ScrubbingKnowledgeBase : public KnowledgeBase {
 public:
  ScrubbingKnowledgeBase(KnowledgeBase* inner, const Scrubber* scrubber)
      : inner_(inner), scrubber_(scrubber) {}

  Result<int64_t> MaxId() override { return inner_->MaxId(); }
  Result<std::vector<KbEntry>> Load(const KbQuery& query) override { return inner_->Load(query); }
  Status Record(const std::vector<KbEntry>& entries) override;

 private:
  KnowledgeBase* inner_;
  const Scrubber* scrubber_;
};

// An EventSink (terminal line, --events JSON lines) that scrubs events before forwarding.
class ScrubbingEventSink : public EventSink {
 public:
  ScrubbingEventSink(EventSink* inner, const Scrubber* scrubber)
      : inner_(inner), scrubber_(scrubber) {}
  void OnEvent(const Event& e) override;
  void OnProgress(const Progress& p) override { inner_->OnProgress(p); }

 private:
  EventSink* inner_;
  const Scrubber* scrubber_;
};

// A Workspace whose snapshot commit messages are scrubbed: a message carries the specialist's
// summary (an LLM's words), and a commit in git history outlives the campaign.
class ScrubbingWorkspace : public Workspace {
 public:
  ScrubbingWorkspace(Workspace* inner, const Scrubber* scrubber)
      : inner_(inner), scrubber_(scrubber) {}

  Result<std::string> Open() override { return inner_->Open(); }
  Result<std::string> Prepare(NodeId node, const std::string& commit) override {
    return inner_->Prepare(node, commit);
  }
  Result<std::string> Snapshot(NodeId node, const std::string& message,
                               const EnvOverlay& overlay) override {
    return inner_->Snapshot(node, scrubber_->Scrub(message), overlay);
  }
  Status Promote(const std::string& commit) override { return inner_->Promote(commit); }
  Status Release(NodeId node) override { return inner_->Release(node); }
  Status ReleaseAll() override { return inner_->ReleaseAll(); }
  std::optional<double> FreeDiskMb() override { return inner_->FreeDiskMb(); }

 private:
  Workspace* inner_;
  const Scrubber* scrubber_;
};

// The one scrubbing layer of a process that runs commands (`arbor run`, `arbor try`), built
// once from the campaign's secret variables: it installs its Scrubber for every file Arbor
// keeps (exec/scrubbing.h: the runner's captured output and kept paths, WriteKeptFile,
// ScrubInstalled) and wraps each port that writes text elsewhere (the store, the knowledge
// base, the live event views, commit messages). With no secret set it installs nothing and
// Wrap returns its argument. Wrapped ports must outlive nothing but this layer's use.
class SecretsLayer {
 public:
  explicit SecretsLayer(const std::vector<std::string>& variable_names);
  SecretsLayer(const SecretsLayer&) = delete;
  SecretsLayer& operator=(const SecretsLayer&) = delete;

  const Scrubber& scrubber() const { return scrubber_; }
  bool empty() const { return scrubber_.empty(); }

  Store* Wrap(Store* inner);
  KnowledgeBase* Wrap(KnowledgeBase* inner);
  EventSink* Wrap(EventSink* inner);
  Workspace* Wrap(Workspace* inner);

 private:
  Scrubber scrubber_;
  ScopedScrubber installed_;
  std::vector<std::unique_ptr<Store>> stores_;
  std::vector<std::unique_ptr<KnowledgeBase>> kbs_;
  std::vector<std::unique_ptr<EventSink>> sinks_;
  std::vector<std::unique_ptr<Workspace>> workspaces_;
};

}  // namespace arbor

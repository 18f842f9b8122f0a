#include "app/secrets.h"

#include <cstdlib>
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

SecretsLayer::SecretsLayer(const std::vector<std::string>& variable_names)
    : scrubber_(ScrubberFromEnv(variable_names)), installed_(&scrubber_) {}

Store* SecretsLayer::Wrap(Store* inner) {
  if (empty() || inner == nullptr) return inner;
  return stores_.emplace_back(std::make_unique<ScrubbingStore>(inner, &scrubber_)).get();
}

KnowledgeBase* SecretsLayer::Wrap(KnowledgeBase* inner) {
  if (empty() || inner == nullptr) return inner;
  return kbs_.emplace_back(std::make_unique<ScrubbingKnowledgeBase>(inner, &scrubber_)).get();
}

EventSink* SecretsLayer::Wrap(EventSink* inner) {
  if (empty() || inner == nullptr) return inner;
  return sinks_.emplace_back(std::make_unique<ScrubbingEventSink>(inner, &scrubber_)).get();
}

Workspace* SecretsLayer::Wrap(Workspace* inner) {
  if (empty() || inner == nullptr) return inner;
  return workspaces_.emplace_back(std::make_unique<ScrubbingWorkspace>(inner, &scrubber_)).get();
}

}  // namespace arbor

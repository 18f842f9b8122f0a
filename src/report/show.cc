// ShowText and ShowJson (declared in report/views.h).
#include <algorithm>
#include <array>
#include <cstdio>
#include <string>
#include <tuple>
#include <vector>

#include "report/format.h"
#include "report/views.h"
#include "util/duration.h"
#include "util/strings.h"

namespace arbor {
namespace {

std::vector<Sample> SortedSamples(std::vector<Sample> samples) {
  std::stable_sort(samples.begin(), samples.end(), [](const Sample& a, const Sample& b) {
    return std::tie(a.arm, a.rep) < std::tie(b.arm, b.rep);
  });
  return samples;
}

std::vector<Component> SortedComponents(std::vector<Component> components) {
  std::stable_sort(components.begin(), components.end(),
                   [](const Component& a, const Component& b) { return a.share > b.share; });
  return components;
}

std::vector<Event> SortedEvents(std::vector<Event> events) {
  std::stable_sort(events.begin(), events.end(), [](const Event& a, const Event& b) {
    return std::tie(a.t, a.id) < std::tie(b.t, b.id);
  });
  return events;
}

std::string Percent(double share) {
  std::array<char, 32> buf{};
  std::snprintf(buf.data(), buf.size(), "%5.1f%%", share * 100);
  return buf.data();
}

// "  label     value\n" with the labels aligned.
void Field(std::string& out, std::string_view label, const std::string& value) {
  std::string line = "  " + std::string(label);
  line.resize(std::max<size_t>(line.size() + 1, 12), ' ');
  out += line + value + "\n";
}

std::string OverlayText(const EnvOverlay& overlay) {
  std::vector<std::string> parts;
  for (const auto& [key, value] : overlay) parts.push_back(key + "=" + value);
  return Join(parts, " ");
}

void AppendScore(const Node& node, std::string& out) {
  if (!report::HasScore(node)) return;
  out += "  score     h = " + FormatDouble(node.score.h, 4) + "\n";
  for (const auto& term : report::kScoreTerms) {
    if (std::string_view(term.name) == "h") continue;
    std::string line = "              " + std::string(term.name);
    line.resize(23, ' ');
    std::string value = FormatDouble(node.score.*term.member, 4);
    value.resize(std::max<size_t>(value.size() + 2, 10), ' ');
    out += line + value + term.meaning + "\n";
  }
  if (node.score.kb.empty()) {
    out += "  knowledge base: no entry matched; declared priors (speedup ×" +
           FormatDouble(node.score.speedup, 4) + ")\n";
    return;
  }
  out += "  knowledge base: speedup prior ×" + FormatDouble(node.score.speedup, 4) +
         "; entries that shaped this score (weight, what):\n";
  for (const KbRef& r : node.score.kb) {
    out += "    #" + std::to_string(r.id) + "  w " + FormatDouble(r.weight, 3) + "  " + r.summary +
           "\n";
  }
}

// What the specialist reported, when one implemented the node.
void AppendAgent(const AgentNote& a, std::string& out) {
  if (a.empty()) return;
  std::string who(SpecialistBackendName(a.backend));
  if (!a.domain.empty()) who += "/" + a.domain;
  if (a.confidence > 0) who += "  confidence " + FormatDouble(a.confidence, 3);
  if (a.rounds > 0) who += "  rounds " + std::to_string(a.rounds);
  Field(out, "agent", who);
  if (a.prompt_tokens > 0 || a.completion_tokens > 0 || a.cost > 0) {
    Field(out, "llm",
          std::to_string(a.prompt_tokens) + " + " + std::to_string(a.completion_tokens) +
              " tokens, cost " + FormatDouble(a.cost, 4));
  }
  for (const std::string& f : a.findings) Field(out, "finding", f);
  for (const std::string& q : a.questions) Field(out, "question", q);
  if (!a.proposed.empty()) Field(out, "proposed", Join(a.proposed, ", "));
}

void AppendSamples(const std::vector<Sample>& samples, std::string& out) {
  out += "samples (" + std::to_string(samples.size()) + ")\n";
  for (const Sample& s : SortedSamples(samples)) {
    out += "  " + s.arm + "  rep " + std::to_string(s.rep) + "  " + FormatDouble(s.value, 6);
    for (const auto& [key, value] : s.extra) out += "  " + key + "=" + FormatDouble(value, 6);
    out += "\n";
  }
}

void AppendProfile(const std::optional<Profile>& profile, std::string& out) {
  if (!profile) return;
  out += "profile (total " + FormatDuration(profile->total_s) + ")\n";
  for (const Component& c : SortedComponents(profile->components)) {
    out += "  " + Percent(c.share) + "  " + c.name;
    if (!c.layer.empty()) out += "  [" + c.layer + "]";
    out += "\n";
  }
  if (profile->raw.empty()) return;
  out += "  top raw names (" + std::to_string(profile->raw.size()) + ")\n";
  for (const auto& [name, share] : profile->raw) {
    out += "    " + Percent(share) + "  " + name + "\n";
  }
}

void AppendEvents(const std::vector<Event>& events, std::string& out) {
  out += "events (" + std::to_string(events.size()) + ")\n";
  for (const Event& e : SortedEvents(events)) {
    std::string time = FormatDuration(e.t);
    time.resize(std::max<size_t>(time.size() + 2, 9), ' ');
    out += "  " + time + e.kind + "  " + e.message + "\n";
  }
}

}  // namespace

std::string ShowText(const Node& node, const std::vector<Sample>& samples,
                     const std::optional<Profile>& profile, const std::vector<Event>& events,
                     const FailedRun* failed) {
  std::string out = "#" + std::to_string(node.id) + " " + node.CandidateKey() + "  " +
                    std::string(OutcomeName(node.outcome)) + "\n";
  if (node.parent != kNoNode) Field(out, "parent", "#" + std::to_string(node.parent));
  Field(out, "action",
        node.value.empty() ? node.action_id : node.action_id + "  value " + node.value);
  std::string where = report::LayerCategory(node);
  if (!where.empty()) Field(out, "layer", where);
  Field(out, "step", std::string(StepName(node.step)) + "  (seq " + std::to_string(node.seq) + ")");
  if (!node.commit.empty()) Field(out, "commit", node.commit);
  if (!node.overlay.empty()) Field(out, "overlay", OverlayText(node.overlay));
  std::string metric = report::FormatMetric(node.metric);
  if (node.gain) metric += "  gain " + report::FormatPercent(*node.gain);
  Field(out, "metric", metric);
  if (node.cost_s > 0) Field(out, "cost", FormatDuration(node.cost_s));
  AppendScore(node, out);
  if (!node.diagnosis.empty()) Field(out, "diagnosis", node.diagnosis);
  const CriticNote& c = node.critic;
  if (c.rca != RcaClass::kNone) Field(out, "root cause", std::string(RcaClassName(c.rca)));
  if (!c.evidence.empty()) Field(out, "evidence", c.evidence);
  if (!c.suggestion.empty()) Field(out, "suggestion", c.suggestion);
  if (c.ci_low && c.ci_high) {
    Field(out, "speedup",
          "95% CI ×" + FormatDouble(*c.ci_low, 4) + "–×" + FormatDouble(*c.ci_high, 4) +
              (c.confirmed ? " (confirmed)" : ""));
  }
  if (c.requeued_from != kNoNode)
    Field(out, "requeued", "from #" + std::to_string(c.requeued_from));
  if (!c.opened.empty()) {
    Field(
        out, HasFlag(node, kBranchFlag) ? "branch" : "opened",
        (HasFlag(node, kBranchFlag) ? "of #" + std::to_string(node.parent) + ": " : "") + c.opened);
  }
  if (!c.flags.empty()) Field(out, "flags", Join(c.flags, ", "));
  for (const Constraint& k : c.constraints) Field(out, "constraint", DescribeConstraint(k));
  if (!node.summary.empty()) Field(out, "summary", node.summary);
  for (const std::string& line : PlacesByHost(JobPlaces(SortedEvents(events)))) {
    Field(out, "ran on", line);
  }
  AppendAgent(node.agent, out);
  if (failed != nullptr) out += FailedRunText(*failed);
  AppendSamples(samples, out);
  AppendProfile(profile, out);
  AppendEvents(events, out);
  return out;
}

nlohmann::json ShowJson(const Node& node, const std::vector<Sample>& samples,
                        const std::optional<Profile>& profile, const std::vector<Event>& events,
                        const FailedRun* failed) {
  nlohmann::json sample_list = nlohmann::json::array();
  for (const Sample& s : SortedSamples(samples)) {
    sample_list.push_back({{"arm", s.arm}, {"rep", s.rep}, {"value", s.value}, {"extra", s.extra}});
  }
  nlohmann::json profile_json = nullptr;
  if (profile) {
    nlohmann::json components = nlohmann::json::array();
    for (const Component& c : SortedComponents(profile->components)) {
      components.push_back(
          {{"name", c.name}, {"layer", c.layer}, {"share", c.share}, {"percent", c.share * 100}});
    }
    profile_json = {{"total_s", profile->total_s}, {"components", std::move(components)}};
    if (!profile->raw.empty()) {
      nlohmann::json raw = nlohmann::json::array();
      for (const auto& [name, share] : profile->raw) {
        raw.push_back({{"name", name}, {"share", share}, {"percent", share * 100}});
      }
      profile_json["raw"] = std::move(raw);
    }
  }
  nlohmann::json event_list = nlohmann::json::array();
  for (const Event& e : SortedEvents(events)) {
    // Event data is JSON text written by the engine; embed it as JSON when it parses.
    nlohmann::json data = nullptr;
    if (!e.data.empty()) {
      data = nlohmann::json::parse(e.data, nullptr, /*allow_exceptions=*/false);
      if (data.is_discarded()) data = e.data;
    }
    event_list.push_back(
        {{"id", e.id}, {"t", e.t}, {"kind", e.kind}, {"message", e.message}, {"data", data}});
  }
  nlohmann::json ran_on = nlohmann::json::array();
  for (const JobPlace& p : JobPlaces(SortedEvents(events))) {
    ran_on.push_back(
        {{"label", p.label}, {"executor", p.executor}, {"job", p.job}, {"host", p.host}});
  }
  nlohmann::json out = {
      {"id", node.id},
      {"parent", node.parent == kNoNode ? nlohmann::json(nullptr) : nlohmann::json(node.parent)},
      {"action", node.action_id},
      {"values", report::OptionalString(node.value)},
      {"candidate", node.CandidateKey()},
      {"category", node.category},
      {"layer", node.layer},
      {"outcome", OutcomeName(node.outcome)},
      {"step", StepName(node.step)},
      {"seq", node.seq},
      {"commit", node.commit},
      {"overlay", node.overlay},
      {"score", report::HasScore(node) ? report::ScoreJson(node.score) : nlohmann::json(nullptr)},
      {"metric", report::OptionalNumber(node.metric)},
      {"gain", report::OptionalNumber(node.gain)},
      {"diagnosis", node.diagnosis},
      {"critic", report::CriticJson(node.critic)},
      {"constraints", report::ConstraintsJson(node.critic.constraints)},
      {"summary", node.summary},
      {"created_s", node.created_s},
      {"finished_s", node.finished_s},
      {"cost_s", node.cost_s},
      {"samples", std::move(sample_list)},
      {"profile", std::move(profile_json)},
      {"events", std::move(event_list)},
      {"ran_on", std::move(ran_on)},
      {"failed_run", failed != nullptr ? FailedRunJson(*failed) : nlohmann::json(nullptr)},
  };
  if (!node.agent.empty()) out["agent"] = report::AgentJson(node.agent);
  return out;
}

}  // namespace arbor

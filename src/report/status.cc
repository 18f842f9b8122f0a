// StatusJson and StatusText (declared in report/views.h).
#include <array>
#include <cstdint>
#include <string>
#include <utility>

#include "core/search/moves.h"
#include "report/format.h"
#include "report/panels.h"
#include "report/tree_index.h"
#include "report/views.h"
#include "util/duration.h"
#include "util/strings.h"

namespace arbor {
namespace {

using report::TreeIndex;

struct Counts {
  int64_t total = 0;
  int64_t kept = 0;
  int64_t reverted = 0;
  int64_t crashed = 0;
  int64_t pruned = 0;
  int64_t skipped = 0;
  int64_t running = 0;
  int64_t pending = 0;
};

Counts CountNodes(const std::vector<Node>& nodes) {
  Counts c;
  for (const Node& n : nodes) {
    ++c.total;
    switch (n.outcome) {
      case Outcome::kKept:
        c.kept += n.id != kRootId ? 1 : 0;
        break;
      case Outcome::kReverted:
        ++c.reverted;
        break;
      case Outcome::kCrashed:
        ++c.crashed;
        break;
      case Outcome::kPruned:
        ++c.pruned;
        break;
      case Outcome::kSkipped:
        ++c.skipped;
        break;
      case Outcome::kRunning:
        ++c.running;
        break;
      case Outcome::kPending:
        ++c.pending;
        break;
      case Outcome::kBaseline:
        break;
    }
  }
  return c;
}

// The baseline and the incumbent, as both status views need them.
struct Summary {
  Counts counts;
  const Node* root = nullptr;
  const Node* best = nullptr;
  std::optional<double> speedup;
  std::vector<const Node*> path;  // root .. best
};

Summary Summarize(const CampaignView& view) {
  Summary s;
  s.counts = CountNodes(view.nodes);
  TreeIndex index(view.nodes);
  for (size_t pos : index.IncumbentPath()) s.path.push_back(&index.at(pos));
  if (s.path.empty()) return s;
  s.root = s.path.front();
  s.best = s.path.back();
  s.speedup = report::Speedup(view.goal, s.root->metric, s.best->metric);
  return s;
}

std::string JobsText(const CampaignView& view) {
  if (!view.jobs) return "";
  if (!view.jobs_error.empty()) return "jobs      unknown: " + view.jobs_error + "\n";
  if (view.jobs->empty()) return "jobs      none queued or running\n";
  std::string out = "jobs      " + std::to_string(view.jobs->size()) + " queued or running\n";
  for (const ExecutorJob& j : *view.jobs) {
    out += "  " + j.id + "  " + j.state + "  " + (j.comment.empty() ? "-" : j.comment) + "  " +
           j.elapsed + "  " + (j.nodes.empty() ? "-" : j.nodes) + "  " +
           (j.partition.empty() ? "-" : j.partition) + "\n";
  }
  return out;
}

// How many nodes each move (moves.h) re-queued, every move listed.
std::vector<std::pair<std::string, int64_t>> MoveCounts(const std::vector<Node>& nodes) {
  std::vector<std::pair<std::string, int64_t>> out;
  for (Move m : kAllMoves) out.emplace_back(std::string(MoveName(m)), 0);
  for (const Node& n : nodes) {
    if (auto m = MoveOf(n)) ++out[static_cast<size_t>(*m)].second;
  }
  return out;
}

std::string MovesText(const CampaignView& view) {
  std::vector<std::string> parts;
  for (const auto& [name, count] : MoveCounts(view.nodes)) {
    if (count > 0) parts.push_back(std::to_string(count) + " " + name);
  }
  return parts.empty() ? "" : "moves     re-queued " + Join(parts, ", ") + "\n";
}

std::string NoiseText(const CampaignView& view) {
  if (view.meta.repetitions <= 0) return "";
  return "noise     robust CV " + FormatDouble(view.meta.noise_cv * 100, 3) + "%, " +
         std::to_string(view.meta.repetitions) + " repetitions per arm, smallest detectable " +
         "effect " + FormatDouble(view.meta.noise_mde * 100, 3) + "%\n";
}

}  // namespace

nlohmann::json StatusJson(const CampaignView& view) {
  Summary s = Summarize(view);
  const Counts& c = s.counts;
  nlohmann::json best = {{"node", nullptr},
                         {"value", nullptr},
                         {"speedup", nullptr},
                         {"ci_low", nullptr},
                         {"ci_high", nullptr}};
  if (s.best != nullptr) {
    best["node"] = s.best->id;
    best["value"] = report::OptionalNumber(s.best->metric);
    best["speedup"] = report::OptionalNumber(s.speedup);
    // The interval comes from the final confirmation (best vs baseline, interleaved), and
    // only while that node is still the best.
    if (view.meta.final_node == s.best->id && view.meta.final_node != kRootId) {
      best["confirmed_speedup"] = view.meta.final_speedup;
      best["ci_low"] = view.meta.final_ci_low;
      best["ci_high"] = view.meta.final_ci_high;
    }
  }
  nlohmann::json out = {
      {"campaign", view.meta.name},
      {"state", std::string(CampaignStateName(view.meta.state))},
      {"stop_reason", report::OptionalString(std::string(StopReasonName(view.meta.stop_reason)))},
      {"nothing_evaluated", report::OptionalString(NothingEvaluatedHint(view))},
      {"nodes",
       {{"total", c.total},
        {"kept", c.kept},
        {"reverted", c.reverted},
        {"crashed", c.crashed},
        {"pruned", c.pruned},
        {"skipped", c.skipped},
        {"running", c.running},
        {"pending", c.pending}}},
      {"baseline",
       {{"metric", view.metric_name},
        {"value", report::OptionalNumber(s.root != nullptr ? s.root->metric : std::nullopt)}}},
      {"best", best},
      {"elapsed_s", view.meta.elapsed_s},
      {"budget", {{"max_nodes", view.max_nodes}, {"max_time_s", view.max_time_s}}},
      {"anomalies", AnomaliesJson(view.nodes)},
      {"llm",
       {{"prompt_tokens", view.meta.llm_prompt_tokens},
        {"completion_tokens", view.meta.llm_completion_tokens},
        {"cost", view.meta.llm_cost}}},
  };
  nlohmann::json moves = nlohmann::json::object();
  for (const auto& [name, count] : MoveCounts(view.nodes)) moves[name] = count;
  out["moves"] = moves;
  if (view.meta.repetitions > 0) {
    out["noise"] = {{"cv", view.meta.noise_cv},
                    {"mde", view.meta.noise_mde},
                    {"repetitions", view.meta.repetitions}};
  }
  if (view.jobs) {
    nlohmann::json jobs = nlohmann::json::array();
    for (const ExecutorJob& j : *view.jobs) {
      jobs.push_back({{"id", j.id},
                      {"state", j.state},
                      {"comment", j.comment},
                      {"elapsed", j.elapsed},
                      {"nodes", j.nodes},
                      {"partition", j.partition}});
    }
    out["jobs"] = view.jobs_error.empty() ? jobs : nlohmann::json(nullptr);
    if (!view.jobs_error.empty()) out["jobs_error"] = view.jobs_error;
  }
  return out;
}

std::string NothingEvaluatedHint(const CampaignView& view) {
  if (view.meta.state != CampaignState::kFinished) return "";
  const Counts c = CountNodes(view.nodes);
  if (c.kept + c.reverted + c.crashed > 0) return "";
  const StopReason why = view.meta.stop_reason;
  std::string next;
  switch (why) {
    case StopReason::kTarget:
      next = "the baseline already meets metric.target; raise the target or remove it";
      break;
    case StopReason::kMaxTime:
      next =
          "the time budget ran out before a change was measured; raise [search] max_time "
          "(or arbor run --max-time)";
      break;
    case StopReason::kMaxNodes:
      next = "[search] max_nodes leaves no evaluation; raise it (or arbor run --max-nodes)";
      break;
    case StopReason::kExhausted:
      next = "no candidate could run (" + std::to_string(c.pruned) + " pruned, " +
             std::to_string(c.skipped) +
             " skipped: `arbor tree` shows why); add actions or fix what pruned or skipped them";
      break;
    default:
      next = "see `arbor tree` and `arbor show 1`";
      break;
  }
  return "nothing was evaluated (" +
         (why == StopReason::kNone ? std::string("no stop reason")
                                   : std::string(StopReasonName(why))) +
         "): " + next;
}

std::string StatusText(const CampaignView& view) {
  Summary s = Summarize(view);
  const Counts& c = s.counts;
  std::string out = view.meta.name + ": " + std::string(CampaignStateName(view.meta.state));
  if (view.meta.stop_reason != StopReason::kNone) {
    out += " (" + std::string(StopReasonName(view.meta.stop_reason)) + ")";
  }
  out += "\n";
  if (std::string hint = NothingEvaluatedHint(view); !hint.empty())
    out += "why       " + hint + "\n";

  out += "nodes     " + std::to_string(c.total) + " total, " + std::to_string(c.kept) + " kept, " +
         std::to_string(c.reverted) + " reverted, " + std::to_string(c.crashed) + " crashed";
  const std::array<std::pair<int64_t, const char*>, 4> optional_counts = {{{c.pruned, "pruned"},
                                                                           {c.skipped, "skipped"},
                                                                           {c.running, "running"},
                                                                           {c.pending, "pending"}}};
  for (const auto& [count, word] : optional_counts) {
    if (count > 0) out += ", " + std::to_string(count) + " " + word;
  }
  if (view.max_nodes > 0) {
    out += "  (" + std::to_string(c.kept + c.reverted + c.crashed) + " of " +
           std::to_string(view.max_nodes) + " evaluated)";
  }
  out += "\n";

  std::string metric = view.metric_name.empty() ? "metric" : view.metric_name;
  out += "metric    " + metric + " (" + (view.goal == Goal::kMax ? "max" : "min");
  if (view.target) out += ", target " + FormatDouble(*view.target, 6);
  out += ")  ";
  out += report::FormatMetric(s.root != nullptr ? s.root->metric : std::nullopt);
  if (s.best != nullptr && s.best != s.root) {
    out += " → " + report::FormatMetric(s.best->metric) + " at #" + std::to_string(s.best->id);
  }
  if (s.speedup) out += "  " + report::FormatSpeedup(*s.speedup);
  out += "\n";
  if (s.best != nullptr && view.meta.final_node == s.best->id && s.best != s.root) {
    out += "confirmed ×" + FormatDouble(view.meta.final_speedup, 4) + " (95% CI ×" +
           FormatDouble(view.meta.final_ci_low, 4) + "–×" +
           FormatDouble(view.meta.final_ci_high, 4) +
           "), best vs baseline measured interleaved at the end\n";
  }

  if (view.meta.llm_prompt_tokens > 0 || view.meta.llm_completion_tokens > 0) {
    out += "llm       " + std::to_string(view.meta.llm_prompt_tokens) + " + " +
           std::to_string(view.meta.llm_completion_tokens) + " tokens, cost " +
           FormatDouble(view.meta.llm_cost, 4) + "\n";
  }

  out += "elapsed   " + FormatDuration(view.meta.elapsed_s);
  if (view.max_time_s > 0) out += " of " + FormatDuration(view.max_time_s);
  out += "\n";

  std::vector<std::string> keys;
  for (const Node* n : s.path) keys.push_back(n == s.root ? "baseline" : n->CandidateKey());
  out += "path      " + (keys.empty() ? std::string("-") : Join(keys, " → ")) + "\n";
  nlohmann::json anomalies = AnomaliesJson(view.nodes);
  if (!anomalies.empty()) {
    out += "anomalies " + std::to_string(anomalies.size()) + " (gains no benchmark explains):\n";
    for (const auto& a : anomalies) {
      out += "  #" + std::to_string(a["node"].get<int64_t>()) + " " +
             a["action"].get<std::string>() + " " + a["outcome"].get<std::string>() + ": " +
             report::Shorten(a["diagnosis"].get<std::string>(), 110) + "\n";
    }
  }
  return out + NoiseText(view) + MovesText(view) + JobsText(view);
}

}  // namespace arbor

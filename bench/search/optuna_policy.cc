#include "bench/search/optuna_policy.h"

#include <algorithm>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <utility>

#include "bench/search/line_process.h"

#ifndef ARBOR_OPTUNA_BRIDGE
#error "ARBOR_OPTUNA_BRIDGE (the path of bench/search/optuna_bridge.py) must be defined"
#endif

namespace arbor::search {
namespace {

using nlohmann::json;

// How long the bridge may take to exit after its last answer, or to print its error.
constexpr double kExitTimeoutS = 5;

std::string Clip(const std::string& s) { return s.size() <= 200 ? s : s.substr(0, 200) + "…"; }

// numpy's RandomState (behind TPESampler's seed) takes 32 bits: the 64-bit seed is folded.
uint64_t BridgeSeed(uint64_t seed) { return (seed ^ (seed >> 32)) & 0xffffffffULL; }

// The free measurement of the baseline: the median of `repetitions` runs of {}. A baseline
// that always crashes measures 0, so anything measured beats it.
double MeasureBaseline(Evaluator& ev, int repetitions) {
  std::vector<double> runs;
  for (int i = 0; i < std::max(1, repetitions); ++i) {
    if (std::optional<double> r = ev.Run({})) runs.push_back(*r);
  }
  if (runs.empty()) return 0;
  std::sort(runs.begin(), runs.end());
  size_t n = runs.size();
  return n % 2 == 1 ? runs[n / 2] : (runs[n / 2 - 1] + runs[n / 2]) / 2;
}

// The search space as the bridge sees it: each action, in file order, is one categorical
// parameter with "off" before its choices.
class Space {
 public:
  explicit Space(const Landscape& l) : choices_(l.Choices()) {
    for (size_t i = 0; i < l.actions.size(); ++i) index_[l.actions[i].id] = i;
    ids_.reserve(l.actions.size());
    for (const LandscapeAction& a : l.actions) ids_.push_back(a.id);
  }

  json Header(uint64_t seed, int trials) const {
    json space = json::array();
    for (size_t i = 0; i < ids_.size(); ++i) {
      json choices = json::array({"off"});
      for (const std::string& c : choices_[i]) choices.push_back(c);
      space.push_back({{"id", ids_[i]}, {"choices", std::move(choices)}});
    }
    return {{"seed", BridgeSeed(seed)}, {"trials", trials}, {"space", std::move(space)}};
  }

  // The configuration of one bridge line; an Error for anything but a known choice per action.
  Result<Config> Parse(const std::string& line) const {
    json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded() || !j.is_object() || j.size() != 1 || !j.contains("config") ||
        !j["config"].is_object()) {
      return MakeError("expected {\"config\": {...}} from the bridge, got: " + Clip(line));
    }
    Config c;
    for (const auto& [id, value] : j["config"].items()) {
      auto it = index_.find(id);
      if (it == index_.end()) return MakeError("the bridge proposed an unknown action: " + id);
      const std::vector<std::string>& valid = choices_[it->second];
      if (!value.is_string() ||
          std::find(valid.begin(), valid.end(), value.get<std::string>()) == valid.end()) {
        return MakeError("the bridge proposed an invalid value for " + id + ": " + value.dump());
      }
      c[id] = value.get<std::string>();
    }
    return c;
  }

 private:
  std::vector<std::vector<std::string>> choices_;
  std::vector<std::string> ids_;
  std::map<std::string, size_t> index_;
};

std::string Answer(const Evaluation& e) {
  if (e.crashed) return json{{"value", nullptr}, {"failed", "crash"}}.dump();
  if (e.accuracy_failed) return json{{"value", nullptr}, {"failed", "accuracy"}}.dump();
  return json{{"value", *e.value}}.dump();
}

// The ask/tell conversation: `budget` proposals, each repaired, evaluated and answered.
Status Converse(LineProcess& bridge, const Landscape& l, uint64_t seed, int budget,
                double line_timeout_s, Evaluator& ev, RunResult& r) {
  Config best;
  double best_value = MeasureBaseline(ev, l.repetitions);
  Space space(l);
  ARBOR_TRY(bridge.WriteLine(space.Header(seed, budget).dump()));
  for (int k = 0; k < budget; ++k) {
    Result<std::optional<std::string>> line = bridge.ReadLine(line_timeout_s);
    if (!line.ok()) return line.error();
    if (!line->has_value()) {
      return MakeError("the bridge closed its output after " + std::to_string(k) + " of " +
                       std::to_string(budget) + " configurations");
    }
    Result<Config> proposed = space.Parse(**line);
    if (!proposed.ok()) return proposed.error();
    Config c = Repair(l, std::move(*proposed));
    Evaluation e = ev.Evaluate(c);
    if (e.crashed) {
      ++r.crashes;
    } else if (e.accuracy_failed) {
      ++r.accuracy_failures;
    } else if (*e.value > best_value) {
      best_value = *e.value;
      best = c;
    }
    r.states.push_back(best);
    ARBOR_TRY(bridge.WriteLine(Answer(e)));
  }
  return {};
}

}  // namespace

OptunaPolicy::OptunaPolicy(std::string python, std::string script, double line_timeout_s)
    : python_(std::move(python)), script_(std::move(script)), line_timeout_s_(line_timeout_s) {}

std::string OptunaPolicy::DefaultScript() { return ARBOR_OPTUNA_BRIDGE; }

RunResult OptunaPolicy::Run(const Landscape& l, uint64_t seed, int budget) {
  RunResult r;
  if (budget <= 0) return r;
  Evaluator ev(l, seed);
  const std::string who = "optuna-tpe (" + python_ + " " + script_ + "): ";
  Result<std::unique_ptr<LineProcess>> started = LineProcess::Start({python_, script_});
  if (!started.ok()) {
    r.error = who + started.error().message;
    return r;
  }
  LineProcess& bridge = **started;
  Status s = Converse(bridge, l, seed, budget, line_timeout_s_, ev, r);
  // Always reaped here: after the last answer the bridge exits by itself; after an error it
  // gets a moment to print its message, then is killed.
  Result<int> code =
      bridge.Finish(s.ok() ? line_timeout_s_ : std::min(line_timeout_s_, kExitTimeoutS));
  const bool exited_badly = code.ok() && *code != 0;
  if (!s.ok()) {
    r.error = who + s.error().message;
    if (exited_badly) r.error += " (exit status " + std::to_string(*code) + ")";
  } else if (!code.ok()) {
    r.error = who + code.error().message;
  } else if (exited_badly) {
    r.error = who + "the bridge exited with status " + std::to_string(*code);
  }
  if (!r.error.empty()) {
    if (std::string tail = bridge.LastStderrLine(); !tail.empty()) r.error += "; stderr: " + tail;
  }
  r.runs = ev.runs();
  return r;
}

bool OptunaPolicy::Available(const std::string& python) {
  Result<std::unique_ptr<LineProcess>> p = LineProcess::Start({python, "-c", "import optuna"});
  if (!p.ok()) return false;
  Result<int> code = (*p)->Finish(60);
  return code.ok() && *code == 0;
}

}  // namespace arbor::search

// JobPlaces and PlacesByHost (declared in report/views.h): where a node's runs went.
#include <algorithm>
#include <string>
#include <vector>

#include "core/model/event_kind.h"
#include "report/views.h"
#include "util/strings.h"

namespace arbor {

std::vector<JobPlace> JobPlaces(const std::vector<Event>& events) {
  std::vector<JobPlace> places;
  for (const Event& e : events) {
    if (KindOf(e) != EventKind::kJob || e.data.empty()) continue;
    nlohmann::json d = nlohmann::json::parse(e.data, nullptr, /*allow_exceptions=*/false);
    if (!d.is_object()) continue;
    auto text = [&](const char* key) {
      auto it = d.find(key);
      return it != d.end() && it->is_string() ? it->get<std::string>() : std::string();
    };
    places.push_back({text("label"), text("executor"), text("job"), text("host")});
  }
  return places;
}

std::vector<std::string> PlacesByHost(const std::vector<JobPlace>& places) {
  struct Host {
    std::string name;
    std::string executor;
    int runs = 0;
    std::vector<std::string> jobs;
  };
  std::vector<Host> hosts;
  for (const JobPlace& p : places) {
    std::string name = p.host.empty() ? "(host not recorded)" : p.host;
    auto it =
        std::find_if(hosts.begin(), hosts.end(), [&](const Host& h) { return h.name == name; });
    if (it == hosts.end()) it = hosts.insert(hosts.end(), Host{name, p.executor, 0, {}});
    ++it->runs;
    if (std::find(it->jobs.begin(), it->jobs.end(), p.job) == it->jobs.end()) {
      it->jobs.push_back(p.job);
    }
  }
  std::vector<std::string> lines;
  for (const Host& h : hosts) {
    std::string executor = h.executor == "slurm" ? "Slurm " : h.executor;
    if (!executor.empty() && executor.back() != ' ') executor += ' ';
    lines.push_back(h.name + ": " + std::to_string(h.runs) + (h.runs == 1 ? " run" : " runs") +
                    " in " + executor + "job(s) " + Join(h.jobs, ", "));
  }
  return lines;
}

}  // namespace arbor

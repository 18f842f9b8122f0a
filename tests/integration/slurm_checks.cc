#include "slurm_checks.h"

#include <gtest/gtest.h>

#include <sstream>

namespace arbor::integration {

std::string Executor(const TempWorkspace& ws, const std::string& more) {
  return "\n[executor]\nkind = \"slurm\"\nshared_dir = \"" + ws.root() + "\"\n" + more;
}

std::string FastCampaign(const std::string& name, const std::string& executor) {
  return "[campaign]\nname = \"" + name +
         "\"\nseed = 1\n"
         "[target]\nbuild = \"sh build.sh\"\nbench = \"sh bench.sh\"\ntimeout = \"10m\"\n"
         "[metric]\nsource = \"json:v\"\nrepetitions = 3\n"
         "[search]\nmax_nodes = 6\n"
         "[critic]\nmin_effect = 0.1\n"
         "[[action]]\nid = \"app.fast\"\nlayer = \"application\"\ncategory = \"algo\"\n"
         "speedup = 2.0\napply = { env = { FAST = \"1\" } }\n" +
         executor;
}

std::vector<std::string> Jobs(const std::string& comment) {
  ProcResult q = RunProcess({"squeue", "-h", "-o", "%i %k"}, "/");
  EXPECT_EQ(q.exit_code, 0) << q.Describe();
  std::vector<std::string> ids;
  std::stringstream lines(q.out);
  for (std::string line; std::getline(lines, line);) {
    size_t space = line.find(' ');
    if (space == std::string::npos) continue;
    if (line.compare(space + 1, comment.size(), comment) == 0) ids.push_back(line.substr(0, space));
  }
  return ids;
}

std::vector<std::string> ActiveJobs() {
  ProcResult q = RunProcess({"squeue", "-h", "-t", "PENDING,RUNNING", "-o", "%i"}, "/");
  EXPECT_EQ(q.exit_code, 0) << q.Describe();
  std::vector<std::string> ids;
  std::stringstream lines(q.out);
  for (std::string line; std::getline(lines, line);) {
    if (!line.empty()) ids.push_back(line);
  }
  return ids;
}

std::vector<nlohmann::json> JobEvents(const TempWorkspace& ws, int64_t id) {
  nlohmann::json show = ws.ArborJson({"show", std::to_string(id), "--json"});
  std::vector<nlohmann::json> out;
  if (!show.contains("events")) return out;
  for (const auto& e : show["events"]) {
    if (e.value("kind", "") == "job") out.push_back(e);
  }
  return out;
}

}  // namespace arbor::integration

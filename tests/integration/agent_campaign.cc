#include "agent_campaign.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <sstream>
#include <string>

#include "campaign_checks.h"

namespace arbor::integration {
namespace {

namespace fs = std::filesystem;

constexpr char kBenchHead[] =
    R"(/* Synthetic target: computed, not timed (tests/integration/agent_campaign.h). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "speed.h"
#include "tune.h"

)";

// After the includes: campaign_checks.h kComputedTargetHelpersC.
constexpr char kBenchMain[] = R"(int main(int argc, char** argv) {
  if (argc == 2 && strcmp(argv[1], "--check") == 0) {
    if (Env("WRONG", 0) != 0) {
      printf("checksum mismatch\n");
      return 1;
    }
    printf("ok\n");
    return 0;
  }
  long call = NextCall();
  double u = (double)(SplitMix((uint64_t)call * 7919u + 17u) >> 11) / 9007199254740992.0;
  double noise = 1 + 0.01 * (2 * u - 1);
  printf("{\"v\": %.4f}\n",
         1000 * SPEED * TUNE * Env("BOOST", 1) * Env("EXTRA", 1) * noise);
  return 0;
}
)";

// @AUX@, @SLEEP@, @FINDING@ and @PROPOSED@ are replaced. Only PATH, HOME and ARBOR_* reach it.
// clang-format off
constexpr char kAgentSh[] = R"SH(#!/bin/sh
# Plays a coding-agent CLI for Arbor's command backend (tests/integration/agent_campaign.h).
aux='@AUX@'
node="${ARBOR_NODE:-none}"
start=$(date +%s.%N)
: > "$aux/started-$node-$$"
cat > "$aux/seen-$node.md"
goal=$(grep -m1 '^Goal: ' "$ARBOR_TASK")
sleep @SLEEP@
finish() {
  echo "$start $(date +%s.%N)" > "$aux/times-$node-$$"
  exit "$1"
}
case "$goal" in
  *MARK=double-speed*)
    sed -i 's/define SPEED 1.0/define SPEED 2.0/' speed.h
    cat > "$ARBOR_RESULT" <<'EOF'
{"summary": "doubled SPEED in speed.h\nsecond line", "confidence": 0.8,
 "findings": ["@FINDING@"],
 "questions": ["Should SPEED become a build flag?"],
 "proposals": [{"id": "@PROPOSED@", "layer": "system", "category": "extra",
                "speedup": 1.3, "cost": "1s", "apply": {"env": {"EXTRA": "1.3"}}}]}
EOF
    finish 0 ;;
  *MARK=double-tune*)
    sed -i 's/define TUNE 1.0/define TUNE 2.0/' tune.h
    echo '{"summary": "doubled TUNE", "confidence": 0.6}' > "$ARBOR_RESULT"
    finish 0 ;;
  *MARK=exit3*)
    echo "cannot vectorise: no SIMD unit found" >&2
    finish 3 ;;
  *MARK=symlink*)
    ln -s /etc etc-link
    finish 0 ;;
  *)
    finish 0 ;;
esac
)SH";
// clang-format on

std::string Replace(std::string text, const std::string& from, const std::string& to) {
  for (size_t pos = 0; (pos = text.find(from, pos)) != std::string::npos; pos += to.size()) {
    text.replace(pos, from.size(), to);
  }
  return text;
}

}  // namespace

std::string AgentAction(const std::string& id, const std::string& mark, double speedup) {
  return "\n[[action]]\nid = \"" + id + "\"\nlayer = \"kernel\"\ncategory = \"" + id +
         "\"\nspeedup = " + std::to_string(speedup) +
         "\ncost = \"1s\"\napply = { agent = \"kernel\", goal = \"MARK=" + mark +
         ": change the kernel as the marker says\" }\n";
}

std::string EnvAction(const std::string& id, const std::string& env, double speedup) {
  return "\n[[action]]\nid = \"" + id + "\"\nlayer = \"system\"\ncategory = \"" + id +
         "\"\nspeedup = " + std::to_string(speedup) + "\ncost = \"1s\"\napply = { env = { " + env +
         " } }\n";
}

void WriteAgentCampaign(TempWorkspace& ws, const std::string& name, int parallel,
                        double agent_sleep_s, const std::string& actions) {
  std::string script = Replace(kAgentSh, "@AUX@", ws.aux());
  script = Replace(script, "@SLEEP@", std::to_string(agent_sleep_s));
  script = Replace(script, "@FINDING@", kAgentFinding);
  script = Replace(script, "@PROPOSED@", kProposedAction);
  std::string agent = ws.aux() + "/agent.sh";
  WriteFile(agent, script);
  ASSERT_EQ(chmod(agent.c_str(), 0755), 0);
  ws.Write("bench.c", std::string(kBenchHead) + kComputedTargetHelpersC + kBenchMain);
  ws.Write("speed.h", "#define SPEED 1.0\n");
  ws.Write("tune.h", "#define TUNE 1.0\n");
  ws.Write(".gitignore", "/bench\n");
  ws.Write("arbor.toml",
           "[campaign]\nname = \"" + name + "\"\nworkspace = \".\"\nseed = 1\n\n" +
               "[target]\nbuild = \"cc -O0 -o bench bench.c\"\ncheck = \"./bench --check\"\n"
               "bench = \"./bench\"\ntimeout = \"1m\"\nenv = { COUNTER = \"" +
               ws.aux() + "/calls\" }\n\n" +
               "[metric]\nname = \"v\"\ngoal = \"max\"\nsource = \"json:v\"\n"
               "repetitions = 3\n\n"
               "[search]\nmax_nodes = 20\nmax_time = \"10m\"\nparallel = " +
               std::to_string(parallel) + "\n\n[critic]\nmin_effect = 0.1\n\n" +
               "[specialists.kernel]\nbackend = \"command\"\ncommand = \"" + agent + "\"\n" +
               actions);
  ws.CommitAll();
}

std::vector<AgentRun> AgentRuns(const TempWorkspace& ws) {
  std::vector<AgentRun> runs;
  for (const auto& entry : fs::directory_iterator(ws.aux())) {
    std::string name = entry.path().filename().string();
    if (name.rfind("times-", 0) != 0) continue;
    AgentRun run;
    run.node = name.substr(6, name.find('-', 6) - 6);
    std::stringstream in(ReadFile(entry.path().string()));
    in >> run.start >> run.end;
    EXPECT_LE(run.start, run.end) << name;
    runs.push_back(run);
  }
  return runs;
}

bool AnyOverlap(const std::vector<AgentRun>& runs) {
  for (size_t i = 0; i < runs.size(); ++i) {
    for (size_t j = i + 1; j < runs.size(); ++j) {
      if (runs[i].start < runs[j].end && runs[j].start < runs[i].end) return true;
    }
  }
  return false;
}

int AgentStarts(const TempWorkspace& ws) {
  int n = 0;
  for (const auto& entry : fs::directory_iterator(ws.aux())) {
    if (entry.path().filename().string().rfind("started-", 0) == 0) ++n;
  }
  return n;
}

int WorktreeCount(const TempWorkspace& ws) {
  ProcResult list = ws.Git({"worktree", "list", "--porcelain"});
  EXPECT_EQ(list.exit_code, 0) << list.Describe();
  int count = 0;
  for (size_t pos = 0; (pos = list.out.find("worktree ", pos)) != std::string::npos; pos += 9) {
    ++count;
  }
  return count;
}

}  // namespace arbor::integration

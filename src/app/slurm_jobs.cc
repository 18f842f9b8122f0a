#include "app/slurm_jobs.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <set>

#include "app/slurm.h"
#include "exec/runner.h"
#include "util/hash.h"
#include "util/strings.h"

namespace arbor {
namespace fs = std::filesystem;

namespace {

std::string ReadIfThere(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) return "";
  auto text = ReadFileBounded(path, 1 << 16);
  return text.ok() ? *text : "";
}

// "exit 0" -> 0; anything else -> nullopt.
std::optional<int> ExitNumber(const std::string& line) {
  if (!StartsWith(line, "exit ") || line.size() == 5 || line.size() > 8) return std::nullopt;
  int n = 0;
  for (size_t i = 5; i < line.size(); ++i) {
    if (!std::isdigit(static_cast<unsigned char>(line[i]))) return std::nullopt;
    n = n * 10 + (line[i] - '0');
  }
  if (n > 255) return std::nullopt;
  return n;
}

// The status file of `dir`, read into `job` (finished or lost with the reason).
void ReadStatus(const std::string& dir, LeftJob* job) {
  std::error_code ec;
  if (!fs::exists(dir + "/status", ec)) {
    job->finished = false;
    job->why = "Slurm job" + (job->job.empty() ? "" : " " + job->job) +
               " ended without a result (cancelled, lost with its node, or killed)";
    return;
  }
  auto code = ParseJobStatus(ReadIfThere(dir + "/status"));
  job->finished = code.ok();
  if (code.ok()) job->exit_code = *code;
  if (!code.ok()) job->why = "Slurm job " + job->job + ": " + code.error().message;
}

// squeue answers without a job before it counts as gone (without slurmstepd's word on it).
constexpr int kUnlistedLooks = 5;

// slurmstepd's own line in the job's slurm.err says the job ended without its status
// (scancel, time limit, preemption, node failure).
bool SlurmSaidHowItEnded(const std::string& dir) {
  return ReadSlurmVerdict(ReadTail(dir + "/slurm.err", 8192)).kind != SlurmVerdict::Kind::kNone;
}

// When an adopted job's step runs out of time (seconds since the epoch): its timeout from
// submission, or with a queue limit, the limit while it has not started and the timeout from
// its start (the mtime of its `job` record) once it has.
double AdoptedDeadline(const LeftJob& j) {
  const JobRequest& r = j.request;
  if (!r.queue_timeout_s) return r.submitted + r.timeout_s;
  struct stat st {};
  if (stat((j.dir + "/job").c_str(), &st) != 0) return r.submitted + *r.queue_timeout_s;
  return static_cast<double>(st.st_mtim.tv_sec) + r.timeout_s;
}

const ExecutorJob* FindListed(const std::vector<ExecutorJob>& listed, const LeftJob& j) {
  for (const ExecutorJob& e : listed) {
    if (!j.job.empty() ? e.id == j.job : e.comment == j.request.comment) return &e;
  }
  return nullptr;
}

}  // namespace

std::string SlurmStepKey(NodeId node, const std::string& label, const std::string& command,
                         const std::string& cwd, const EnvOverlay& env) {
  std::string what = label + "\n" + command + "\n" + cwd + "\n";
  for (const auto& [k, v] : env) what += k + "=" + v + "\n";
  std::string safe;
  for (char c : label) {
    safe += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' ? c : '_';
  }
  return "n" + std::to_string(node) + "-" + safe + "-" + HashHex(what).substr(0, 8);
}

std::string WorktreeIdentity(const std::string& worktree) {
  struct stat st {};
  if (stat((worktree + "/.git").c_str(), &st) != 0 && stat(worktree.c_str(), &st) != 0) return "";
  return std::to_string(st.st_ino) + ":" + std::to_string(st.st_mtim.tv_sec) + "." +
         std::to_string(st.st_mtim.tv_nsec);
}

std::string FormatJobRequest(const JobRequest& r) {
  return "key " + r.key + "\ncomment " + r.comment + "\nworktree " + r.worktree + "\nworktree_id " +
         r.worktree_id + "\ntimeout_s " + FormatDouble(r.timeout_s, 12) + "\nsubmitted " +
         FormatDouble(r.submitted, 15) + "\nmeasurement " + (r.measurement ? "1" : "0") + "\n" +
         (r.queue_timeout_s ? "queue_timeout_s " + FormatDouble(*r.queue_timeout_s, 12) + "\n"
                            : "");
}

Result<JobRequest> ParseJobRequest(const std::string& text) {
  JobRequest r;
  std::set<std::string> seen;
  for (const std::string& line : Split(text, '\n')) {
    if (line.empty()) continue;
    size_t space = line.find(' ');
    std::string name = line.substr(0, space);
    std::string value = space == std::string::npos ? "" : line.substr(space + 1);
    seen.insert(name);
    char* end = nullptr;
    if (name == "key") r.key = value;
    if (name == "comment") r.comment = value;
    if (name == "worktree") r.worktree = value;
    if (name == "worktree_id") r.worktree_id = value;
    if (name == "measurement") r.measurement = value == "1";
    if (name == "timeout_s" || name == "submitted" || name == "queue_timeout_s") {
      double v = std::strtod(value.c_str(), &end);
      if (value.empty() || *end != '\0' || !std::isfinite(v) || v < 0) {
        return MakeError("request file: bad " + name + " '" + value + "'");
      }
      if (name == "queue_timeout_s") {
        r.queue_timeout_s = v;
      } else {
        (name == "timeout_s" ? r.timeout_s : r.submitted) = v;
      }
    }
  }
  for (const char* required : {"key", "comment", "timeout_s", "submitted", "measurement"}) {
    if (!seen.count(required)) {
      return MakeError(std::string("request file: no ") + required + " (cut short?)");
    }
  }
  return r;
}

Result<int> ParseJobStatus(const std::string& text) {
  if (text.empty()) return MakeError("its status file is empty");
  if (text.back() != '\n') return MakeError("its status file was cut short ('" + text + "')");
  std::string line = text.substr(0, text.size() - 1);
  std::optional<int> n = ExitNumber(line);
  if (!n || line.find('\n') != std::string::npos) {
    return MakeError("its status file is malformed ('" + Trim(line).substr(0, 40) + "')");
  }
  return *n;
}

LeftJob ReadJobFolder(const std::string& dir) {
  LeftJob j;
  j.dir = dir;
  std::vector<std::string> ran = Split(std::string(Trim(ReadIfThere(dir + "/job"))), ' ');
  j.job = ran.empty() ? "" : ran[0];
  j.host = ran.size() > 1 ? ran[1] : "";
  ReadStatus(dir, &j);
  return j;
}

double SteadyNow() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

JobEnd AwaitSlurmJob(const std::string& dir, const std::string& job_id, const std::string& job_name,
                     const JobWait& wait, const std::map<std::string, std::string>& env) {
  constexpr double kPoll = 0.2;      // the status file: a stat on the shared filesystem
  constexpr double kAskEvery = 2.0;  // squeue: a request to slurmctld
  std::error_code ec;
  double next_ask = SteadyNow() + kAskEvery;
  // Without a queue limit the job is treated as started at submission.
  std::optional<double> started;
  if (!wait.queue_timeout_s) started = wait.submitted;
  int unlisted = 0;
  for (;;) {
    if (fs::exists(dir + "/status", ec)) return JobEnd::kFinished;
    double now = SteadyNow();
    if (!started && fs::exists(dir + "/job", ec)) started = now;
    if (started && now >= *started + wait.timeout_s) return JobEnd::kTimedOut;
    if (!started && now >= wait.submitted + *wait.queue_timeout_s) return JobEnd::kQueueTimedOut;
    if (now >= next_ask) {
      next_ask = now + kAskEvery;
      auto listed = ListSlurmJobs(job_name, env);
      if (listed.ok()) {
        bool there = false;
        for (const ExecutorJob& j : *listed) there = there || j.id == job_id;
        unlisted = there ? 0 : unlisted + 1;
        // Gone from squeue: a few more looks, unless slurmstepd already said how it ended.
        if (unlisted >= (SlurmSaidHowItEnded(dir) ? 1 : kUnlistedLooks)) {
          return fs::exists(dir + "/status", ec) ? JobEnd::kFinished : JobEnd::kGone;
        }
      }
    }
    usleep(static_cast<useconds_t>(kPoll * 1e6));
  }
}

std::string DescribeComment(const std::string& comment) {
  size_t slash = comment.find('/');
  if (comment.size() < 2 || comment[0] != 'n' || slash == std::string::npos) return comment;
  return "node " + comment.substr(1, slash - 1) + " " + comment.substr(slash + 1);
}

std::string Reconciliation::Summary() const {
  std::vector<std::string> parts;
  if (!adopted.empty()) parts.push_back("adopted Slurm job(s) " + Join(adopted, ", "));
  if (read > 0) parts.push_back("read " + std::to_string(read) + " finished job(s)");
  if (lost > 0) parts.push_back("re-queued " + std::to_string(lost) + " lost job(s)");
  if (cancelled > 0) parts.push_back("cancelled " + std::to_string(cancelled) + " Slurm job(s)");
  if (parts.empty()) return "";
  return Join(parts, ", ") + " a previous run left";
}

Result<Reconciliation> ReconcileSlurmJobs(const std::string& jobs_dir, const std::string& job_name,
                                          const std::map<std::string, std::string>& env,
                                          const std::function<bool()>& stopping,
                                          const std::function<void(const std::string&)>& say) {
  ARBOR_TRY_ASSIGN(auto listed, ListSlurmJobs(job_name, env));
  Reconciliation rec;
  std::set<std::string> waited;  // keys of adopted jobs still running
  std::set<std::string> claimed_ids;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(jobs_dir, ec)) {
    const std::string dir = entry.path().string();
    const std::string key = entry.path().filename().string();
    LeftJob j = ReadJobFolder(dir);
    auto request = ParseJobRequest(ReadIfThere(dir + "/request"));
    if (!request.ok() || request->measurement) {
      // A measurement is redone on a fresh allocation; a folder without a request names no
      // step. Either way nothing can claim it (its job, if any, is cancelled below).
      fs::remove_all(dir, ec);
      continue;
    }
    j.request = *request;
    const ExecutorJob* running = j.finished ? nullptr : FindListed(listed, j);
    if (running != nullptr) {
      j.job = running->id;
      j.adopted = true;
      claimed_ids.insert(running->id);
      waited.insert(key);
      // Says (to `arbor status` readers and tests) that this run waits for the job.
      std::ofstream(dir + "/adopted") << getpid() << "\n";
      say("arbor: adopting Slurm job " + j.job + " (" + DescribeComment(j.request.comment) +
          ") a previous run left: waiting for it to end");
    }
    rec.left[key] = j;
  }
  // Every other job of the campaign: a measurement's allocation, a job whose folder is gone.
  for (const ExecutorJob& e : listed) {
    if (claimed_ids.count(e.id)) continue;
    if (CancelSlurmJob(e.id, env)) ++rec.cancelled;
  }
  std::map<std::string, int> unseen;  // per adopted job: squeue answers without it
  while (!waited.empty()) {
    if (stopping()) {
      for (const std::string& key : waited) {
        LeftJob& j = rec.left[key];
        if (CancelSlurmJob(j.job, env)) ++rec.cancelled;
        j.why = "Slurm job " + j.job + " was cancelled: the run was stopped while adopting it";
      }
      break;
    }
    usleep(1000 * 1000);
    // The status files and the deadlines decide even while Slurm cannot be asked.
    auto now_listed = ListSlurmJobs(job_name, env);
    for (auto it = waited.begin(); it != waited.end();) {
      LeftJob& j = rec.left[*it];
      if (fs::exists(j.dir + "/status", ec)) {
        ReadStatus(j.dir, &j);
        it = waited.erase(it);
        continue;
      }
      const double now = static_cast<double>(std::time(nullptr));
      const bool started = !j.request.queue_timeout_s || fs::exists(j.dir + "/job", ec);
      if (now > AdoptedDeadline(j)) {
        CancelSlurmJob(j.job, env);  // the step's timeout, as the runner would have applied
        j.finished = started;
        j.timed_out = started;
        if (!started) {
          j.why = "Slurm job " + j.job + " waited in the queue longer than queue_timeout";
        }
        it = waited.erase(it);
        continue;
      }
      if (now_listed.ok()) {
        int& looks = unseen[*it];
        looks = FindListed(*now_listed, j) != nullptr ? 0 : looks + 1;
        // A job gone from squeue gets a few more looks (a shared filesystem may show its
        // status late), unless slurmstepd already said how it ended.
        if (looks >= (SlurmSaidHowItEnded(j.dir) ? 1 : kUnlistedLooks)) {
          ReadStatus(j.dir, &j);
          it = waited.erase(it);
          continue;
        }
      }
      ++it;
    }
  }
  for (const auto& [key, j] : rec.left) {
    if (j.adopted && j.finished)
      rec.adopted.push_back(j.job + " (" + DescribeComment(j.request.comment) + ")");
    if (!j.adopted && j.finished) ++rec.read;
    if (!j.finished) ++rec.lost;
  }
  return rec;
}

}  // namespace arbor

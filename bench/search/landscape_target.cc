// arbor_landscape_target: a landscape as a real target program, for running the whole engine
// (the `arbor` binary, its processes and store) against it (docs/search-bench.md).
//
//   LANDSCAPE_FILE   the landscape (JSON)
//   LANDSCAPE_SEED   the measurement stream's seed (an unsigned integer)
//   LANDSCAPE_STATE  a counter file: reading k of the stream is the k-th --bench run overall
//                    (likewise checks), so repeated runs of one configuration differ
//   LS_<ID>          the configuration (Landscape::EnvVar, ConfigFromEnv)
//
//   --bench     prints {"value": V, "work": W}; a crashing reading aborts (SIGABRT), like a real
//               crash, or dies of SIGILL when an action runs without its crash_unless
//               prerequisite (an instruction the machine lacks)
//   --check     exit 0, or exit 1 with "accuracy: ..." on stdout
//   --profile   the true profile in Arbor's profile JSON
//   --campaign [--state PATH] [--max-nodes N]   the campaign file for this landscape
//   --optimum   the best non-broken configuration as JSON (LANDSCAPE_FILE only)
//
// Missing or malformed inputs exit 2 with one line on stderr.
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bench/search/landscape.h"
#include "util/escape.h"

extern char** environ;

namespace arbor::search {
namespace {

using nlohmann::json;

constexpr int kUsage = 2;

Result<std::string> Env(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return MakeError(std::string(name) + " is not set");
  return std::string(v);
}

Result<uint64_t> ParseUnsigned(const std::string& text, const std::string& what) {
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) {
    return MakeError(what + " is '" + text + "', expected an unsigned integer");
  }
  errno = 0;
  unsigned long long v = std::strtoull(text.c_str(), nullptr, 10);
  if (errno == ERANGE) return MakeError(what + " is '" + text + "', out of range");
  return static_cast<uint64_t>(v);
}

std::map<std::string, std::string> LsEnvironment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry(*e);
    size_t eq = entry.find('=');
    if (eq != std::string::npos && entry.rfind("LS_", 0) == 0) {
      env[entry.substr(0, eq)] = entry.substr(eq + 1);
    }
  }
  return env;
}

// Returns counter `name` of the state file and increments it, under an exclusive flock(2), so
// concurrent runs never take the same reading. The file holds lines "NAME COUNT".
Result<uint64_t> NextCount(const std::string& path, const std::string& name) {
  int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return MakeError("cannot open " + path + ": " + std::strerror(errno));
  auto fail = [&](const std::string& what) {
    std::string message = what + " " + path + ": " + std::strerror(errno);
    ::close(fd);
    return MakeError(message);
  };
  if (::flock(fd, LOCK_EX) != 0) return fail("cannot lock");
  std::string text;
  char buf[4096];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) != 0;) {
    if (n < 0) return fail("cannot read");
    text.append(buf, static_cast<size_t>(n));
  }
  std::map<std::string, uint64_t> counts;
  char key[64];
  unsigned long long count = 0;
  for (const char* line = text.c_str(); *line != '\0';) {
    if (std::sscanf(line, "%63s %llu", key, &count) == 2) counts[key] = count;
    const char* next = std::strchr(line, '\n');
    if (next == nullptr) break;
    line = next + 1;
  }
  uint64_t k = counts[name]++;
  std::string out;
  for (const auto& [n, c] : counts) out += n + " " + std::to_string(c) + "\n";
  if (::ftruncate(fd, 0) != 0 ||
      ::pwrite(fd, out.data(), out.size(), 0) != static_cast<ssize_t>(out.size())) {
    return fail("cannot write");
  }
  ::close(fd);  // releases the lock
  return k;
}

struct Inputs {
  Landscape landscape;
  std::string file;
  uint64_t seed = 0;
};

Result<Inputs> ReadInputs(bool need_seed) {
  Inputs in;
  Result<std::string> file = Env("LANDSCAPE_FILE");
  if (!file) return file.error();
  in.file = *file;
  Result<Landscape> l = Landscape::Load(in.file);
  if (!l) return l.error();
  in.landscape = std::move(*l);
  if (!need_seed) return in;
  Result<std::string> seed = Env("LANDSCAPE_SEED");
  if (!seed) return seed.error();
  Result<uint64_t> parsed = ParseUnsigned(*seed, "LANDSCAPE_SEED");
  if (!parsed) return parsed.error();
  in.seed = *parsed;
  return in;
}

Result<int> Bench(const Inputs& in) {
  Result<std::string> state = Env("LANDSCAPE_STATE");
  if (!state) return state.error();
  Result<uint64_t> k = NextCount(*state, "bench");
  if (!k) return k.error();
  const Landscape& l = in.landscape;
  Config c = l.ConfigFromEnv(LsEnvironment());
  std::optional<double> value = l.Reading(c, in.seed, *k);
  if (!value) {
    if (l.CrashSignal(c) == SIGILL) {
      // What a binary built for a missing ISA extension does: no message of its own, the
      // shell says "Illegal instruction".
      std::fprintf(stderr, "landscape: illegal instruction at reading %llu\n",
                   static_cast<unsigned long long>(*k));
      std::fflush(stderr);
      ::signal(SIGILL, SIG_DFL);
      ::raise(SIGILL);
    }
    std::fprintf(stderr, "landscape: crashed at reading %llu (crash rate %g); aborting\n",
                 static_cast<unsigned long long>(*k), l.CrashRate(c));
    std::fflush(stderr);
    std::abort();
  }
  std::printf("%s\n", json{{"value", *value}, {"work", l.Work(c)}}.dump().c_str());
  return 0;
}

Result<int> Check(const Inputs& in) {
  Result<std::string> state = Env("LANDSCAPE_STATE");
  if (!state) return state.error();
  Result<uint64_t> k = NextCount(*state, "check");
  if (!k) return k.error();
  const Landscape& l = in.landscape;
  Config c = l.ConfigFromEnv(LsEnvironment());
  if (l.CheckPasses(c, in.seed, *k)) {
    std::printf("landscape: check %llu passed\n", static_cast<unsigned long long>(*k));
    return 0;
  }
  std::printf("accuracy: check %llu failed (failure rate %g)\n",
              static_cast<unsigned long long>(*k), l.AccuracyFailRate(c));
  return 1;
}

Result<int> PrintProfile(const Inputs& in) {
  Profile p = in.landscape.TrueProfile(in.landscape.ConfigFromEnv(LsEnvironment()));
  json components = json::array();
  for (const Component& c : p.components) {
    components.push_back({{"name", c.name}, {"layer", c.layer}, {"share", c.share}});
  }
  std::printf("%s\n", json{{"total_s", p.total_s}, {"components", components}}.dump().c_str());
  return 0;
}

Result<int> PrintCampaign(const Inputs& in, const std::vector<std::string>& args) {
  std::string state;
  int max_nodes = 60;
  for (size_t i = 0; i < args.size(); ++i) {
    if (i + 1 >= args.size() || (args[i] != "--state" && args[i] != "--max-nodes")) {
      return MakeError("unexpected argument '" + args[i] +
                       "'; expected --state PATH or --max-nodes N");
    }
    if (args[i] == "--state") {
      state = args[++i];
    } else {
      Result<uint64_t> n = ParseUnsigned(args[++i], "--max-nodes");
      if (!n) return n.error();
      if (*n < 1 || *n > 1000000) return MakeError("--max-nodes must be in [1, 1000000]");
      max_nodes = static_cast<int>(*n);
    }
  }
  if (state.empty()) {
    Result<std::string> env = Env("LANDSCAPE_STATE");
    if (!env) return MakeError("no --state PATH and " + env.error().message);
    state = *env;
  }
  std::error_code ec;
  std::string self = std::filesystem::read_symlink("/proc/self/exe", ec).string();
  if (ec) return MakeError("cannot find this executable's path: " + ec.message());
  std::string file = std::filesystem::absolute(in.file, ec).lexically_normal().string();
  state = std::filesystem::absolute(state, ec).lexically_normal().string();
  std::printf("%s",
              in.landscape.CampaignToml(ShellQuote(self), file, state, in.seed, max_nodes).c_str());
  return 0;
}

Result<int> PrintOptimum(const Inputs& in) {
  Optimum o = FindOptimum(in.landscape);
  json out = {{"config", o.config},
              {"value", o.value},
              {"exact", o.exact},
              {"space_size", in.landscape.SpaceSize()}};
  std::printf("%s\n", out.dump().c_str());
  return 0;
}

Result<int> Run(const std::vector<std::string>& args) {
  const std::string usage =
      "usage: arbor_landscape_target --bench | --check | --profile | --optimum | "
      "--campaign [--state PATH] [--max-nodes N]";
  if (args.empty()) return MakeError(usage);
  const std::string& mode = args[0];
  std::vector<std::string> rest(args.begin() + 1, args.end());
  if (mode != "--campaign" && !rest.empty()) return MakeError(usage);
  const bool need_seed = mode != "--optimum" && mode != "--profile";
  Result<Inputs> in = ReadInputs(need_seed);
  if (!in) return in.error();
  if (mode == "--bench") return Bench(*in);
  if (mode == "--check") return Check(*in);
  if (mode == "--profile") return PrintProfile(*in);
  if (mode == "--campaign") return PrintCampaign(*in, rest);
  if (mode == "--optimum") return PrintOptimum(*in);
  return MakeError(usage);
}

}  // namespace
}  // namespace arbor::search

int main(int argc, char** argv) {
  try {
    arbor::Result<int> r = arbor::search::Run(std::vector<std::string>(argv + 1, argv + argc));
    if (!r) {
      std::fprintf(stderr, "arbor_landscape_target: %s\n", r.error().message.c_str());
      return arbor::search::kUsage;
    }
    return *r;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "arbor_landscape_target: %s\n", e.what());
    return arbor::search::kUsage;
  }
}

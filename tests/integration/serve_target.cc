// arbor_serve_target: a small HTTP server and its client, the target of the [target.serve]
// integration tests (serve_test.cc).
//
//   arbor_serve_target serve --port P [--daemon] [--worker] [--crash-after N] [--exit CODE]
//                            [--never-ready]
//   arbor_serve_target load --port P [--requests N]   one JSON line: {"v", "p99_ms", "server"}
//   arbor_serve_target health --port P                exit 0 iff GET /health answers 200
//   arbor_serve_target shutdown --port P              GET /shutdown: the server exits 0
//
// The server answers GET /work with what the state it runs in says: `v` is 100 × $SPEED (the
// state's environment), and it names itself (pid, ARBOR_NODE, ARBOR_WORKTREE) and counts the
// servers of its campaign alive now (distinct ARBOR_SERVE_ID values under the same runs/
// folder), so a test can tell which server answered each benchmark run. --daemon double-forks
// into a session of its own and leaves its working directory (as daemons do); --worker adds a
// child process that only waits; --crash-after N raises SIGSEGV at the N+1-th /work request;
// --exit CODE exits at once; --never-ready answers /health with 503.
#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <set>
#include <string>
#include <vector>

namespace {

struct Args {
  std::string mode;
  int port = 0;
  bool daemon = false;
  bool worker = false;
  int crash_after = -1;
  int exit_code = -1;
  bool never_ready = false;
  int requests = 5;
};

Args Parse(int argc, char** argv) {
  Args a;
  if (argc > 1) a.mode = argv[1];
  for (int i = 2; i < argc; ++i) {
    std::string k = argv[i];
    auto next = [&] { return i + 1 < argc ? std::atoi(argv[++i]) : 0; };
    if (k == "--port") a.port = next();
    if (k == "--daemon") a.daemon = true;
    if (k == "--worker") a.worker = true;
    if (k == "--crash-after") a.crash_after = next();
    if (k == "--exit") a.exit_code = next();
    if (k == "--never-ready") a.never_ready = true;
    if (k == "--requests") a.requests = next();
  }
  return a;
}

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr ? v : "";
}

std::string Slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// Servers of this campaign alive now: distinct ARBOR_SERVE_ID values under our runs/ folder.
int CampaignServers() {
  const std::string mine = Env("ARBOR_SERVE_ID");
  const size_t cut = mine.rfind("/n");
  if (cut == std::string::npos) return 0;
  const std::string prefix = "ARBOR_SERVE_ID=" + mine.substr(0, cut + 1);
  std::set<std::string> seen;
  DIR* dir = opendir("/proc");
  if (dir == nullptr) return 0;
  while (dirent* e = readdir(dir)) {
    if (e->d_name[0] < '0' || e->d_name[0] > '9') continue;
    const std::string env = Slurp(std::string("/proc/") + e->d_name + "/environ");
    for (size_t pos = 0; pos < env.size();) {
      size_t end = env.find('\0', pos);
      if (end == std::string::npos) end = env.size();
      if (env.compare(pos, prefix.size(), prefix) == 0) seen.insert(env.substr(pos, end - pos));
      pos = end + 1;
    }
  }
  closedir(dir);
  return static_cast<int>(seen.size());
}

int Connect(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (fd < 0 || connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    if (fd >= 0) close(fd);
    return -1;
  }
  return fd;
}

void WriteAll(int fd, const std::string& s) {
  for (size_t off = 0; off < s.size();) {
    ssize_t n = write(fd, s.data() + off, s.size() - off);
    if (n <= 0) return;
    off += static_cast<size_t>(n);
  }
}

std::string ReadAll(int fd) {
  std::string out;
  char buf[4096];
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) out.append(buf, static_cast<size_t>(n));
  return out;
}

// One GET; the status code and the body, or -1 when the server is not there.
int Get(int port, const std::string& path, std::string* body) {
  const int fd = Connect(port);
  if (fd < 0) return -1;
  WriteAll(fd, "GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n");
  const std::string reply = ReadAll(fd);
  close(fd);
  const size_t split = reply.find("\r\n\r\n");
  if (reply.compare(0, 9, "HTTP/1.1 ") != 0 || split == std::string::npos) return -1;
  if (body != nullptr) *body = reply.substr(split + 4);
  return std::atoi(reply.c_str() + 9);
}

void Reply(int fd, int code, const std::string& body) {
  WriteAll(fd, "HTTP/1.1 " + std::to_string(code) + (code == 200 ? " OK" : " Error") +
                   "\r\nContent-Type: application/json\r\nContent-Length: " +
                   std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body);
}

int Serve(const Args& a) {
  if (a.exit_code >= 0) {
    std::fprintf(stderr, "serve_target: exiting with %d as asked\n", a.exit_code);
    return a.exit_code;
  }
  if (a.daemon) {
    // The classic double fork: the launcher exits at once, the daemon is nobody's child.
    if (fork() > 0) _exit(0);
    setsid();
    if (fork() > 0) _exit(0);
    if (chdir("/") != 0) return 1;
  }
  if (a.worker && fork() == 0) {
    prctl(PR_SET_PDEATHSIG, SIGTERM);  // a worker ends with its server
    for (;;) pause();
  }
  const int listener = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  const int one = 1;
  setsockopt(listener, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(a.port));
  if (bind(listener, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      listen(listener, 16) != 0) {
    std::fprintf(stderr, "serve_target: cannot listen on %d: %s\n", a.port, std::strerror(errno));
    return 1;
  }
  std::fprintf(stderr, "serve_target: pid %d serving on 127.0.0.1:%d\n", getpid(), a.port);
  const double v = 100.0 * (Env("SPEED").empty() ? 1.0 : std::atof(Env("SPEED").c_str()));
  int served = 0;
  for (;;) {
    const int fd = accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (fd < 0) continue;
    char buf[2048];
    const ssize_t n = read(fd, buf, sizeof buf - 1);
    const std::string request(buf, n > 0 ? static_cast<size_t>(n) : 0);
    if (request.compare(0, 12, "GET /health ") == 0) {
      Reply(fd, a.never_ready ? 503 : 200, "{\"ok\": true}");
    } else if (request.compare(0, 14, "GET /shutdown ") == 0) {
      Reply(fd, 200, "{}");
      close(fd);
      std::fprintf(stderr, "serve_target: shutting down after %d requests\n", served);
      return 0;
    } else if (request.compare(0, 10, "GET /work ") == 0) {
      if (a.crash_after >= 0 && served >= a.crash_after) {
        std::fprintf(stderr, "serve_target: Segmentation fault coming after %d requests\n", served);
        // The default action, not a sanitizer's handler (the sanitizer builds install one):
        // the process dies of SIGSEGV, as an uninstrumented server would.
        signal(SIGSEGV, SIG_DFL);
        raise(SIGSEGV);
      }
      ++served;
      char body[4096];
      std::snprintf(body, sizeof body,
                    "{\"v\": %.1f, \"pid\": %d, \"node\": \"%s\", \"worktree\": \"%s\", "
                    "\"servers\": %d, \"served\": %d}",
                    v, getpid(), Env("ARBOR_NODE").c_str(), Env("ARBOR_WORKTREE").c_str(),
                    CampaignServers(), served);
      Reply(fd, 200, body);
    } else {
      Reply(fd, 404, "{}");
    }
    close(fd);
  }
}

// The benchmark: N requests, then one JSON line with the served value, the latency's p99 and
// what the server said of itself on the last one.
int Load(const Args& a) {
  std::vector<double> ms;
  std::string body;
  for (int i = 0; i < std::max(1, a.requests); ++i) {
    const auto t0 = std::chrono::steady_clock::now();
    const int code = Get(a.port, "/work", &body);
    ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    if (code != 200) {
      std::fprintf(stderr, "load: request %d to 127.0.0.1:%d failed (%d)\n", i, a.port, code);
      return 1;
    }
  }
  std::sort(ms.begin(), ms.end());
  const std::string v = body.substr(body.find(':') + 1, body.find(',') - body.find(':') - 1);
  std::printf(
      "{\"v\": %s, \"p99_ms\": %.3f, \"client_node\": \"%s\", \"client_worktree\": \"%s\", "
      "\"server\": %s}\n",
      v.c_str(), ms.back(), Env("ARBOR_NODE").c_str(), Env("ARBOR_WORKTREE").c_str(), body.c_str());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Args a = Parse(argc, argv);
  if (a.mode == "serve") return Serve(a);
  if (a.mode == "load") return Load(a);
  if (a.mode == "health") return Get(a.port, "/health", nullptr) == 200 ? 0 : 1;
  if (a.mode == "shutdown") return Get(a.port, "/shutdown", nullptr) == 200 ? 0 : 1;
  std::fprintf(stderr, "usage: arbor_serve_target serve|load|health|shutdown --port P ...\n");
  return 2;
}

#include "serving.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "http.h"

namespace tinyserve {
namespace {

// The classic double fork: the launcher returns to its shell at once, and the daemon is
// nobody's child, in a session of its own, away from the directory it was started in.
void Daemonize() {
  if (fork() > 0) _exit(0);
  setsid();
  if (fork() > 0) _exit(0);
  if (chdir("/") != 0) _exit(1);
  const int null = open("/dev/null", O_RDONLY);
  if (null >= 0) dup2(null, 0);
}

}  // namespace

int ServeHttp(Server* server, const std::vector<Request>& workload, int port, bool daemon) {
  std::string error;
  const int listener = http::Listen(port, &error);
  if (listener < 0) {
    std::fprintf(stderr, "tinyserve: %s\n", error.c_str());
    return 1;
  }
  if (daemon) Daemonize();
  std::fprintf(stderr, "tinyserve: pid %d serving %zu workload requests on 127.0.0.1:%d\n",
               static_cast<int>(getpid()), workload.size(), port);
  long served = 0;
  for (;;) {
    std::string target;
    const int fd = http::Accept(listener, &target);
    if (fd < 0) continue;
    const std::string path = target.substr(0, target.find('?'));
    if (path == "/health") {
      http::Reply(fd, 200, "{\"ok\": true}");
    } else if (path == "/shutdown") {
      http::Reply(fd, 200, "{\"served\": " + std::to_string(served) + "}");
      std::fprintf(stderr, "tinyserve: shutting down after %ld requests\n", served);
      return 0;
    } else if (path == "/generate") {
      const long id = std::atol(http::Query(target, "id").c_str());
      const Request& request = workload[static_cast<size_t>(id) % workload.size()];
      std::vector<RequestResult> result = server->RunPass({request}, PassOptions{});
      const long tokens = static_cast<long>(request.prompt.size() + result[0].tokens.size());
      char body[128];
      std::snprintf(body, sizeof body, "{\"id\": %ld, \"tokens\": %ld, \"service_ms\": %.3f}", id,
                    tokens, result[0].latency_s * 1e3);
      http::Reply(fd, 200, body);
      ++served;
    } else {
      http::Reply(fd, 404, "{\"error\": \"unknown path\"}");
    }
  }
}

}  // namespace tinyserve

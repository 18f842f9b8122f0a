// `arbor report` and `arbor serve` on the toy campaign, checked as files, over HTTP and in a
// real browser (headless Debian chromium: --dump-dom and --screenshot). The screenshots are
// kept in <build>/artifacts/ as test artifacts.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <regex>
#include <set>
#include <thread>

#include "campaign_checks.h"
#include "harness.h"

namespace arbor::integration {
namespace {

constexpr const char* kChromium = "/usr/bin/chromium";

size_t Count(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// A port nobody listens on right now (the kernel's pick for an ephemeral bind).
int FreePort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof addr;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) != 0) {
    close(fd);
    return -1;
  }
  close(fd);
  return ntohs(addr.sin_port);
}

struct HttpReply {
  int status = 0;
  std::string body;
};

// One HTTP/1.0 request to 127.0.0.1:port; status 0 when nobody answered.
HttpReply Http(int port, const std::string& method, const std::string& target,
               const std::string& extra_headers = "") {
  HttpReply reply;
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
    close(fd);
    return reply;
  }
  std::string host = extra_headers.find("Host:") == std::string::npos
                         ? "Host: 127.0.0.1:" + std::to_string(port) + "\r\n"
                         : "";
  std::string req =
      method + " " + target + " HTTP/1.0\r\n" + host + extra_headers + "Content-Length: 0\r\n\r\n";
  if (write(fd, req.data(), req.size()) != static_cast<ssize_t>(req.size())) {
    close(fd);
    return reply;
  }
  std::string raw;
  char buf[65536];
  for (ssize_t n; (n = read(fd, buf, sizeof buf)) > 0;) raw.append(buf, static_cast<size_t>(n));
  close(fd);
  std::smatch m;
  if (std::regex_search(raw, m, std::regex("^HTTP/1\\.[01] (\\d+)"))) {
    reply.status = std::stoi(m[1]);
  }
  size_t body = raw.find("\r\n\r\n");
  if (body != std::string::npos) reply.body = raw.substr(body + 4);
  return reply;
}

HttpReply WaitForServer(int port) {
  for (int i = 0; i < 100; ++i) {
    HttpReply r = Http(port, "GET", "/api/status");
    if (r.status != 0) return r;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return {};
}

// Headless chromium on `url`: `mode` is "--dump-dom" or "--screenshot=PATH".
ProcResult Chromium(const TempWorkspace& ws, const std::string& mode, const std::string& url) {
  return RunProcess(
      {kChromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
       "--no-first-run", "--hide-scrollbars", "--user-data-dir=" + ws.aux() + "/chromium",
       "--window-size=1280,1500", "--virtual-time-budget=4000", mode, url},
      ws.aux(), {{"HOME", ws.aux()}}, 90);
}

// Node groups of a Graphviz SVG ("<g id="node3" class="node">"), as a browser serializes them.
size_t SvgNodes(const std::string& html) { return Count(html, "class=\"node\""); }

TEST(IntegrationReport, ReportAndDashboardOfTheToyCampaign) {
  auto ws = TempWorkspace::Toy();
  ProcResult early = ws->Arbor({"report", "arbor.toml", "--out", ws->aux() + "/none.html"});
  EXPECT_EQ(early.exit_code, 4) << "no campaign yet: " << early.Describe();

  // The dashboard follows the campaign while it runs: serve starts as soon as the store
  // exists and is polled until the run ends.
  auto campaign = ws->StartArbor({"run", "arbor.toml", "--quiet"});
  for (int i = 0; i < 300 && ws->Arbor({"status", "--json"}).exit_code != 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  const int port = FreePort();
  ASSERT_GT(port, 0);
  auto server = ws->StartArbor({"serve", "arbor.toml", "--port", std::to_string(port)});
  ASSERT_EQ(WaitForServer(port).status, 200) << "arbor serve did not answer on port " << port;
  std::set<int64_t> versions;
  bool saw_running = false;
  while (ProcessAlive(campaign->pid())) {
    HttpReply r = Http(port, "GET", "/api/status");
    if (r.status == 200) {
      nlohmann::json j = nlohmann::json::parse(r.body);
      versions.insert(j["version"].get<int64_t>());
      saw_running = saw_running || j["state"] == "running";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  ProcResult run = campaign->Wait(600);
  ASSERT_EQ(run.exit_code, 0) << run.Describe();
  EXPECT_TRUE(saw_running) << "the dashboard never saw the campaign running";
  EXPECT_GE(versions.size(), 3u) << "the dashboard did not follow the campaign as it ran";
  const size_t nodes = LoadTree(*ws).size();
  ASSERT_GT(nodes, 5u);
  const std::string status_before = ws->Arbor({"status", "--json"}).out;
  const nlohmann::json counts = nlohmann::json::parse(status_before)["nodes"];
  const size_t kept = counts["kept"].get<size_t>();
  const size_t evaluated =
      kept + counts["reverted"].get<size_t>() + counts["crashed"].get<size_t>();

  // The report: one self-contained file with a row, a details block and a box per node.
  const std::string report = ws->aux() + "/report.html";
  ProcResult made = ws->Arbor({"report", "arbor.toml", "--out", report});
  ASSERT_EQ(made.exit_code, 0) << made.Describe();
  std::string html = ReadFile(report);
  EXPECT_EQ(Count(html, "class=\"node-row\""), nodes);
  EXPECT_EQ(Count(html, "class=\"node-detail\""), nodes);
  EXPECT_EQ(SvgNodes(html), nodes) << "Graphviz layout missing? " << made.out;
  EXPECT_EQ(Count(html, "<svg class=\"curve\""), 2u);
  EXPECT_EQ(Count(html, "data-points=\"" + std::to_string(evaluated) + "\""), 2u);
  EXPECT_EQ(Count(html, "src=\""), 0u) << "nothing is loaded from elsewhere";
  EXPECT_EQ(Count(html, "href=\"http"), 0u);
  EXPECT_NE(html.find("arbor-best.env"), std::string::npos);
  EXPECT_EQ(ws->Arbor({"status", "--json"}).out, status_before) << "report wrote nothing";

  // The live dashboard: the same views over HTTP, read-only.
  HttpReply status = Http(port, "GET", "/api/status");
  ASSERT_EQ(status.status, 200);
  nlohmann::json s = nlohmann::json::parse(status.body);
  EXPECT_EQ(s["nodes"]["total"], nodes);
  EXPECT_EQ(s["state"], "finished");
  HttpReply tree = Http(port, "GET", "/api/tree?offset=0&limit=1000");
  ASSERT_EQ(tree.status, 200);
  EXPECT_EQ(nlohmann::json::parse(tree.body)["nodes"].size(), nodes);
  HttpReply page = Http(port, "GET", "/api/tree?offset=1&limit=2");
  EXPECT_EQ(nlohmann::json::parse(page.body)["nodes"].size(), 2u);
  EXPECT_EQ(Http(port, "GET", "/api/node/1").status, 200);
  // A crashed node (the toy has two, a segfault each) carries its failed run: the signal, the
  // tails and the logs' paths.
  size_t crashed = 0;
  const nlohmann::json tree_json = nlohmann::json::parse(tree.body);  // outlives the loop
  for (const auto& n : tree_json["nodes"]) {
    if (n.value("outcome", "") != "crashed") continue;
    ++crashed;
    HttpReply detail = Http(port, "GET", "/api/node/" + std::to_string(n.value("id", 0)));
    ASSERT_EQ(detail.status, 200);
    nlohmann::json failed = nlohmann::json::parse(detail.body)["failed_run"];
    ASSERT_TRUE(failed.is_object()) << detail.body;
    EXPECT_EQ(failed.value("exit", ""), "signaled") << failed.dump();
    EXPECT_TRUE(std::filesystem::exists(failed["stdout"].value("path", ""))) << failed.dump();
  }
  EXPECT_GE(crashed, 1u) << tree.body;
  EXPECT_EQ(Http(port, "GET", "/api/curve").status, 200);
  EXPECT_EQ(Http(port, "POST", "/api/status").status, 405) << "read-only";
  EXPECT_EQ(Http(port, "GET", "/api/status", "Host: attacker.example\r\n").status, 403)
      << "a non-loopback Host is refused without a token (DNS rebinding)";

  // scripts/deps installs chromium: a missing browser is a failed set-up, not a skipped check.
  if (std::filesystem::exists(kChromium)) {
    const std::string artifacts = ARTIFACTS_DIR;
    std::filesystem::create_directories(artifacts);
    // The report as a browser sees it.
    ProcResult dom = Chromium(*ws, "--dump-dom", "file://" + report);
    ASSERT_EQ(dom.exit_code, 0) << dom.Describe();
    EXPECT_EQ(Count(dom.out, "class=\"node-row\""), nodes);
    EXPECT_EQ(SvgNodes(dom.out), nodes);
    EXPECT_EQ(Count(dom.out, "class=\"keep\""), 2 * kept) << "each keep, on both curves";
    EXPECT_EQ(Count(dom.out, "data-points=\"" + std::to_string(evaluated) + "\""), 2u);
    ProcResult shot =
        Chromium(*ws, "--screenshot=" + artifacts + "/report.png", "file://" + report);
    EXPECT_EQ(shot.exit_code, 0) << shot.Describe();
    EXPECT_GT(std::filesystem::file_size(artifacts + "/report.png"), 10000u);

    // The live page: rendered by the server, then updated by its script from the API.
    const std::string url = "http://127.0.0.1:" + std::to_string(port) + "/";
    ProcResult live = Chromium(*ws, "--dump-dom", url);
    ASSERT_EQ(live.exit_code, 0) << live.Describe();
    EXPECT_EQ(Count(live.out, "class=\"node-row\""), nodes);
    EXPECT_EQ(SvgNodes(live.out), nodes);
    EXPECT_EQ(Count(live.out, "<svg class=\"curve\""), 2u);
    EXPECT_NE(live.out.find("data-live=\"ok\""), std::string::npos)
        << "the page's script did not reach /api/status";
    ProcResult live_shot = Chromium(*ws, "--screenshot=" + artifacts + "/dashboard.png", url);
    EXPECT_EQ(live_shot.exit_code, 0) << live_shot.Describe();
  } else {
    ADD_FAILURE() << kChromium << " is missing (bash scripts/deps installs it)";
  }

  server->Signal(SIGTERM);
  ProcResult stopped = server->Wait(20);
  EXPECT_EQ(stopped.exit_code, 0) << stopped.Describe();
  EXPECT_NE(stopped.out.find("arbor: serving http://127.0.0.1:" + std::to_string(port) + "/"),
            std::string::npos)
      << stopped.out;
  EXPECT_EQ(ws->Arbor({"status", "--json"}).out, status_before) << "serve wrote nothing";

  // Beyond loopback a token is required, and once set every request must carry it.
  ProcResult open = ws->Arbor({"serve", "arbor.toml", "--bind", "0.0.0.0", "--port", "0"});
  EXPECT_EQ(open.exit_code, 2) << open.Describe();
  EXPECT_NE(open.err.find("--token"), std::string::npos) << open.err;
  ProcResult weak =
      ws->Arbor({"serve", "arbor.toml", "--bind", "0.0.0.0", "--port", "0", "--token", "s3cret"});
  EXPECT_EQ(weak.exit_code, 2) << weak.Describe();
  EXPECT_NE(weak.err.find("at least 16"), std::string::npos) << weak.err;
  ProcResult weak_env = ws->Arbor({"serve", "arbor.toml", "--bind", "0.0.0.0", "--port", "0"},
                                  {{"ARBOR_SERVE_TOKEN", "s3cret"}});
  EXPECT_EQ(weak_env.exit_code, 2) << "the token from the environment is read and checked too";
  EXPECT_NE(weak_env.err.find("at least 16"), std::string::npos) << weak_env.err;
  const int token_port = FreePort();
  auto guarded = ws->StartArbor(
      {"serve", "arbor.toml", "--port", std::to_string(token_port), "--token", "s3cret"});
  EXPECT_EQ(WaitForServer(token_port).status, 401);
  EXPECT_EQ(Http(token_port, "GET", "/api/status?token=wrong").status, 401);
  EXPECT_EQ(Http(token_port, "GET", "/api/status?token=s3cret").status, 200);
  EXPECT_EQ(Http(token_port, "GET", "/api/tree", "Authorization: Bearer s3cret\r\n").status, 200);
  guarded->Signal(SIGINT);
  EXPECT_EQ(guarded->Wait(20).exit_code, 0);
  // The same from ARBOR_SERVE_TOKEN, which keeps the token off the command line.
  const int env_port = FreePort();
  auto from_env = ws->StartArbor({"serve", "arbor.toml", "--port", std::to_string(env_port)},
                                 {{"ARBOR_SERVE_TOKEN", "s3cret"}});
  EXPECT_EQ(WaitForServer(env_port).status, 401);
  EXPECT_EQ(Http(env_port, "GET", "/api/status?token=s3cret").status, 200);
  from_env->Signal(SIGINT);
  EXPECT_EQ(from_env->Wait(20).exit_code, 0);
}

}  // namespace
}  // namespace arbor::integration

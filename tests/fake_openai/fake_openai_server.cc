// arbor_fake_openai: a scripted OpenAI-compatible chat-completions server for tests.
//
//   arbor_fake_openai --script FILE --port-file FILE [--log FILE] [--port N]
//
// Binds 127.0.0.1 (port 0, the default, picks a free one), writes the port to --port-file
// atomically once the socket listens, and answers POST /v1/chat/completions (and
// /chat/completions) from the script: a JSON array of items, each used once,
//   {"status":200, "content":"…", "usage":{"prompt_tokens":N,"completion_tokens":M},
//    "delay_s":0, "retry_after":null, "raw_body":null, "match":null}
// An item with a "match" substring answers the first request whose last user message contains
// it; the others answer the remaining requests in order. Once nothing fits, the answer is
// 500 {"error":{"message":"script exhausted"}}. A non-2xx item without raw_body answers
// {"error":{"message": content}}. Every request is appended to --log as one JSON line
// {"n", "path", "authorization", "body", "item"}: the log is for tests, so it holds the header.
// SIGINT/SIGTERM stop it (a pending delay_s is cut short); exit status 0, or 2 on bad usage.
#include <httplib.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using nlohmann::json;

std::atomic<bool> g_stopping{false};

struct Args {
  std::string script;
  std::string port_file;
  std::string log;
  int port = 0;
};

std::optional<Args> ParseArgs(int argc, char** argv) {
  Args args;
  for (int i = 1; i < argc; ++i) {
    std::string flag = argv[i];
    if (i + 1 >= argc) return std::nullopt;
    std::string value = argv[++i];
    if (flag == "--script") {
      args.script = value;
    } else if (flag == "--port-file") {
      args.port_file = value;
    } else if (flag == "--log") {
      args.log = value;
    } else if (flag == "--port") {
      args.port = std::atoi(value.c_str());
    } else {
      return std::nullopt;
    }
  }
  if (args.script.empty() || args.port_file.empty()) return std::nullopt;
  return args;
}

std::string LastUserMessage(const json& request) {
  std::string last;
  if (!request.is_object() || !request.contains("messages") || !request["messages"].is_array()) {
    return last;
  }
  for (const json& m : request["messages"]) {
    if (m.is_object() && m.value("role", "") == "user" && m.contains("content") &&
        m["content"].is_string()) {
      last = m["content"].get<std::string>();
    }
  }
  return last;
}

// The script and the log, shared by the server's worker threads.
class Scripted {
 public:
  Scripted(json items, std::string log_path)
      : items_(std::move(items)), used_(items_.size(), false), log_path_(std::move(log_path)) {}

  // Picks (and uses up) the item for `request`; -1 when the script is exhausted. Logs it.
  int Take(const httplib::Request& req, const json& request) {
    std::lock_guard<std::mutex> lock(mu_);
    std::string last_user = LastUserMessage(request);
    int chosen = -1;
    for (size_t i = 0; i < items_.size() && chosen < 0; ++i) {
      const json& m = items_[i].contains("match") ? items_[i]["match"] : json();
      if (!used_[i] && m.is_string() && last_user.find(m.get<std::string>()) != std::string::npos) {
        chosen = static_cast<int>(i);
      }
    }
    for (size_t i = 0; i < items_.size() && chosen < 0; ++i) {
      bool has_match = items_[i].contains("match") && !items_[i]["match"].is_null();
      if (!used_[i] && !has_match) chosen = static_cast<int>(i);
    }
    if (chosen >= 0) used_[chosen] = true;
    Log(req, request, chosen);
    return chosen;
  }
  const json& item(int i) const { return items_[i]; }

 private:
  void Log(const httplib::Request& req, const json& request, int chosen) {
    if (log_path_.empty()) return;
    json line = {
        {"n", count_++},
        {"path", req.path},
        {"authorization",
         req.has_header("Authorization") ? json(req.get_header_value("Authorization")) : json()},
        {"body", request.is_discarded() ? json(req.body) : request},
        {"item", chosen >= 0 ? json(chosen) : json()}};
    std::ofstream out(log_path_, std::ios::app);
    out << line.dump(-1, ' ', false, json::error_handler_t::replace) << "\n";
  }

  std::mutex mu_;
  json items_;
  std::vector<bool> used_;
  std::string log_path_;
  int count_ = 0;
};

void SleepUnlessStopping(double seconds) {
  auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  while (!g_stopping && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

void Answer(const json& item, const json& request, int n, httplib::Response& res) {
  double delay =
      item.contains("delay_s") && item["delay_s"].is_number() ? item["delay_s"].get<double>() : 0.0;
  if (delay > 0) SleepUnlessStopping(delay);
  res.status = item.contains("status") && item["status"].is_number_integer()
                   ? item["status"].get<int>()
                   : 200;
  if (item.contains("retry_after") && !item["retry_after"].is_null()) {
    const json& ra = item["retry_after"];
    res.set_header("Retry-After", ra.is_string() ? ra.get<std::string>() : ra.dump());
  }
  if (item.contains("raw_body") && item["raw_body"].is_string()) {
    res.set_content(item["raw_body"].get<std::string>(), "application/json");
    return;
  }
  json content = item.contains("content") ? item["content"] : json("");
  json body;
  if (res.status >= 200 && res.status <= 299) {
    std::string model = request.is_object() ? request.value("model", "fake") : "fake";
    body = {{"id", "fake-" + std::to_string(n)},
            {"object", "chat.completion"},
            {"created", 0},
            {"model", model},
            {"choices",
             {{{"index", 0},
               {"message", {{"role", "assistant"}, {"content", content}}},
               {"finish_reason", "stop"}}}}};
  } else {
    std::string message = content.is_string() && !content.get<std::string>().empty()
                              ? content.get<std::string>()
                              : "scripted HTTP " + std::to_string(res.status);
    body = {{"error", {{"message", message}, {"type", "fake"}}}};
  }
  if (item.contains("usage") && item["usage"].is_object()) body["usage"] = item["usage"];
  res.set_content(body.dump(), "application/json");
}

bool WritePortFile(const std::string& path, int port) {
  std::string tmp = path + ".tmp." + std::to_string(getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << port << "\n";
    if (!out.flush()) return false;
  }
  return std::rename(tmp.c_str(), path.c_str()) == 0;
}

int Usage(const std::string& why) {
  std::fprintf(stderr,
               "arbor_fake_openai: %s\nusage: arbor_fake_openai --script FILE --port-file FILE "
               "[--log FILE] [--port N]\n",
               why.c_str());
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::optional<Args> args = ParseArgs(argc, argv);
  if (!args) return Usage("bad arguments");
  std::ifstream in(args->script);
  std::stringstream text;
  text << in.rdbuf();
  json items = json::parse(text.str(), nullptr, false);
  if (!in || items.is_discarded() || !items.is_array()) {
    return Usage("cannot read " + args->script + " as a JSON array");
  }
  for (const json& item : items) {
    if (!item.is_object()) return Usage("every script item must be an object");
  }
  Scripted script(std::move(items), args->log);

  // A shell starts background jobs with SIGINT ignored, and an ignored signal is dropped even
  // while blocked: take the default back first. Then block them before any thread exists, so
  // only the watcher below receives them.
  std::signal(SIGINT, SIG_DFL);
  std::signal(SIGTERM, SIG_DFL);
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  httplib::Server server;
  auto handle = [&script](const httplib::Request& req, httplib::Response& res) {
    json request = json::parse(req.body, nullptr, false);
    static std::atomic<int> served{0};
    int n = served++;
    int chosen = script.Take(req, request);
    if (chosen < 0) {
      res.status = 500;
      res.set_content(R"({"error":{"message":"script exhausted","type":"fake"}})",
                      "application/json");
      return;
    }
    Answer(script.item(chosen), request, n, res);
  };
  server.Post("/v1/chat/completions", handle);
  server.Post("/chat/completions", handle);

  int port = args->port;
  if (port == 0) {
    port = server.bind_to_any_port("127.0.0.1");
  } else if (!server.bind_to_port("127.0.0.1", port)) {
    port = -1;
  }
  if (port < 0) return Usage("cannot bind 127.0.0.1:" + std::to_string(args->port));
  // The socket already listens: clients that read the port file queue until accept runs.
  if (!WritePortFile(args->port_file, port)) return Usage("cannot write " + args->port_file);

  std::atomic<bool> done{false};
  std::thread watcher([&] {
    timespec tick{0, 50 * 1000 * 1000};
    while (!done) {
      // Once signalled, keep asking: a stop() before the server listens is a no-op.
      if (g_stopping || sigtimedwait(&stop_signals, nullptr, &tick) > 0) {
        g_stopping = true;
        server.stop();
        nanosleep(&tick, nullptr);
      }
    }
  });
  server.listen_after_bind();
  done = true;
  watcher.join();
  return 0;
}

// TestServer: an in-process cpp-httplib server on 127.0.0.1 (a free port) for the llm tests.
// Each request to /v1/chat/completions is recorded and answered by the handler the test set;
// the destructor wakes handlers that are still waiting (SleepUnlessStopping) and joins.
#pragma once

#include <httplib.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace arbor::llm::test_support {

struct SeenRequest {
  std::string body;
  std::string authorization;
  bool has_authorization = false;
};

class TestServer {
 public:
  using Handler = std::function<void(int index, const httplib::Request&, httplib::Response&)>;

  TestServer() {
    server_.Post(
        "/v1/chat/completions", [this](const httplib::Request& req, httplib::Response& res) {
          int index = 0;
          {
            std::lock_guard<std::mutex> lock(mu_);
            index = static_cast<int>(seen_.size());
            seen_.push_back(
                {req.body, req.get_header_value("Authorization"), req.has_header("Authorization")});
          }
          handler_(index, req, res);
        });
    // One worker thread: requests are served one at a time, which is all the chat client
    // needs. With httplib's default pool, a retry arriving while a slow handler still runs
    // went to a second worker, which read a function-local static (a regex inside Debian's
    // uninstrumented libcpp-httplib) that the first worker had initialised; the guard's
    // inlined fast path is invisible to ThreadSanitizer, which reported a race between the
    // two workers inside the library (docs/reliability/sanitizers.md).
    server_.new_task_queue = [] { return new httplib::ThreadPool(1); };
    // bind_to_any_port also listens, so clients queue until the accept loop runs.
    port_ = server_.bind_to_any_port("127.0.0.1");
    thread_ = std::thread([this] { server_.listen_after_bind(); });
  }
  ~TestServer() {
    stopping_ = true;
    while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    server_.stop();
    thread_.join();
  }
  TestServer(const TestServer&) = delete;
  TestServer& operator=(const TestServer&) = delete;

  // Set before the first request.
  void Answer(Handler handler) { handler_ = std::move(handler); }

  int port() const { return port_; }
  std::string BaseUrl() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }
  std::vector<SeenRequest> Seen() const {
    std::lock_guard<std::mutex> lock(mu_);
    return seen_;
  }

  // For handlers that must outlast a client's timeout without holding up the test's end.
  void SleepUnlessStopping(double seconds) const {
    auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (!stopping_ && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }

 private:
  httplib::Server server_;
  Handler handler_ = [](int, const httplib::Request&, httplib::Response& res) { res.status = 500; };
  int port_ = -1;
  std::thread thread_;
  std::atomic<bool> stopping_{false};
  mutable std::mutex mu_;
  std::vector<SeenRequest> seen_;
};

// An OpenAI-style answer body.
inline std::string AnswerBody(const std::string& content, int prompt_tokens = -1,
                              int completion_tokens = -1) {
  std::string body = R"({"id":"x","object":"chat.completion","choices":[{"index":0,)"
                     R"("message":{"role":"assistant","content":")" +
                     content + R"("},"finish_reason":"stop"}])";
  if (prompt_tokens >= 0) {
    body += R"(,"usage":{"prompt_tokens":)" + std::to_string(prompt_tokens) +
            R"(,"completion_tokens":)" + std::to_string(completion_tokens) + "}";
  }
  return body + "}";
}

}  // namespace arbor::llm::test_support

// ChatClient against an in-process server: answers, the key, retries, and every failure kind.
#include "llm/chat_client.h"

#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "llm/test_server_testing.h"

namespace arbor::llm {
namespace {

using test_support::AnswerBody;
using test_support::TestServer;
using Kind = ChatError::Kind;

constexpr const char* kKeyVar = "ARBOR_LLM_TEST_KEY";
constexpr const char* kKey = "sk-test-0123456789abcdef";

class ChatClientTest : public ::testing::Test {
 protected:
  void SetUp() override { setenv(kKeyVar, kKey, 1); }
  void TearDown() override { unsetenv(kKeyVar); }

  ChatOptions Options() const {
    ChatOptions o;
    o.base_url = server_.BaseUrl();
    o.model = "test-model";
    o.api_key_env = kKeyVar;
    o.timeout_s = 10;
    o.retries = 3;
    o.backoff_s = 1;
    o.max_backoff_s = 30;
    return o;
  }
  ChatReply Ask(const ChatOptions& options) {
    ChatClient client(options, [this](double s) { sleeps_.push_back(s); });
    ChatReply reply = client.Complete({{"system", "be brief"}, {"user", "speed this up"}});
    // Whatever happened, the key is in no message.
    EXPECT_EQ(reply.error.message.find(kKey), std::string::npos) << reply.error.message;
    return reply;
  }
  ChatReply Ask() { return Ask(Options()); }
  void Always(int status, const std::string& body) {
    server_.Answer([status, body](int, const httplib::Request&, httplib::Response& res) {
      res.status = status;
      res.set_content(body, "application/json");
    });
  }

  TestServer server_;
  std::vector<double> sleeps_;
};

TEST_F(ChatClientTest, GoodAnswerWithUsage) {
  Always(200, AnswerBody("use -O3", 12, 5));
  ChatOptions options = Options();
  options.temperature = 0.25;
  options.max_tokens = 64;
  ChatReply reply = Ask(options);
  ASSERT_TRUE(reply.ok) << reply.error.message;
  EXPECT_EQ(reply.content, "use -O3");
  EXPECT_EQ(reply.usage.prompt_tokens, 12);
  EXPECT_EQ(reply.usage.completion_tokens, 5);
  EXPECT_EQ(reply.attempts, 1);
  EXPECT_TRUE(sleeps_.empty());

  ASSERT_EQ(server_.Seen().size(), 1u);
  auto sent = nlohmann::json::parse(server_.Seen()[0].body);
  EXPECT_EQ(sent["model"], "test-model");
  EXPECT_EQ(sent["temperature"], 0.25);
  EXPECT_EQ(sent["max_tokens"], 64);
  ASSERT_EQ(sent["messages"].size(), 2u);
  EXPECT_EQ(sent["messages"][0]["role"], "system");
  EXPECT_EQ(sent["messages"][1]["content"], "speed this up");
}

TEST_F(ChatClientTest, NoUsageAndNoMaxTokensMeanZeroAndUnsent) {
  Always(200, AnswerBody("ok"));
  ChatReply reply = Ask();
  ASSERT_TRUE(reply.ok);
  EXPECT_EQ(reply.usage.prompt_tokens, 0);
  EXPECT_EQ(reply.usage.completion_tokens, 0);
  EXPECT_FALSE(nlohmann::json::parse(server_.Seen()[0].body).contains("max_tokens"));
}

TEST_F(ChatClientTest, AuthorizationCarriesTheKeyFromTheEnvironment) {
  Always(200, AnswerBody("ok"));
  ASSERT_TRUE(Ask().ok);
  setenv(kKeyVar, "sk-rotated", 1);  // read at call time, never cached
  ASSERT_TRUE(Ask().ok);
  ASSERT_EQ(server_.Seen().size(), 2u);
  EXPECT_EQ(server_.Seen()[0].authorization, std::string("Bearer ") + kKey);
  EXPECT_EQ(server_.Seen()[1].authorization, "Bearer sk-rotated");
}

TEST_F(ChatClientTest, NoKeyVariableSendsNoAuthorization) {
  Always(200, AnswerBody("ok"));
  ChatOptions options = Options();
  options.api_key_env = "";
  ASSERT_TRUE(Ask(options).ok);
  EXPECT_FALSE(server_.Seen()[0].has_authorization);
}

TEST_F(ChatClientTest, RetriesA429AfterItsRetryAfter) {
  server_.Answer([](int i, const httplib::Request&, httplib::Response& res) {
    if (i == 0) {
      res.status = 429;
      res.set_header("Retry-After", "7");
      res.set_content(R"({"error":{"message":"slow down"}})", "application/json");
    } else {
      res.set_content(AnswerBody("done", 3, 4), "application/json");
    }
  });
  auto start = std::chrono::steady_clock::now();
  ChatReply reply = Ask();
  ASSERT_TRUE(reply.ok) << reply.error.message;
  EXPECT_EQ(reply.attempts, 2);
  EXPECT_EQ(sleeps_, std::vector<double>{7});
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));  // no real wait
}

TEST_F(ChatClientTest, RetryAfterIsCappedAtMaxBackoff) {
  server_.Answer([](int i, const httplib::Request&, httplib::Response& res) {
    res.status = i == 0 ? 503 : 200;
    if (i == 0) res.set_header("Retry-After", "3600");
    res.set_content(AnswerBody("done"), "application/json");
  });
  ChatOptions options = Options();
  options.max_backoff_s = 20;
  ASSERT_TRUE(Ask(options).ok);
  EXPECT_EQ(sleeps_, std::vector<double>{20});
}

TEST_F(ChatClientTest, ServerErrorsAreRetriedThenReported) {
  Always(500, R"({"error":{"message":"overloaded"}})");
  ChatReply reply = Ask();
  EXPECT_FALSE(reply.ok);
  EXPECT_EQ(reply.error.kind, Kind::kHttp);
  EXPECT_EQ(reply.error.http_status, 500);
  EXPECT_EQ(reply.error.message,
            "HTTP 500 from " + server_.BaseUrl() + "/chat/completions: overloaded");
  EXPECT_EQ(reply.attempts, 4);
  EXPECT_EQ(server_.Seen().size(), 4u);
  ASSERT_EQ(sleeps_.size(), 3u);
  for (int i = 0; i < 3; ++i) {  // backoff_s * 2^i, jittered into [half, full)
    EXPECT_GE(sleeps_[i], 0.5 * (1 << i));
    EXPECT_LT(sleeps_[i], 1.0 * (1 << i));
  }
  // The jitter is a function of the seed alone.
  std::vector<double> first = sleeps_;
  sleeps_.clear();
  (void)Ask();
  EXPECT_EQ(sleeps_, first);
}

TEST_F(ChatClientTest, ClientErrorsAreNotRetried) {
  Always(400, R"({"error":{"message":"model 'x' does not exist","type":"invalid_request"}})");
  ChatReply reply = Ask();
  EXPECT_EQ(reply.error.kind, Kind::kHttp);
  EXPECT_EQ(reply.error.http_status, 400);
  EXPECT_NE(reply.error.message.find("model 'x' does not exist"), std::string::npos);
  EXPECT_EQ(reply.attempts, 1);
  EXPECT_TRUE(sleeps_.empty());
}

TEST_F(ChatClientTest, LongServerMessagesAreCut) {
  Always(401, R"({"error":{"message":")" + std::string(5000, 'x') + R"("}})");
  ChatReply reply = Ask();
  EXPECT_EQ(reply.error.http_status, 401);
  EXPECT_LT(reply.error.message.size(), 300u);
}

TEST_F(ChatClientTest, MalformedJsonNamesTheByte) {
  Always(200, R"({"choices": [)");
  ChatReply reply = Ask();
  EXPECT_EQ(reply.error.kind, Kind::kMalformed);
  EXPECT_EQ(reply.error.message, "response is not JSON at byte 14");
  EXPECT_EQ(reply.attempts, 1);
}

TEST_F(ChatClientTest, MissingChoicesIsMalformed) {
  Always(200, R"({"id":"x","usage":{"prompt_tokens":9,"completion_tokens":0}})");
  ChatReply reply = Ask();
  EXPECT_EQ(reply.error.kind, Kind::kMalformed);
  EXPECT_EQ(reply.error.message, "response has no choices[0].message.content");
  EXPECT_EQ(reply.usage.prompt_tokens, 9);  // what the server billed is still reported
}

TEST_F(ChatClientTest, EmptyOrNullContentIsEmpty) {
  for (const char* body : {R"({"choices":[{"message":{"role":"assistant","content":""}}]})",
                           R"({"choices":[{"message":{"role":"assistant","content":null}}]})"}) {
    Always(200, body);
    ChatReply reply = Ask();
    EXPECT_EQ(reply.error.kind, Kind::kEmpty) << body;
    EXPECT_EQ(reply.error.message, "empty answer");
    EXPECT_EQ(reply.attempts, 1);
  }
}

TEST_F(ChatClientTest, SlowServerTimesOut) {
  server_.Answer([this](int, const httplib::Request&, httplib::Response& res) {
    server_.SleepUnlessStopping(5);
    res.set_content(AnswerBody("late"), "application/json");
  });
  ChatOptions options = Options();
  options.timeout_s = 0.5;
  options.retries = 1;
  auto start = std::chrono::steady_clock::now();
  ChatReply reply = Ask(options);
  EXPECT_EQ(reply.error.kind, Kind::kTimeout);
  EXPECT_NE(reply.error.message.find("within 0.5 s"), std::string::npos) << reply.error.message;
  EXPECT_EQ(reply.attempts, 2);  // timeouts are retried
  EXPECT_EQ(sleeps_.size(), 1u);
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(3));
}

TEST_F(ChatClientTest, RefusedConnectionIsTransport) {
  // A bound socket that never listens: connecting to its port is refused.
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(fd, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  socklen_t len = sizeof addr;
  ASSERT_EQ(getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len), 0);
  ChatOptions options = Options();
  options.base_url = "http://127.0.0.1:" + std::to_string(ntohs(addr.sin_port)) + "/v1/";
  options.retries = 2;
  ChatReply reply = Ask(options);
  close(fd);
  EXPECT_EQ(reply.error.kind, Kind::kTransport);
  EXPECT_EQ(reply.error.message.rfind("cannot reach http://127.0.0.1:", 0), 0u)
      << reply.error.message;
  EXPECT_EQ(reply.attempts, 3);
  EXPECT_EQ(sleeps_.size(), 2u);
}

TEST_F(ChatClientTest, UnsetKeyVariableIsAConfigError) {
  unsetenv(kKeyVar);
  ChatReply reply = Ask();
  EXPECT_EQ(reply.error.kind, Kind::kConfig);
  EXPECT_EQ(reply.error.message, std::string("environment variable ") + kKeyVar + " is not set");
  EXPECT_EQ(reply.attempts, 0);
  EXPECT_TRUE(server_.Seen().empty());
}

TEST_F(ChatClientTest, AnUnusableUrlIsAConfigErrorAndNotRetried) {
  ChatOptions options = Options();
  options.base_url = "ftp://127.0.0.1/v1";
  ChatReply reply = Ask(options);
  EXPECT_EQ(reply.error.kind, Kind::kConfig);
  EXPECT_EQ(reply.error.message.rfind("base_url ftp://127.0.0.1/v1/chat/completions", 0), 0u)
      << reply.error.message;
  EXPECT_EQ(reply.attempts, 1);
  EXPECT_TRUE(sleeps_.empty());
}

TEST_F(ChatClientTest, KeyEchoedByTheServerIsRedacted) {
  Always(401,
         std::string(R"({"error":{"message":"Incorrect API key provided: )") + kKey + R"("}})");
  ChatReply reply = Ask();  // Ask() checks the key is absent
  EXPECT_EQ(reply.error.http_status, 401);
  EXPECT_NE(reply.error.message.find("[redacted]"), std::string::npos) << reply.error.message;
}

TEST_F(ChatClientTest, UserInfoInTheUrlIsNotShown) {
  Always(404, "not here");
  ChatOptions options = Options();
  options.base_url = "http://user:hunter2@127.0.0.1:" + std::to_string(server_.port()) + "/v1";
  ChatReply reply = Ask(options);
  EXPECT_EQ(reply.error.kind, Kind::kHttp);
  EXPECT_EQ(reply.error.message.find("hunter2"), std::string::npos) << reply.error.message;
}

TEST_F(ChatClientTest, AnswersOver16MegabytesAreRefused) {
  Always(200, AnswerBody(std::string((16 << 20) + 10, 'a')));
  ChatReply reply = Ask();
  EXPECT_EQ(reply.error.kind, Kind::kMalformed);
  EXPECT_EQ(reply.error.message, "response larger than 16 MB");
  EXPECT_EQ(reply.attempts, 1);
}

TEST_F(ChatClientTest, UsageIsSummedOverAttempts) {
  server_.Answer([](int i, const httplib::Request&, httplib::Response& res) {
    res.status = i == 0 ? 502 : 200;
    res.set_content(AnswerBody("x", 10, i == 0 ? 0 : 2), "application/json");
  });
  ChatReply reply = Ask();
  ASSERT_TRUE(reply.ok);
  EXPECT_EQ(reply.usage.prompt_tokens, 20);
  EXPECT_EQ(reply.usage.completion_tokens, 2);
}

TEST(ChatErrorKindNameTest, NamesEveryKind) {
  EXPECT_EQ(ChatErrorKindName(Kind::kTransport), "transport");
  EXPECT_EQ(ChatErrorKindName(Kind::kTimeout), "timeout");
  EXPECT_EQ(ChatErrorKindName(Kind::kHttp), "http");
  EXPECT_EQ(ChatErrorKindName(Kind::kMalformed), "malformed");
  EXPECT_EQ(ChatErrorKindName(Kind::kEmpty), "empty");
  EXPECT_EQ(ChatErrorKindName(Kind::kConfig), "config");
}

}  // namespace
}  // namespace arbor::llm

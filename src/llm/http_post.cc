// PostJson (declared in llm/http_post.h): the libcurl adapter.
#include "llm/http_post.h"

#include <curl/curl.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <memory>
#include <mutex>
#include <string_view>

namespace arbor::llm {
namespace {

CURLcode GlobalInit() {
  static std::once_flag once;
  static CURLcode code = CURLE_OK;
  std::call_once(once, [] { code = curl_global_init(CURL_GLOBAL_DEFAULT); });
  return code;
}

struct BodySink {
  std::string* body;
  size_t max_bytes;
  bool overflow = false;
};

size_t OnBody(char* data, size_t size, size_t count, void* user) {
  auto* sink = static_cast<BodySink*>(user);
  size_t bytes = size * count;
  if (sink->body->size() + bytes > sink->max_bytes) {
    sink->overflow = true;
    return 0;  // anything but `bytes` makes libcurl abort the transfer
  }
  sink->body->append(data, bytes);
  return bytes;
}

bool StartsWithNoCase(std::string_view s, std::string_view prefix) {
  if (s.size() < prefix.size()) return false;
  for (size_t i = 0; i < prefix.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(s[i])) != prefix[i]) return false;
  }
  return true;
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front())) != 0) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back())) != 0) s.remove_suffix(1);
  return s;
}

// Keeps the Retry-After of the final response: every status line (a 100 Continue, say)
// starts a new header block and forgets the previous one.
size_t OnHeader(char* data, size_t size, size_t count, void* user) {
  auto* retry_after = static_cast<double*>(user);
  std::string_view line(data, size * count);
  constexpr std::string_view kRetryAfter = "retry-after:";
  if (StartsWithNoCase(line, "http/")) {
    *retry_after = -1;
  } else if (StartsWithNoCase(line, kRetryAfter)) {
    std::string_view value = Trim(line.substr(kRetryAfter.size()));
    double seconds = -1;
    auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), seconds);
    if (ec == std::errc() && end == value.data() + value.size() && seconds >= 0) {
      *retry_after = seconds;
    }
  }
  return size * count;
}

struct EasyDeleter {
  void operator()(CURL* h) const { curl_easy_cleanup(h); }
};
struct ListDeleter {
  void operator()(curl_slist* l) const { curl_slist_free_all(l); }
};

long Millis(double seconds) {  // NOLINT(google-runtime-int): curl's type
  return std::lround(seconds * 1000.0);
}

}  // namespace

HttpResponse PostJson(const HttpRequest& request) {
  HttpResponse response;
  if (CURLcode init = GlobalInit(); init != CURLE_OK) {
    response.error = std::string("libcurl initialisation failed: ") + curl_easy_strerror(init);
    return response;
  }
  std::unique_ptr<CURL, EasyDeleter> easy(curl_easy_init());
  if (!easy) {
    response.error = "libcurl could not create a handle";
    return response;
  }
  std::unique_ptr<curl_slist, ListDeleter> headers;
  for (const std::string& h : request.headers) {
    curl_slist* grown = curl_slist_append(headers.get(), h.c_str());
    if (grown == nullptr) {
      response.error = "libcurl could not allocate the request headers";
      return response;
    }
    (void)headers.release();
    headers.reset(grown);
  }
  std::array<char, CURL_ERROR_SIZE> errbuf{};
  BodySink sink{&response.body, request.max_body_bytes};
  CURL* h = easy.get();
  curl_easy_setopt(h, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(h, CURLOPT_PROTOCOLS_STR, "http,https");
  curl_easy_setopt(h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(h, CURLOPT_VERBOSE, 0L);
  curl_easy_setopt(h, CURLOPT_FOLLOWLOCATION, 0L);
  curl_easy_setopt(h, CURLOPT_ERRORBUFFER, errbuf.data());
  curl_easy_setopt(h, CURLOPT_POST, 1L);
  curl_easy_setopt(h, CURLOPT_POSTFIELDS, request.body.data());
  curl_easy_setopt(h, CURLOPT_POSTFIELDSIZE_LARGE, static_cast<curl_off_t>(request.body.size()));
  curl_easy_setopt(h, CURLOPT_HTTPHEADER, headers.get());
  curl_easy_setopt(h, CURLOPT_ACCEPT_ENCODING, "");  // whatever this libcurl can decode
  curl_easy_setopt(h, CURLOPT_WRITEFUNCTION, OnBody);
  curl_easy_setopt(h, CURLOPT_WRITEDATA, &sink);
  curl_easy_setopt(h, CURLOPT_HEADERFUNCTION, OnHeader);
  curl_easy_setopt(h, CURLOPT_HEADERDATA, &response.retry_after_s);
  double connect_s = request.connect_timeout_s;
  if (request.timeout_s > 0) {
    curl_easy_setopt(h, CURLOPT_TIMEOUT_MS, std::max(1L, Millis(request.timeout_s)));
    connect_s = std::min(connect_s, request.timeout_s);
  }
  if (connect_s > 0) {
    curl_easy_setopt(h, CURLOPT_CONNECTTIMEOUT_MS, std::max(1L, Millis(connect_s)));
  }

  CURLcode code = curl_easy_perform(h);
  if (sink.overflow) {
    response.outcome = HttpResponse::Outcome::kTooLarge;
    response.body.clear();
    return response;
  }
  if (code != CURLE_OK) {
    switch (code) {
      case CURLE_OPERATION_TIMEDOUT:
        response.outcome = HttpResponse::Outcome::kTimeout;
        break;
      case CURLE_UNSUPPORTED_PROTOCOL:
      case CURLE_URL_MALFORMAT:
        response.outcome = HttpResponse::Outcome::kBadUrl;
        break;
      default:
        response.outcome = HttpResponse::Outcome::kTransport;
    }
    response.error = errbuf[0] != '\0' ? errbuf.data() : curl_easy_strerror(code);
    response.body.clear();
    return response;
  }
  curl_easy_getinfo(h, CURLINFO_RESPONSE_CODE, &response.status);
  response.outcome = HttpResponse::Outcome::kOk;
  return response;
}

}  // namespace arbor::llm

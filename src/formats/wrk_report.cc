#include "formats/wrk_report.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <string>
#include <vector>

#include "util/strings.h"

namespace arbor {
namespace {

// The leading number of `s` and the rest after it; nullopt when `s` does not start with one.
std::optional<std::pair<double, std::string_view>> LeadingNumber(std::string_view s) {
  size_t end = 0;
  while (end < s.size() && (std::isdigit(static_cast<unsigned char>(s[end])) != 0 ||
                            s[end] == '.' || (end == 0 && s[end] == '-'))) {
    ++end;
  }
  double v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + end, v);
  if (end == 0 || ec != std::errc() || ptr != s.data() + end || !std::isfinite(v)) {
    return std::nullopt;
  }
  return std::make_pair(v, s.substr(end));
}

// Blank-separated words of a line.
std::vector<std::string_view> Words(std::string_view line) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) out.push_back(line.substr(start, i - start));
  }
  return out;
}

std::optional<double> WholeNumber(std::string_view s) {
  auto n = LeadingNumber(s);
  if (!n || !n->second.empty()) return std::nullopt;
  return n->first;
}

// "Socket errors: connect 0, read 12, write 0, timeout 3" -> 15.
double SumOfCounts(std::string_view rest) {
  double sum = 0;
  for (std::string_view w : Words(rest)) {
    if (!w.empty() && w.back() == ',') w.remove_suffix(1);
    if (auto v = WholeNumber(w)) sum += *v;
  }
  return sum;
}

}  // namespace

std::optional<double> ParseWrkTimeMs(std::string_view text) {
  auto n = LeadingNumber(text);
  if (!n) return std::nullopt;
  const std::string_view unit = n->second;
  if (unit == "us") return n->first / 1000.0;
  if (unit == "ms") return n->first;
  if (unit == "s") return n->first * 1000.0;
  if (unit == "m") return n->first * 60'000.0;
  if (unit == "h") return n->first * 3'600'000.0;
  return std::nullopt;
}

std::optional<double> ParseWrkBytes(std::string_view text) {
  auto n = LeadingNumber(text);
  if (!n) return std::nullopt;
  static constexpr std::string_view kUnits[] = {"B", "KB", "MB", "GB", "TB", "PB"};
  double scale = 1;
  for (std::string_view u : kUnits) {
    if (n->second == u) return n->first * scale;
    scale *= 1024;
  }
  return std::nullopt;
}

std::optional<WrkReport> ParseWrkReport(std::string_view text) {
  WrkReport report;
  bool have_rate = false;
  bool in_distribution = false;
  for (const std::string& raw : Split(text, '\n')) {
    const std::string line = Trim(raw);
    const std::vector<std::string_view> w = Words(line);
    if (w.empty()) continue;
    if (StartsWith(line, "Running ") && line.find(" test @ ") != std::string::npos) {
      report = WrkReport{};  // a new report: only the last one counts
      have_rate = false;
      in_distribution = false;
      continue;
    }
    if (line == "Latency Distribution") {
      in_distribution = true;
      continue;
    }
    if (in_distribution && w.size() == 2 && EndsWith(w[0], "%")) {
      auto p = WholeNumber(w[0].substr(0, w[0].size() - 1));
      auto ms = ParseWrkTimeMs(w[1]);
      if (p && ms) {
        report.latency_percentiles_ms[*p] = *ms;
        continue;
      }
    }
    in_distribution = false;
    if (w[0] == "Latency" && w.size() >= 4) {
      report.latency_avg_ms = ParseWrkTimeMs(w[1]);
      report.latency_stdev_ms = ParseWrkTimeMs(w[2]);
      report.latency_max_ms = ParseWrkTimeMs(w[3]);
    } else if (w[0] == "Requests/sec:" && w.size() == 2) {
      if (auto v = WholeNumber(w[1])) {
        report.requests_per_sec = *v;
        have_rate = true;
      }
    } else if (w[0] == "Transfer/sec:" && w.size() == 2) {
      report.transfer_per_sec = ParseWrkBytes(w[1]);
    } else if (w.size() >= 3 && w[1] == "requests" && w[2] == "in") {
      report.requests = WholeNumber(w[0]);
    } else if (StartsWith(line, "Non-2xx or 3xx responses:")) {
      report.non_2xx_3xx = WholeNumber(w.back()).value_or(0);
    } else if (StartsWith(line, "Socket errors:")) {
      report.socket_errors = SumOfCounts(std::string_view(line).substr(14));
    }
  }
  if (!have_rate) return std::nullopt;
  return report;
}

}  // namespace arbor

// chrome-trace: Chrome trace-event JSON (torch.profiler, Perfetto JSON, rocprof/nsys exports).
//
// Read: complete events ("ph": "X", with "dur") and begin/end pairs ("B" then "E" on the same
// track; a "B" still open at the end of the trace ends at the trace's last timestamp). A track
// is a (pid, tid) pair. On each track the events are sorted by start (longer first on ties)
// and nested: an event's SELF time is its duration minus the part of it its direct children
// cover, so nested time is never counted twice. Self times are summed per name.
//
// GPU and CPU tracks are kept apart. A track is a GPU track when any of its events has a "cat"
// with a comma-separated part containing "kernel" or "gpu" or equal to "cuda" or "hip" (any
// case; host API categories such as "cuda_runtime" stay CPU), or when metadata ("ph": "M")
// names its process with "GPU" in it ("process_name") or its thread with "stream" in it
// ("thread_name"). GPU names get the layer hint "kernel"; a name seen on both kinds of track is
// reported twice, the GPU one as "NAME [gpu]". `tracks` picks which tracks count; the total is
// the summed self time of the counted tracks, so shares sum to 1.
#include <algorithm>
#include <cctype>
#include <exception>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "formats/import_internal.h"
#include "util/strings.h"

namespace arbor::import_internal {
namespace {

using Json = nlohmann::json;

std::string Lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool IsGpuCategory(std::string_view cat) {
  for (const std::string& part : Split(Lower(cat), ',')) {
    std::string p = Trim(part);
    if (p.find("kernel") != std::string::npos || p.find("gpu") != std::string::npos ||
        p == "cuda" || p == "hip") {
      return true;
    }
  }
  return false;
}

std::string IdOf(const Json& event, const char* key) {
  auto it = event.find(key);
  if (it == event.end() || it->is_null()) return "";
  return it->is_string() ? it->get<std::string>() : it->dump();
}

std::string StringField(const Json& event, const char* key) {
  auto it = event.find(key);
  return it != event.end() && it->is_string() ? it->get<std::string>() : "";
}

struct Interval {
  std::string name;
  double start = 0;
  double end = 0;
  size_t index = 0;  // event index, for stable ordering
  double self = 0;
};

struct Track {
  std::vector<Interval> intervals;
  std::vector<Interval> open;  // "B" events not yet ended
  bool gpu = false;
};

Error Fail(const std::string& msg) { return MakeError("chrome-trace: " + msg); }

Result<Json> ParseTrace(std::string_view text) {
  Json doc = Json::parse(text.begin(), text.end(), nullptr, /*allow_exceptions=*/false);
  if (!doc.is_discarded()) return doc;
  // The JSON Array Format may lack its closing ']' (a program that died mid-trace).
  std::string_view t = TrimBlank(text);
  if (!t.empty() && t[0] == '[') {
    while (!t.empty() && (t.back() == ',' || std::isspace(static_cast<unsigned char>(t.back())))) {
      t.remove_suffix(1);
    }
    std::string closed = std::string(t) + "]";
    doc = Json::parse(closed, nullptr, /*allow_exceptions=*/false);
    if (!doc.is_discarded()) return doc;
  }
  try {
    Json ignored = Json::parse(text.begin(), text.end());
    (void)ignored;
  } catch (const std::exception& e) {
    std::string what = e.what();
    size_t close = what.find("] ");
    if (StartsWith(what, "[json.exception") && close != std::string::npos) {
      what = what.substr(close + 2);
    }
    return Fail("not valid JSON: " + what);
  }
  return Fail("not valid JSON");
}

// Self time of each interval of one track.
void ComputeSelf(std::vector<Interval>* intervals) {
  std::sort(intervals->begin(), intervals->end(), [](const Interval& a, const Interval& b) {
    if (a.start != b.start) return a.start < b.start;
    if (a.end != b.end) return a.end > b.end;
    return a.index < b.index;
  });
  std::vector<Interval*> stack;
  for (Interval& iv : *intervals) {
    iv.self = iv.end - iv.start;
    while (!stack.empty() && stack.back()->end <= iv.start) stack.pop_back();
    if (!stack.empty()) stack.back()->self -= std::min(iv.end, stack.back()->end) - iv.start;
    stack.push_back(&iv);
  }
  for (Interval& iv : *intervals) iv.self = std::max(0.0, iv.self);
}

}  // namespace

Result<RawProfile> ImportChromeTrace(std::string_view text, TraceTracks which) {
  if (TrimBlank(text).empty()) return Fail("the profile is empty");
  ARBOR_TRY_ASSIGN(Json doc, ParseTrace(text));
  const Json* events = &doc;
  if (doc.is_object()) {
    auto it = doc.find("traceEvents");
    if (it == doc.end() || !it->is_array()) {
      return Fail("expected a JSON array of events or an object with a \"traceEvents\" array");
    }
    events = &*it;
  } else if (!doc.is_array()) {
    return Fail("expected a JSON array of events or an object with a \"traceEvents\" array");
  }

  std::map<std::pair<std::string, std::string>, Track> tracks;
  std::set<std::string> gpu_pids;
  double last_ts = 0;
  for (size_t i = 0; i < events->size(); ++i) {
    const Json& ev = (*events)[i];
    std::string at = "event " + std::to_string(i);
    if (!ev.is_object()) return Fail(at + " is not an object");
    std::string ph = StringField(ev, "ph");
    std::string pid = IdOf(ev, "pid");
    std::string tid = IdOf(ev, "tid");
    if (ph == "M") {
      auto args = ev.find("args");
      std::string label =
          args != ev.end() && args->is_object() ? Lower(StringField(*args, "name")) : "";
      std::string kind = StringField(ev, "name");
      if (kind == "process_name" && label.find("gpu") != std::string::npos) gpu_pids.insert(pid);
      if (kind == "thread_name" && label.find("stream") != std::string::npos) {
        tracks[{pid, tid}].gpu = true;
      }
      continue;
    }
    if (ph != "X" && ph != "B" && ph != "E") continue;  // instants, counters, flows, async
    auto ts = ev.find("ts");
    if (ts == ev.end() || !ts->is_number() || !std::isfinite(ts->get<double>())) {
      return Fail(at + " has ph '" + ph + "' without a numeric ts");
    }
    double start = ts->get<double>();
    Track& track = tracks[{pid, tid}];
    if (IsGpuCategory(StringField(ev, "cat"))) track.gpu = true;
    if (ph == "E") {
      if (track.open.empty()) return Fail(at + " has ph 'E' with no open 'B' on its track");
      Interval iv = std::move(track.open.back());
      track.open.pop_back();
      if (start < iv.start)
        return Fail(at + " has ph 'E' before its 'B' (ts " + FormatDouble(start) + ")");
      iv.end = start;
      track.intervals.push_back(std::move(iv));
      last_ts = std::max(last_ts, start);
      continue;
    }
    auto name = ev.find("name");
    if (name == ev.end() || !name->is_string() || name->get_ref<const std::string&>().empty()) {
      return Fail(at + " has ph '" + ph + "' without a name");
    }
    Interval iv{name->get<std::string>(), start, start, i, 0};
    if (ph == "B") {
      track.open.push_back(std::move(iv));
      last_ts = std::max(last_ts, start);
      continue;
    }
    auto dur = ev.find("dur");
    if (dur == ev.end() || !dur->is_number()) return Fail(at + " has ph 'X' without dur");
    double d = dur->get<double>();
    if (!std::isfinite(d) || d < 0) return Fail(at + " has a negative or non-finite dur");
    iv.end = start + d;
    last_ts = std::max(last_ts, iv.end);
    track.intervals.push_back(std::move(iv));
  }

  std::set<std::string> cpu_names;
  double first = 0, last = 0, total = 0;
  bool any = false, any_interval = false;
  for (auto& [key, track] : tracks) {
    for (Interval& iv : track.open) {
      iv.end = std::max(iv.start, last_ts);
      track.intervals.push_back(std::move(iv));
    }
    track.open.clear();
    if (gpu_pids.count(key.first)) track.gpu = true;
    ComputeSelf(&track.intervals);
    any_interval = any_interval || !track.intervals.empty();
    if (!track.gpu) {
      for (const Interval& iv : track.intervals) cpu_names.insert(iv.name);
    }
  }
  if (!any_interval) return Fail("no complete ('X') or begin/end ('B'/'E') events found");

  RawAccumulator acc;
  for (const auto& [key, track] : tracks) {
    if ((which == TraceTracks::kCpu && track.gpu) || (which == TraceTracks::kGpu && !track.gpu)) {
      continue;
    }
    for (const Interval& iv : track.intervals) {
      if (!any || iv.start < first) first = iv.start;
      if (!any || iv.end > last) last = iv.end;
      any = true;
      total += iv.self;
      if (!track.gpu) {
        acc.Add(iv.name, iv.self);
      } else {
        acc.Add(cpu_names.count(iv.name) ? iv.name + " [gpu]" : iv.name, iv.self, "kernel");
      }
    }
  }
  if (!any) {
    return Fail(std::string("no events on ") + (which == TraceTracks::kGpu ? "GPU" : "CPU") +
                " tracks (tracks = \"" + (which == TraceTracks::kGpu ? "gpu" : "cpu") + "\")");
  }
  return acc.Take(total, (last - first) / 1e6);
}

}  // namespace arbor::import_internal

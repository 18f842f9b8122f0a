#include "app/kb_commands.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "arbor/exit_codes.h"
#include "exec/runner.h"
#include "store/kb_json.h"
#include "util/strings.h"

namespace arbor {
namespace {

std::string Env(const char* name) {
  const char* v = std::getenv(name);
  return v == nullptr ? "" : v;
}

Result<std::string> ResolvePath(const KbOptions& options) {
  std::string path = options.kb.empty() ? KbPath("") : options.kb;
  if (path.empty()) {
    return MakeError("cannot tell where the knowledge base is: pass --kb PATH or set ARBOR_KB",
                     kExitState);
  }
  return path;
}

// Read-only: a missing file is a state error ("no knowledge base at PATH"), not a store one.
Result<std::unique_ptr<KbStore>> OpenKb(const KbOptions& options, OpenMode mode) {
  ARBOR_TRY_ASSIGN(auto path, ResolvePath(options));
  std::error_code ec;
  if (mode == OpenMode::kReadOnly && !std::filesystem::exists(path, ec)) {
    return MakeError(
        "no knowledge base at " + path + " (campaigns create it; or `arbor kb import FILE`)",
        kExitState);
  }
  auto kb = KbStore::Open(path, mode);
  if (!kb.ok()) return MakeError(kb.error().message, kExitStore);
  return kb;
}

Error StoreError(const Error& e) { return MakeError(e.message, kExitStore); }

std::string Percent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%+.1f%%", fraction * 100);
  return buf;
}

std::string GainText(const KbEntry& e) {
  if (!e.gain) return "-";
  std::string out = Percent(*e.gain);
  if (e.ci_low && e.ci_high) {
    out += " (x" + FormatDouble(*e.ci_low, 3) + "-" + FormatDouble(*e.ci_high, 3) + ")";
  }
  return out;
}

std::string ShortHardware(const HardwareSignature& h) {
  if (h.cpu_model.empty() && h.cores == 0) return "-";
  std::string cpu = h.cpu_model.size() > 28 ? h.cpu_model.substr(0, 27) + "~" : h.cpu_model;
  std::string out = cpu + " " + std::to_string(h.cores) + "c";
  if (!h.gpu.empty()) out += " + " + h.gpu;
  return out;
}

std::string Show(const KbEntry& e) {
  std::string out = "entry #" + std::to_string(e.id) + "  " + e.CandidateKey() + "  " + e.outcome +
                    (e.controlled ? " (controlled)" : " (uncontrolled)") + "\n";
  auto field = [&](const char* name, const std::string& value) {
    char buf[24];
    std::snprintf(buf, sizeof buf, "  %-16s ", name);
    out += buf + value + "\n";
  };
  auto number = [](const std::optional<double>& v) {
    return v ? FormatDouble(*v, 6) : std::string("-");
  };
  field("uid", e.uid);
  field("campaign", e.campaign + " (" + e.campaign_uid + "), node " + std::to_string(e.node));
  field("action", e.action_id);
  field("value", e.value.empty() ? "-" : e.value);
  field("category", e.category + " (layer " + e.layer + ")");
  field("content hash", e.content_hash);
  field("workload", EncodeWorkload(e.workload));
  field("hardware", e.hardware.Encode());
  field("path hash", e.path_hash);
  field("gain", GainText(e));
  field("accuracy", e.accuracy_failure ? "failed" : "ok");
  field("prior speedup", FormatDouble(e.prior_speedup, 6));
  field("target share", FormatDouble(e.target_share, 6));
  field("implied speedup", number(e.implied_speedup));
  field("cost", FormatDouble(e.cost_s, 6) + " s");
  field("rca", e.rca.empty() ? "-" : e.rca);
  char when[32] = "-";
  if (e.recorded_at > 0) {
    const time_t t = static_cast<time_t>(e.recorded_at);
    struct tm tm {};
    gmtime_r(&t, &tm);
    std::strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", &tm);
  }
  field("recorded", when);
  field("superseded by", e.superseded_by ? "#" + std::to_string(e.superseded_by) : "-");
  field("conflict", e.conflict.empty() ? "-" : e.conflict);
  out += "  lesson\n";
  for (const std::string& line : Split(e.lesson.empty() ? "-" : e.lesson, '\n')) {
    out += "    " + line + "\n";
  }
  return out;
}

// Writes next to `path` and renames: a reader never sees half an export.
Status WriteAtomically(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream f(tmp, std::ios::binary | std::ios::trunc);
    f << text;
    f.flush();
    if (!f) return MakeError("cannot write " + tmp, kExitState);
  }
  std::error_code ec;
  std::filesystem::rename(tmp, path, ec);
  if (ec) return MakeError("cannot write " + path + ": " + ec.message(), kExitState);
  return {};
}

}  // namespace

std::string KbPath(const std::string& configured) {
  if (!configured.empty()) return configured;
  if (std::string env = Env("ARBOR_KB"); !env.empty()) return env;
  // XDG: a relative XDG_DATA_HOME is invalid and must be ignored.
  if (std::string xdg = Env("XDG_DATA_HOME"); !xdg.empty() && xdg.front() == '/') {
    return xdg + "/arbor/kb.db";
  }
  if (std::string home = Env("HOME"); !home.empty()) return home + "/.local/share/arbor/kb.db";
  return "";
}

std::string KbListLine(const KbEntry& e) {
  char buf[512];
  std::snprintf(buf, sizeof buf, "#%-5lld %-8s %-28s %-22s %-12s %-12s %s",
                static_cast<long long>(e.id), e.outcome.c_str(), e.CandidateKey().c_str(),
                GainText(e).c_str(), e.category.c_str(), e.campaign.c_str(),
                ShortHardware(e.hardware).c_str());
  std::string out = buf;
  if (!e.controlled) out += "  [uncontrolled]";
  if (e.superseded_by != 0) out += "  [superseded by #" + std::to_string(e.superseded_by) + "]";
  if (!e.conflict.empty()) out += "  [conflict]";
  return out;
}

Result<std::string> KbList(const KbOptions& options) {
  ARBOR_TRY_ASSIGN(auto kb, OpenKb(options, OpenMode::kReadOnly));
  auto entries = kb->List(options.filter);
  if (!entries.ok()) return StoreError(entries.error());
  if (options.json) return ExportJsonLines(*entries);
  if (entries->empty()) return std::string("no entries\n");
  std::string out;
  for (const KbEntry& e : *entries) out += KbListLine(e) + "\n";
  return out;
}

Result<std::string> KbShow(const KbOptions& options, int64_t id) {
  ARBOR_TRY_ASSIGN(auto kb, OpenKb(options, OpenMode::kReadOnly));
  auto entry = kb->Get(id);
  if (!entry.ok()) return StoreError(entry.error());
  if (!entry->has_value()) {
    return MakeError("no entry #" + std::to_string(id) + " in " + kb->path(), kExitState);
  }
  if (options.json) return KbEntryToJson(**entry).dump(2) + "\n";
  return Show(**entry);
}

Result<std::string> KbExport(const KbOptions& options) {
  ARBOR_TRY_ASSIGN(auto kb, OpenKb(options, OpenMode::kReadOnly));
  auto entries = kb->List({});
  if (!entries.ok()) return StoreError(entries.error());
  std::string text = ExportJsonLines(*entries);
  if (options.out.empty()) return text;
  ARBOR_TRY(WriteAtomically(options.out, text));
  return "exported " + std::to_string(entries->size()) + " entries to " + options.out + "\n";
}

Result<std::string> KbImport(const KbOptions& options, const std::string& file) {
  auto text = ReadFileBounded(file, 1LL << 30);
  if (!text.ok()) return MakeError(text.error().message, kExitConfig);
  // Parsed whole before the store is touched: a malformed file imports nothing.
  auto entries = ParseJsonLines(*text);
  if (!entries.ok()) return MakeError(file + ": " + entries.error().message, kExitConfig);
  ARBOR_TRY_ASSIGN(auto kb, OpenKb(options, OpenMode::kReadWrite));
  auto r = kb->Import(*entries);
  if (!r.ok()) return StoreError(r.error());
  return "imported " + std::to_string(r->inserted) + " entries, " + std::to_string(r->duplicates) +
         " already present\n";
}

Result<std::string> KbForget(const KbOptions& options) {
  const bool by_ids = !options.ids.empty();
  const bool by_filter = !options.filter.empty();
  if (static_cast<int>(by_ids) + static_cast<int>(by_filter) + static_cast<int>(options.all) != 1) {
    return MakeError(
        "kb forget: name what to forget: entry ids, or --campaign/--action, or --all (one of "
        "them)",
        kExitUsage);
  }
  // Forgetting in a file that does not exist must not create it.
  ARBOR_TRY_ASSIGN(auto probe, OpenKb(options, OpenMode::kReadOnly));
  probe.reset();
  ARBOR_TRY_ASSIGN(auto kb, OpenKb(options, OpenMode::kReadWrite));
  auto n = by_ids      ? kb->ForgetIds(options.ids)
           : by_filter ? kb->Forget(options.filter)
                       : kb->ForgetAll();
  if (!n.ok()) return StoreError(n.error());
  return "forgot " + std::to_string(*n) + " entries\n";
}

}  // namespace arbor

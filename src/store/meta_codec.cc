#include "store/meta_codec.h"

#include <charconv>
#include <string_view>
#include <type_traits>
#include <variant>

namespace arbor::meta_codec {
namespace {

// One entry per persisted field: the single place that names each key.
using Member = std::variant<std::string CampaignMeta::*, unsigned long long CampaignMeta::*,
                            double CampaignMeta::*, int64_t CampaignMeta::*,
                            CampaignState CampaignMeta::*, StopReason CampaignMeta::*>;
struct Field {
  const char* key;  // without kPrefix
  Member member;
};
const Field kFields[] = {
    {"name", &CampaignMeta::name},
    {"seed", &CampaignMeta::seed},
    {"spec_hash", &CampaignMeta::spec_hash},
    {"config", &CampaignMeta::config},
    {"state", &CampaignMeta::state},
    {"stop_reason", &CampaignMeta::stop_reason},
    {"elapsed_s", &CampaignMeta::elapsed_s},
    {"explore_boost", &CampaignMeta::explore_boost},
    {"next_seq", &CampaignMeta::next_seq},
    {"noise_cv", &CampaignMeta::noise_cv},
    {"noise_mde", &CampaignMeta::noise_mde},
    {"repetitions", &CampaignMeta::repetitions},
    {"no_critic", &CampaignMeta::no_critic},
    {"uid", &CampaignMeta::uid},
    {"kb_snapshot", &CampaignMeta::kb_snapshot},
    {"kb_time", &CampaignMeta::kb_time},
    {"budget_nodes", &CampaignMeta::budget_nodes},
    {"budget_time_s", &CampaignMeta::budget_time_s},
    {"llm_prompt_tokens", &CampaignMeta::llm_prompt_tokens},
    {"llm_completion_tokens", &CampaignMeta::llm_completion_tokens},
    {"llm_cost", &CampaignMeta::llm_cost},
    {"proposed_at", &CampaignMeta::proposed_at},
    {"final_node", &CampaignMeta::final_node},
    {"final_speedup", &CampaignMeta::final_speedup},
    {"final_ci_low", &CampaignMeta::final_ci_low},
    {"final_ci_high", &CampaignMeta::final_ci_high},
};

template <typename T>
std::string FormatNumber(T v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  return {buf, end};
}

template <typename T>
bool ParseNumber(std::string_view s, T* out) {
  const char* end = s.data() + s.size();
  auto [p, ec] = std::from_chars(s.data(), end, *out);
  return !s.empty() && ec == std::errc() && p == end;
}

// The vocabularies are stored by name; a name this build does not know (one an older build
// wrote) reads as kUnknown, so an old store still opens.
std::string FormatWord(CampaignState s) { return std::string(CampaignStateName(s)); }
std::string FormatWord(StopReason r) { return std::string(StopReasonName(r)); }
void ParseWord(std::string_view text, CampaignState* out) {
  *out = ParseCampaignState(text).value_or(CampaignState::kUnknown);
}
void ParseWord(std::string_view text, StopReason* out) {
  *out = ParseStopReason(text).value_or(StopReason::kUnknown);
}

template <typename M>
constexpr bool kIsWord = std::is_same_v<M, CampaignState CampaignMeta::*> ||
                         std::is_same_v<M, StopReason CampaignMeta::*>;

std::string FormatField(const CampaignMeta& meta, const Member& member) {
  return std::visit(
      [&](auto m) -> std::string {
        if constexpr (std::is_same_v<decltype(m), std::string CampaignMeta::*>) {
          return meta.*m;
        } else if constexpr (kIsWord<decltype(m)>) {
          return FormatWord(meta.*m);
        } else {
          return FormatNumber(meta.*m);
        }
      },
      member);
}

bool ParseField(std::string_view text, const Member& member, CampaignMeta* meta) {
  return std::visit(
      [&](auto m) -> bool {
        if constexpr (std::is_same_v<decltype(m), std::string CampaignMeta::*>) {
          meta->*m = std::string(text);
          return true;
        } else if constexpr (kIsWord<decltype(m)>) {
          ParseWord(text, &(meta->*m));
          return true;
        } else {
          return ParseNumber(text, &(meta->*m));
        }
      },
      member);
}

}  // namespace

Rows Encode(const CampaignMeta& meta) {
  Rows rows;
  rows.reserve(std::size(kFields));
  for (const auto& f : kFields) {
    rows.emplace_back(std::string(kPrefix) + f.key, FormatField(meta, f.member));
  }
  return rows;
}

Result<std::optional<CampaignMeta>> Decode(const Rows& rows) {
  CampaignMeta meta;
  bool any = false;
  for (const auto& [key, value] : rows) {
    std::string_view k = key;
    if (!k.starts_with(kPrefix)) continue;
    k.remove_prefix(kPrefix.size());
    any = true;
    for (const auto& f : kFields) {
      if (k != f.key) continue;
      if (!ParseField(value, f.member, &meta)) {
        return MakeError("campaign meta '" + key + "' has a malformed value '" + value + "'");
      }
    }
  }
  if (!any) return std::optional<CampaignMeta>();
  return std::optional<CampaignMeta>(std::move(meta));
}

}  // namespace arbor::meta_codec

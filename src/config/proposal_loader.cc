#include "config/proposal_loader.h"

#include <toml++/toml.h>

#include <algorithm>
#include <filesystem>
#include <vector>

#include "config/action_loader.h"
#include "config/toml_reader.h"
#include "util/escape.h"
#include "util/strings.h"

namespace arbor {

namespace {

using config_internal::Section;

// The reader's messages start with "<file>:<line>:<column>: "; the positions are in text we
// generated, so only the file name (the proposal's name) is kept.
Error WithoutPosition(const std::string& source_name, const Error& error) {
  std::string message = error.message;
  if (StartsWith(message, source_name + ":")) {
    size_t rest = source_name.size() + 1;
    size_t end = message.find(": ", rest);
    if (end != std::string::npos) message = message.substr(end + 2);
  }
  return MakeError(source_name + ": " + message);
}

// Kinds a specialist may not propose. They are refused before the reader runs, so a proposed
// patch is never resolved against the disk.
Status CheckKindAllowed(const std::string& source_name, const toml::table& action) {
  const toml::table* apply = action["apply"].as_table();
  if (apply == nullptr) return {};
  // `run` would let a model choose an arbitrary shell command and `patch` an arbitrary file on
  // disk; a specialist that wants code changed proposes an `agent` action instead.
  for (const char* kind : {"run", "patch"}) {
    if (apply->contains(kind)) {
      return MakeError(source_name + ": apply kind '" + kind +
                       "' is not accepted from a specialist; expected env, append or agent");
    }
  }
  return {};
}

Error SyntaxError(const std::string& source_name, std::string_view description) {
  std::string text(description);
  for (char& c : text) {
    if (c == '\n' || c == '\r') c = ' ';
  }
  return MakeError(source_name + ": not a TOML action: " + text);
}

// ParseProposedAction before the control characters of quoted input are escaped in its error.
Result<ActionSpec> ParseProposal(std::string_view toml_text, const std::string& source_name,
                                 const CampaignSpec& spec, const std::set<std::string>& known_ids) {
  toml::table document;
#if TOML_EXCEPTIONS
  try {
    document = toml::parse(toml_text, std::string_view(source_name));
  } catch (const toml::parse_error& e) {
    return SyntaxError(source_name, e.description());
  }
#else
  toml::parse_result parsed = toml::parse(toml_text, std::string_view(source_name));
  if (!parsed) {
    return SyntaxError(source_name, parsed.error().description());
  }
  document = std::move(parsed).table();
#endif
  const toml::array* tables = document["action"].as_array();
  if (document.size() != 1 || tables == nullptr || tables->size() != 1 ||
      !tables->get(0)->is_table()) {
    return MakeError(source_name + ": expected exactly one [[action]] table");
  }
  ARBOR_TRY(CheckKindAllowed(source_name, *tables->get(0)->as_table()));

  std::vector<std::string> external;
  for (const ActionSpec& a : spec.actions) external.push_back(a.id);
  external.insert(external.end(), known_ids.begin(), known_ids.end());
  std::string base_dir = spec.file.empty()
                             ? std::string("/")
                             : std::filesystem::path(spec.file).parent_path().string();
  Section root(source_name, document, "", "at the top level");
  std::vector<ActionSpec> actions;
  if (Status read = config_internal::ReadActions(root, base_dir, &actions, external); !read) {
    return WithoutPosition(source_name, read.error());
  }
  ActionSpec action = std::move(actions.front());
  action.line = 0;
  if (std::find(external.begin(), external.end(), action.id) != external.end()) {
    return MakeError(source_name + ": action id '" + action.id +
                     "' is already known; expected a new id");
  }
  if (action.apply.kind == ApplySpec::Kind::kAgent &&
      spec.specialists.count(action.apply.agent) == 0) {
    return MakeError(source_name + ": agent domain '" + action.apply.agent +
                     "' has no [specialists." + action.apply.agent +
                     "]; expected a configured domain");
  }
  return action;
}

}  // namespace

Result<ActionSpec> ParseProposedAction(std::string_view toml_text, const std::string& source_name,
                                       const CampaignSpec& spec,
                                       const std::set<std::string>& known_ids) {
  // A proposal's id or domain comes from a model and may hold a newline: escaped here, once.
  Result<ActionSpec> action = ParseProposal(toml_text, source_name, spec, known_ids);
  if (!action.ok()) return MakeError(EscapeControlChars(action.error().message));
  return action;
}

}  // namespace arbor

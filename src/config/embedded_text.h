// Text files compiled into the binary by cmake/EmbedText.cmake.
#pragma once

#include <span>
#include <string_view>

namespace arbor {

struct EmbeddedText {
  std::string_view name;  // the file's name, "runtime.toml"
  std::string_view text;
};

// actions/*.toml, sorted by name (actions/README.md): the starter action catalogue.
std::span<const EmbeddedText> StarterCatalogueFiles();

}  // namespace arbor

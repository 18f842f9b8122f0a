// Name tables for enums: one array of {value, name} pairs per vocabulary keeps its printer and
// its parser in lockstep. The names are stored, printed and parsed, so they never change once
// released. A linear scan: every table has a handful of entries.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>
#include <utility>

namespace arbor {

template <typename E, size_t N>
using NameTable = std::array<std::pair<E, std::string_view>, N>;

// The name of `e`, or "unknown" for a value the table does not list.
template <typename E, size_t N>
constexpr std::string_view NameIn(const NameTable<E, N>& table, E e) {
  for (const auto& [value, name] : table) {
    if (value == e) return name;
  }
  return "unknown";
}

template <typename E, size_t N>
constexpr std::optional<E> ParseIn(const NameTable<E, N>& table, std::string_view s) {
  for (const auto& [value, name] : table) {
    if (name == s) return value;
  }
  return std::nullopt;
}

}  // namespace arbor

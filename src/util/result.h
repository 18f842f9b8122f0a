// Result<T>: the value of an operation that could not even be tried, or its Error.
//
// A failed build, crash or regression of a candidate is an *outcome* (data, stored on the
// node), never an Error. Error is for "the store could not be opened", "the campaign file is
// malformed", "git is not installed". g++ 12 has no std::expected, so this is a small variant.
#pragma once

#include <string>
#include <utility>
#include <variant>

#include "util/check.h"

namespace arbor {

struct Error {
  std::string message;  // one line, names what was wrong and where
  int code = 0;         // optional classification for the CLI's exit code (0: unclassified)
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}      // NOLINT(google-explicit-constructor)
  Result(Error error) : v_(std::move(error)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return v_.index() == 0; }
  explicit operator bool() const { return ok(); }

  T& value() & {
    ARBOR_CHECK(ok(), "Result::value() on error: " + std::get<1>(v_).message);
    return std::get<0>(v_);
  }
  const T& value() const& {
    ARBOR_CHECK(ok(), "Result::value() on error: " + std::get<1>(v_).message);
    return std::get<0>(v_);
  }
  T&& value() && {
    ARBOR_CHECK(ok(), "Result::value() on error: " + std::get<1>(v_).message);
    return std::get<0>(std::move(v_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }

  const Error& error() const {
    ARBOR_CHECK(!ok(), "Result::error() on a value");
    return std::get<1>(v_);
  }

 private:
  std::variant<T, Error> v_;
};

// Result<void>: success or an Error.
template <>
class [[nodiscard]] Result<void> {
 public:
  Result() = default;
  Result(Error error) : error_(std::move(error)), ok_(false) {}  // NOLINT
  bool ok() const { return ok_; }
  explicit operator bool() const { return ok_; }
  const Error& error() const {
    ARBOR_CHECK(!ok_, "Result<void>::error() on success");
    return error_;
  }

 private:
  Error error_;
  bool ok_ = true;
};

using Status = Result<void>;

inline Error MakeError(std::string message, int code = 0) {
  return Error{std::move(message), code};
}

}  // namespace arbor

// Propagates an error from an expression returning Result<...> / Status.
#define ARBOR_TRY(expr)                                  \
  do {                                                   \
    auto arbor_try_r_ = (expr);                          \
    if (!arbor_try_r_.ok()) return arbor_try_r_.error(); \
  } while (0)

// Propagates an error from an expression returning Result<T>, else assigns its value:
//   ARBOR_TRY_ASSIGN(const bool built, EnsureBuilt(node));
// A statement (it declares a temporary in the enclosing scope), not an expression.
#define ARBOR_TRY_ASSIGN(lhs, expr) \
  ARBOR_TRY_ASSIGN_IMPL_(ARBOR_TRY_CONCAT_(arbor_try_v_, __LINE__), lhs, expr)
#define ARBOR_TRY_CONCAT_(a, b) ARBOR_TRY_CONCAT2_(a, b)
#define ARBOR_TRY_CONCAT2_(a, b) a##b
#define ARBOR_TRY_ASSIGN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                           \
  if (!tmp.ok()) return tmp.error();           \
  lhs = std::move(*tmp)

// UniqueFd: owns one file descriptor and closes it. Internal to exec/.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <utility>

namespace arbor {

class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() { reset(); }
  UniqueFd(UniqueFd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept {
    if (this != &o) {
      reset();
      fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;

  int get() const { return fd_; }
  bool valid() const { return fd_ >= 0; }
  void reset() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }
  // The same file on a close-on-exec descriptor >= 3 (a parent started with a closed stdin
  // must not hand out fd 0 for a pipe that the child then dup2()s over).
  UniqueFd AboveStdio() && {
    if (fd_ < 0 || fd_ > 2) return std::move(*this);
    UniqueFd moved(fcntl(fd_, F_DUPFD_CLOEXEC, 3));
    reset();
    return moved;
  }

 private:
  int fd_ = -1;
};

}  // namespace arbor

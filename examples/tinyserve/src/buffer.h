// Aligned float/byte buffers. With huge pages enabled (TS_HUGEPAGES=1) large buffers are
// 2 MiB aligned and advised with MADV_HUGEPAGE, so the kernel backs them with transparent huge
// pages (THP mode "madvise" or "always"). Buffers are zero-initialised, like std::vector.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>

namespace tinyserve {

// Process-wide switch, set once at startup from the knobs.
void SetHugePages(bool enabled);
// Returns zeroed memory of at least `bytes`, 64-byte aligned (2 MiB with huge pages).
void* AllocateZeroed(size_t bytes);

template <typename T>
class Buffer {
 public:
  Buffer() = default;
  explicit Buffer(size_t n) : data_(static_cast<T*>(AllocateZeroed(n * sizeof(T)))), size_(n) {}
  ~Buffer() { std::free(data_); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  Buffer(Buffer&& o) noexcept : data_(std::exchange(o.data_, nullptr)), size_(o.size_) {}
  Buffer& operator=(Buffer&& o) noexcept {
    std::swap(data_, o.data_);
    std::swap(size_, o.size_);
    return *this;
  }
  T* data() { return data_; }
  const T* data() const { return data_; }
  size_t size() const { return size_; }
  T& operator[](size_t i) { return data_[i]; }
  const T& operator[](size_t i) const { return data_[i]; }

 private:
  T* data_ = nullptr;
  size_t size_ = 0;
};

}  // namespace tinyserve

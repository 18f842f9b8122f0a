#include "buffer.h"

#include <sys/mman.h>

#include <cstdio>

namespace tinyserve {
namespace {

bool g_huge_pages = false;
constexpr size_t kHugePage = size_t{2} << 20;

}  // namespace

void SetHugePages(bool enabled) { g_huge_pages = enabled; }

void* AllocateZeroed(size_t bytes) {
  const bool huge = g_huge_pages && bytes >= kHugePage / 2;
  const size_t align = huge ? kHugePage : 64;
  const size_t size = (bytes + align - 1) / align * align;
  void* p = std::aligned_alloc(align, size == 0 ? align : size);
  if (p == nullptr) {
    std::fprintf(stderr, "tinyserve: out of memory allocating %zu bytes\n", bytes);
    std::abort();
  }
  // Advise before the first touch, so the zeroing below already faults in huge pages.
  if (huge) madvise(p, size, MADV_HUGEPAGE);
  std::memset(p, 0, size);
  return p;
}

}  // namespace tinyserve

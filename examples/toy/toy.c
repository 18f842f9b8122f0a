/*
 * toy: a small deterministic program for Arbor's demo and integration tests.
 *
 * One pass over the workload has two phases:
 *   compute  counts the inversions of each row of integers (a stand-in for a numeric kernel).
 *            TOY_ALGO=slow compares every pair, O(n^2); TOY_ALGO=fast merge-sorts, O(n log n).
 *   crc32    a CRC-32 of a byte buffer (a stand-in for a serialisation step). The bitwise loop
 *            below is what patches/crc-table.diff replaces with a lookup table. The buffer is
 *            checksummed in batches of TOY_CHUNK bytes, each framed by a 64-byte header that
 *            is checksummed too (a stand-in for per-batch setup cost), so tiny batches are slow;
 *            a batch larger than the 64 KiB staging buffer crashes.
 * At the baseline the crc32 phase is about 2-3% of the time; once compute is fast it is about
 * 70% of it. That is what re-profiling after a kept change is meant to discover.
 *
 * Modes:
 *   --bench    a short untimed warm-up pass, then timed passes until 0.06 s of CPU time; prints
 *              {"ops_per_s": X, "work": N, "passes": P, "phases": {...}} where ops_per_s is
 *              the elements of one pass over the median pass time
 *   --check    one pass; exit 0 iff the checksum equals the reference value, else 1
 *   --profile  like --bench, then prints Arbor's profile JSON. Phases under 0.5% of the time
 *              are folded into "other", as `perf report --percent-limit 0.5` would hide them.
 *
 * Knobs (environment): TOY_ALGO=slow|fast, TOY_CHUNK=N (bytes per crc batch, default 4096, at
 * most 65536), TOY_APPROX=1 (counts only the first half of each row: faster, wrong),
 * TOY_UNSAFE=1 (does not rebuild its scratch state between passes: crashes on the second pass).
 * Timing is CPU time of this process, so a loaded machine moves the numbers less.
 */
#define _POSIX_C_SOURCE 199309L
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { kRows = 1, kRowLength = 16384, kBytes = 256 * 1024, kHeader = 64, kWarmupLength = 1024 };
enum { kMaxChunk = 64 * 1024 };
#define kCrcPoly 0xEDB88320u
#define kReferenceChecksum 0xff8c8f8d8da1ff3cULL
#define kMinTimedSeconds 0.06
#define kFoldShare 0.005

static int32_t g_rows[kRows][kRowLength];
static int32_t g_work[kRowLength];
static int32_t g_tmp[kRowLength];
static unsigned char g_bytes[kBytes];
static unsigned char g_header[kHeader];

static int g_fast;
static long g_chunk = 4096;
static int g_approx;
static int g_unsafe;
static int g_scratch_used;
static volatile uint32_t g_sink; /* checksums of the batch headers, not part of the result */

static uint64_t g_rng = 0x2545F4914F6CDD1DULL;
static uint64_t NextRandom(void) {
  g_rng ^= g_rng << 13;
  g_rng ^= g_rng >> 7;
  g_rng ^= g_rng << 17;
  return g_rng;
}

static void InitData(void) {
  for (int r = 0; r < kRows; ++r) {
    for (int i = 0; i < kRowLength; ++i) g_rows[r][i] = (int32_t)(NextRandom() >> 40);
  }
  for (int i = 0; i < kBytes; ++i) g_bytes[i] = (unsigned char)(NextRandom() >> 56);
  for (int i = 0; i < kHeader; ++i) g_header[i] = (unsigned char)i;
}

static double CpuSeconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

__attribute__((noinline)) static uint64_t InversionsSlow(const int32_t* x, long n) {
  uint64_t count = 0;
  for (long i = 0; i < n; ++i) {
    int32_t v = x[i];
    for (long j = i + 1; j < n; ++j) count += (uint64_t)(v > x[j]);
  }
  return count;
}

/* Sorts x[0, n) using tmp and returns its inversion count. */
static uint64_t MergeCount(int32_t* x, int32_t* tmp, long n) {
  if (n < 2) return 0;
  long mid = n / 2;
  uint64_t count = MergeCount(x, tmp, mid) + MergeCount(x + mid, tmp, n - mid);
  long i = 0, j = mid, k = 0;
  while (i < mid && j < n) {
    if (x[i] <= x[j]) {
      tmp[k++] = x[i++];
    } else {
      tmp[k++] = x[j++];
      count += (uint64_t)(mid - i);
    }
  }
  while (i < mid) tmp[k++] = x[i++];
  while (j < n) tmp[k++] = x[j++];
  memcpy(x, tmp, (size_t)n * sizeof *x);
  return count;
}

__attribute__((noinline)) static uint64_t InversionsFast(const int32_t* x, long n) {
  memcpy(g_work, x, (size_t)n * sizeof *x);
  return MergeCount(g_work, g_tmp, n);
}

__attribute__((noinline)) static uint32_t CrcUpdate(uint32_t crc, const unsigned char* p,
                                                    size_t n) {
  crc = ~crc;
  for (size_t i = 0; i < n; ++i) {
    crc ^= p[i];
    for (int k = 0; k < 8; ++k) crc = (crc >> 1) ^ (kCrcPoly & (0u - (crc & 1u)));
  }
  return ~crc;
}

static uint64_t ComputePhase(long length) {
  if (g_approx) length /= 2; /* "a sample is close enough": it is not */
  uint64_t h = 0;
  for (int r = 0; r < kRows; ++r) {
    uint64_t c = g_fast ? InversionsFast(g_rows[r], length) : InversionsSlow(g_rows[r], length);
    h = (h ^ c) * 0x100000001B3ULL;
  }
  return h;
}

static uint32_t CrcPhase(long bytes) {
  if (g_chunk > kMaxChunk) {
    /* Each batch is staged in a kMaxChunk-byte buffer with its header; a larger batch (such
     * as "the whole buffer at once") overran it in the original code. Raised directly so that
     * every compiler and optimisation level crashes the same way. */
    raise(SIGSEGV);
    abort();
  }
  uint32_t crc = 0;
  for (long lo = 0; lo < bytes; lo += g_chunk) {
    long n = lo + g_chunk < bytes ? g_chunk : bytes - lo;
    g_sink = CrcUpdate((uint32_t)lo, g_header, kHeader);
    crc = CrcUpdate(crc, g_bytes + lo, (size_t)n);
  }
  return crc;
}

struct PassResult {
  uint64_t checksum;
  double compute_s;
  double crc_s;
};

static struct PassResult RunPass(long length, long bytes) {
  if (g_unsafe && g_scratch_used) {
    /* The unsafe mode releases its scratch rows after the first pass and never rebuilds
     * them; the next pass dereferences the stale pointer. */
    raise(SIGSEGV);
    abort();
  }
  g_scratch_used = 1;
  struct PassResult r;
  double t0 = CpuSeconds();
  uint64_t h = ComputePhase(length);
  double t1 = CpuSeconds();
  uint32_t crc = CrcPhase(bytes);
  double t2 = CpuSeconds();
  r.checksum = h ^ ((uint64_t)crc << 17);
  r.compute_s = t1 - t0;
  r.crc_s = t2 - t1;
  return r;
}

static int ReadKnobs(void) {
  const char* algo = getenv("TOY_ALGO");
  if (algo == NULL || algo[0] == '\0' || strcmp(algo, "slow") == 0) {
    g_fast = 0;
  } else if (strcmp(algo, "fast") == 0) {
    g_fast = 1;
  } else {
    fprintf(stderr, "toy: TOY_ALGO must be slow or fast, not '%s'\n", algo);
    return 0;
  }
  const char* chunk = getenv("TOY_CHUNK");
  if (chunk != NULL && chunk[0] != '\0') {
    char* end = NULL;
    g_chunk = strtol(chunk, &end, 10);
    if (*end != '\0' || g_chunk < 1) {
      fprintf(stderr, "toy: TOY_CHUNK must be a positive integer, not '%s'\n", chunk);
      return 0;
    }
  }
  const char* approx = getenv("TOY_APPROX");
  g_approx = approx != NULL && strcmp(approx, "1") == 0;
  const char* unsafe = getenv("TOY_UNSAFE");
  g_unsafe = unsafe != NULL && strcmp(unsafe, "1") == 0;
  return 1;
}

enum { kMaxPasses = 4096 };

struct Timed {
  double compute_s;
  double crc_s;
  long passes;
  double median_pass_s; /* robust to the odd pass slowed down by a neighbour */
};

static int CompareDoubles(const void* a, const void* b) {
  double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static struct Timed RunTimed(void) {
  static double pass_s[kMaxPasses];
  (void)RunPass(kWarmupLength, kBytes / 64);
  struct Timed t = {0, 0, 0, 0};
  while (t.passes == 0 || (t.compute_s + t.crc_s < kMinTimedSeconds && t.passes < kMaxPasses)) {
    struct PassResult r = RunPass(kRowLength, kBytes);
    t.compute_s += r.compute_s;
    t.crc_s += r.crc_s;
    pass_s[t.passes++] = r.compute_s + r.crc_s;
  }
  qsort(pass_s, (size_t)t.passes, sizeof pass_s[0], CompareDoubles);
  t.median_pass_s =
      t.passes % 2 ? pass_s[t.passes / 2] : (pass_s[t.passes / 2 - 1] + pass_s[t.passes / 2]) / 2;
  return t;
}

static void PrintComponent(int* first, const char* name, const char* layer, double share) {
  printf("%s{\"name\": \"%s\", \"layer\": \"%s\", \"share\": %.4f}", *first ? "" : ", ", name,
         layer, share);
  *first = 0;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: toy --bench | --check | --profile\n");
    return 2;
  }
  if (!ReadKnobs()) return 2;
  InitData();
  const char* mode = argv[1];
  if (strcmp(mode, "--check") == 0) {
    struct PassResult r = RunPass(kRowLength, kBytes);
    if (r.checksum != kReferenceChecksum) {
      printf("toy: checksum mismatch: got 0x%016llx, expected 0x%016llx\n",
             (unsigned long long)r.checksum, (unsigned long long)kReferenceChecksum);
      return 1;
    }
    printf("toy: checksum 0x%016llx ok\n", (unsigned long long)r.checksum);
    return 0;
  }
  if (strcmp(mode, "--bench") == 0 || strcmp(mode, "--profile") == 0) {
    struct Timed t = RunTimed();
    double total = t.compute_s + t.crc_s;
    if (strcmp(mode, "--bench") == 0) {
      long work = t.passes * kRows * kRowLength;
      printf(
          "{\"ops_per_s\": %.1f, \"work\": %ld, \"passes\": %ld, "
          "\"phases\": {\"compute_s\": %.6f, \"crc32_s\": %.6f}}\n",
          (double)(kRows * kRowLength) / t.median_pass_s, work, t.passes, t.compute_s, t.crc_s);
      return 0;
    }
    double compute = t.compute_s / total;
    double crc = t.crc_s / total;
    double other = 0;
    int first = 1;
    printf("{\"total_s\": %.6f, \"components\": [", total / (double)t.passes);
    if (compute >= kFoldShare) {
      PrintComponent(&first, "compute", "kernel", compute);
    } else {
      other += compute;
    }
    if (crc >= kFoldShare) {
      PrintComponent(&first, "crc32", "application", crc);
    } else {
      other += crc;
    }
    if (other > 0) PrintComponent(&first, "other", "application", other);
    printf("]}\n");
    return 0;
  }
  fprintf(stderr, "toy: unknown mode '%s'\n", mode);
  return 2;
}

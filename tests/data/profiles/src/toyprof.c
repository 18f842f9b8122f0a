/* toyprof: a small CPU workload with named phases, the subject of the profile fixtures.
 *
 *   toyprof [ITERATIONS]               run the workload
 *   toyprof [ITERATIONS] --trace FILE  also write a Chrome trace-event JSON of the run
 *
 * The phases stand for an inference step: a matrix multiply (gemm_tiled), a row softmax
 * (softmax_rows), a layer norm (layer_norm) and top-k sampling (sample_topk). With --trace,
 * each step is a "B"/"E" pair wrapping one complete ("X") event per phase on the CPU track,
 * measured with CLOCK_MONOTONIC. The machine has no GPU: the GPU track ("GPU 0", "stream 7",
 * cat "kernel") is SIMULATED, one event per gemm lasting a quarter of the CPU gemm, so that
 * the importer's GPU/CPU separation has something real-shaped to read. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { N = 96 };
static float a[N][N], b[N][N], c[N][N], row[4 * N];

static double now_us(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

__attribute__((noinline)) void gemm_tiled(void) {
  for (int rep = 0; rep < 4; rep++)
  for (int i = 0; i < N; i++)
    for (int k = 0; k < N; k++)
      for (int j = 0; j < N; j++) c[i][j] += a[i][k] * b[k][j];
}

__attribute__((noinline)) void softmax_rows(void) {
  for (int r = 0; r < 6; r++)
    for (int i = 0; i < N; i++) {
      float m = c[i][0], s = 0;
      for (int j = 1; j < N; j++) m = c[i][j] > m ? c[i][j] : m;
      for (int j = 0; j < N; j++) s += expf(c[i][j] - m);
      for (int j = 0; j < N; j++) c[i][j] = expf(c[i][j] - m) / s;
    }
}

__attribute__((noinline)) void layer_norm(void) {
  for (int r = 0; r < 10; r++)
    for (int i = 0; i < N; i++) {
      float mean = 0, var = 0;
      for (int j = 0; j < N; j++) mean += c[i][j];
      mean /= N;
      for (int j = 0; j < N; j++) var += (c[i][j] - mean) * (c[i][j] - mean);
      float inv = 1.0f / sqrtf(var / N + 1e-5f);
      for (int j = 0; j < N; j++) a[i][j] = (c[i][j] - mean) * inv;
    }
}

__attribute__((noinline)) int sample_topk(unsigned* seed) {
  int best = 0;
  for (int r = 0; r < 40; r++)
    for (int i = 0; i < 4 * N; i++) {
      *seed = *seed * 1103515245u + 12345u;
      row[i] = (float)(*seed >> 8) / 16777216.0f + a[i % N][r % N];
      if (row[i] > row[best]) best = i;
    }
  return best;
}

static FILE* trace;
static int first_event = 1;

static void sep(void) {
  fputs(first_event ? "\n  " : ",\n  ", trace);
  first_event = 0;
}

static void emit_x(const char* name, const char* cat, int pid, int tid, double ts, double dur) {
  if (!trace) return;
  sep();
  fprintf(trace, "{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":%d,\"tid\":%d,"
          "\"ts\":%.3f,\"dur\":%.3f}", name, cat, pid, tid, ts, dur);
}

static void emit_be(const char* ph, const char* name, double ts) {
  if (!trace) return;
  sep();
  if (name)
    fprintf(trace, "{\"name\":\"%s\",\"ph\":\"%s\",\"pid\":1,\"tid\":1,\"ts\":%.3f}", name, ph, ts);
  else
    fprintf(trace, "{\"ph\":\"%s\",\"pid\":1,\"tid\":1,\"ts\":%.3f}", ph, ts);
}

static void emit_process_name(int pid, int tid, const char* label) {
  sep();
  fprintf(trace, "{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":%d,\"tid\":%d,"
          "\"args\":{\"name\":\"%s\"}}", pid, tid, label);
}

#define PHASE(fn, call)                                                  \
  do {                                                                   \
    double t0 = now_us();                                                \
    call;                                                                \
    double t1 = now_us();                                                \
    emit_x(fn, "cpu_op", 1, 1, t0, t1 - t0);                             \
    if (strcmp(fn, "gemm_tiled") == 0)                                   \
      emit_x("sgemm_128x64_nn", "kernel", 0, 7, t1, (t1 - t0) / 4);      \
  } while (0)

int main(int argc, char** argv) {
  int iterations = argc > 1 && argv[1][0] != '-' ? atoi(argv[1]) : 200;
  for (int i = 1; i + 1 < argc; i++)
    if (strcmp(argv[i], "--trace") == 0 && !(trace = fopen(argv[i + 1], "w"))) return 2;
  for (int i = 0; i < N; i++)
    for (int j = 0; j < N; j++) a[i][j] = b[i][j] = (float)((i * 7 + j * 3) % 11) / 11.0f;
  if (trace) {
    fputs("{\"displayTimeUnit\": \"ms\", \"traceEvents\": [", trace);
    emit_process_name(1, 1, "toyprof");
    emit_process_name(0, 7, "GPU 0");
  }
  unsigned seed = 1;
  long checksum = 0;
  for (int it = 0; it < iterations; it++) {
    emit_be("B", "step", now_us());
    PHASE("gemm_tiled", gemm_tiled());
    PHASE("softmax_rows", softmax_rows());
    PHASE("layer_norm", layer_norm());
    PHASE("sample_topk", checksum += sample_topk(&seed));
    emit_be("E", NULL, now_us());
  }
  if (trace) fputs("\n]}\n", trace), fclose(trace);
  printf("checksum %ld\n", checksum);
  return 0;
}

// Default options of the sanitizer runtimes, linked into every executable of a sanitizer build
// (cmake/Sanitizers.cmake). Compiled in rather than passed as ASAN_OPTIONS & co. because Arbor
// gives the commands it runs only a scrubbed environment (app/command_target.cc): a sanitized
// child such as arbor_landscape_target started by `arbor` would otherwise run with the
// runtime's defaults and its report would end in a campaign log nobody reads.
//
// Every report goes to ARBOR_SANITIZER_LOG_DIR/report.<pid> (ubsan-report.<pid> for UBSan; the
// file exists only when
// something was reported; scripts/sanitize fails when any does) and the process exits with
// status 86 straight away, so the test that ran it fails too when it checks the exit status.
// Suppressions (third-party code only, each justified) are in tests/sanitizers/*.supp.
// Variables set in the environment (ASAN_OPTIONS=...) still override these.

#ifndef ARBOR_SANITIZER_LOG_DIR
#error "ARBOR_SANITIZER_LOG_DIR must name the folder sanitizer reports are written to"
#endif

#ifndef ARBOR_SANITIZER_SUPP_DIR
#error "ARBOR_SANITIZER_SUPP_DIR must name the folder of the suppression files"
#endif

#define ARBOR_COMMON_SANITIZER_OPTIONS \
  "log_path=" ARBOR_SANITIZER_LOG_DIR "/report:exitcode=86:halt_on_error=1:abort_on_error=0"
#define ARBOR_SUPPRESSIONS(file) ":suppressions=" ARBOR_SANITIZER_SUPP_DIR "/" file

#include <dlfcn.h>

extern "C" {

// The runtimes look these weak symbols up at start-up; unused ones are harmless.
__attribute__((visibility("default"), used)) const char* __asan_default_options() {
  // detect_leaks: on (LeakSanitizer at exit). A process killed by SIGKILL (the crash tests,
  // app/crash_points.cc) never reaches the leak check, so it cannot report a false leak.
  return ARBOR_COMMON_SANITIZER_OPTIONS
      ":detect_leaks=1:strict_string_checks=1"
      ":check_initialization_order=1:strict_init_order=1:print_suppressions=0" ARBOR_SUPPRESSIONS(
          "asan.supp");
}

__attribute__((visibility("default"), used)) const char* __ubsan_default_options() {
  return ARBOR_COMMON_SANITIZER_OPTIONS ":print_stacktrace=1" ARBOR_SUPPRESSIONS("ubsan.supp");
}

__attribute__((visibility("default"), used)) const char* __lsan_default_options() {
  return ARBOR_COMMON_SANITIZER_OPTIONS ":print_suppressions=0" ARBOR_SUPPRESSIONS("lsan.supp");
}

__attribute__((visibility("default"), used)) const char* __tsan_default_options() {
  return ARBOR_COMMON_SANITIZER_OPTIONS ":second_deadlock_stack=1" ARBOR_SUPPRESSIONS("tsan.supp");
}

}  // extern "C"

namespace {

// g++ links UBSan as its own runtime (libubsan.so) beside libasan, with its own copy of the
// report file, and that copy ignores log_path: without this its reports would go to stderr
// only, which a child run with captured or discarded output would hide. Not loaded (tsan): no-op.
__attribute__((constructor)) void RouteUbsanReports() {
  void* ubsan = dlopen("libubsan.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (ubsan == nullptr) return;
  using SetReportPath = void (*)(const char*);
  auto set = reinterpret_cast<SetReportPath>(dlsym(ubsan, "__sanitizer_set_report_path"));
  if (set != nullptr) set(ARBOR_SANITIZER_LOG_DIR "/ubsan-report");
  dlclose(ubsan);
}

}  // namespace

// Replays a fuzz target's corpus without libFuzzer (the g++ build's fuzz_corpus_<name> tests):
// calls LLVMFuzzerTestOneInput once per file of each directory (or file) named on the command
// line. A broken promise aborts inside the target, naming the check; a signal handler then
// prints the file being replayed. Fails when no file was found.
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace {

const char* g_current = "";  // the input being replayed, for the signal handler

void OnCrash(int sig) {
  const char kPrefix[] = "replay: crashed on ";
  (void)!write(2, kPrefix, sizeof kPrefix - 1);
  (void)!write(2, g_current, std::strlen(g_current));
  (void)!write(2, "\n", 1);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

}  // namespace

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) {
    std::error_code ec;
    if (fs::is_directory(argv[i], ec)) {
      for (const auto& e : fs::directory_iterator(argv[i])) {
        if (e.is_regular_file()) files.push_back(e.path());
      }
    } else if (fs::is_regular_file(argv[i], ec)) {
      files.emplace_back(argv[i]);
    } else {
      std::fprintf(stderr, "replay: %s is neither a file nor a directory\n", argv[i]);
      return 2;
    }
  }
  if (files.empty()) {
    std::fprintf(stderr, "replay: no input files (usage: replay DIR|FILE...)\n");
    return 2;
  }
  std::sort(files.begin(), files.end());
  for (int sig : {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL}) std::signal(sig, OnCrash);
  for (const fs::path& f : files) {
    g_current = f.c_str();
    std::ifstream in(f, std::ios::binary);
    std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(data.data()), data.size());
  }
  std::printf("replay: %zu inputs, no failure\n", files.size());
  return 0;
}

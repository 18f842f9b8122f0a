// What CMake, Meson, Cargo, Make and Python packaging files say: the build, check and
// benchmark commands of detect.h, from the files' text alone (nothing is run).
#include <algorithm>
#include <cctype>
#include <regex>
#include <set>
#include <string>
#include <string_view>

#include "config/detect_internal.h"
#include "util/strings.h"

namespace arbor::detect {
namespace {

// The start of a detected build script: `set -e`, and $pgo set to the flags that use the
// profile the PGO action's training run left in arbor-pgo/ (empty without one).
constexpr std::string_view kPgoPrelude =
    "set -e\n"
    "pgo=\"\"\n"
    "if [ -d arbor-pgo ]; then pgo=\"-fprofile-use=$PWD/arbor-pgo "
    "-fprofile-prefix-path=$PWD/build -fprofile-partial-training -Wno-missing-profile "
    "-Wno-error=coverage-mismatch\"; fi\n";

const std::string* Text(const RepoFiles& repo, const std::string& path) {
  auto it = repo.contents.find(path);
  return it == repo.contents.end() ? nullptr : &it->second;
}

bool Has(const std::vector<std::string>& paths, const std::string& path) {
  return std::find(paths.begin(), paths.end(), path) != paths.end();
}

std::string Dir(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

std::string Base(const std::string& path) {
  size_t slash = path.rfind('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// ---- CMake -------------------------------------------------------------------------------

struct Call {
  std::string name;  // lower case
  std::vector<std::string> args;
  std::string file;
};

// The command invocations of a CMake file: comments dropped, arguments split on blanks with
// quotes removed. Good enough for the commands detection reads; never fails.
std::vector<Call> CMakeCalls(const std::string& text, const std::string& file) {
  std::string clean;
  bool quoted = false;
  for (size_t i = 0; i < text.size(); ++i) {
    char c = text[i];
    if (c == '"') quoted = !quoted;
    if (c == '#' && !quoted) {
      if (text.compare(i, 3, "#[[") == 0) {
        size_t end = text.find("]]", i);
        i = end == std::string::npos ? text.size() : end + 1;
      } else {
        while (i < text.size() && text[i] != '\n') ++i;
        clean += '\n';
      }
      continue;
    }
    clean += c;
  }
  std::vector<Call> calls;
  size_t i = 0;
  while (i < clean.size()) {
    if (!(std::isalpha(static_cast<unsigned char>(clean[i])) != 0 || clean[i] == '_')) {
      ++i;
      continue;
    }
    size_t start = i;
    while (i < clean.size() &&
           (std::isalnum(static_cast<unsigned char>(clean[i])) != 0 || clean[i] == '_')) {
      ++i;
    }
    std::string name = clean.substr(start, i - start);
    size_t j = i;
    while (j < clean.size() && (clean[j] == ' ' || clean[j] == '\t')) ++j;
    if (j >= clean.size() || clean[j] != '(') continue;
    int depth = 0;
    size_t k = j;
    for (; k < clean.size(); ++k) {
      if (clean[k] == '(') ++depth;
      if (clean[k] == ')' && --depth == 0) break;
    }
    std::string inner = clean.substr(j + 1, k > j ? k - j - 1 : 0);
    Call call;
    for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    call.name = name;
    call.file = file;
    std::string word;
    for (char c : inner + " ") {
      if (c == ' ' || c == '\t' || c == '\n' || c == '\r') {
        if (!word.empty()) call.args.push_back(word);
        word.clear();
      } else if (c != '"') {
        word += c;
      }
    }
    calls.push_back(std::move(call));
    i = k + 1;
  }
  return calls;
}

bool IsGoogleBenchmarkLibrary(const std::string& lib) {
  return lib == "benchmark::benchmark" || lib == "benchmark::benchmark_main" ||
         lib == "benchmark" || lib == "benchmark_main";
}

std::optional<Plan> CMakePlan(const RepoFiles& repo) {
  std::vector<Call> calls;
  for (const std::string& p : repo.paths) {
    if (Base(p) != "CMakeLists.txt" && !EndsWith(p, ".cmake")) continue;
    if (const std::string* t = Text(repo, p)) {
      for (Call& c : CMakeCalls(*t, p)) calls.push_back(std::move(c));
    }
  }
  Plan plan;
  plan.system = BuildSystem::kCMake;
  plan.found = "CMake (CMakeLists.txt)";
  std::string project;
  std::map<std::string, std::string> executables;  // target -> file declaring it
  std::vector<std::string> executable_order;
  std::set<std::string> gbench;
  bool tests = false;
  bool custom_output_dir = false;
  std::string bench_target;
  for (const Call& c : calls) {
    if (c.name == "project" && !c.args.empty() && project.empty()) project = c.args[0];
    if (c.name == "enable_testing" || c.name == "add_test" || c.name == "gtest_discover_tests" ||
        c.name == "gtest_add_tests" || c.name == "catch_discover_tests" ||
        c.name == "doctest_discover_tests" ||
        (c.name == "include" && !c.args.empty() && c.args[0] == "CTest")) {
      tests = true;
    }
    if (c.name == "find_package" && !c.args.empty() && c.args[0] == "OpenMP") plan.openmp = true;
    for (const std::string& a : c.args) {
      if (StartsWith(a, "OpenMP::") || a.find("-fopenmp") != std::string::npos) {
        plan.openmp = true;
      }
      if (a.find("RUNTIME_OUTPUT_DIRECTORY") != std::string::npos) custom_output_dir = true;
    }
    if (c.name == "add_custom_target" && !c.args.empty() &&
        (c.args[0] == "bench" || c.args[0] == "benchmark" || c.args[0] == "benchmarks")) {
      bench_target = c.args[0];
    }
  }
  auto resolve = [&](std::string s) { return ReplaceAll(s, "${PROJECT_NAME}", project); };
  for (const Call& c : calls) {
    if (c.name == "add_executable" && !c.args.empty()) {
      const bool imported = std::find(c.args.begin(), c.args.end(), "IMPORTED") != c.args.end() ||
                            std::find(c.args.begin(), c.args.end(), "ALIAS") != c.args.end();
      std::string target = resolve(c.args[0]);
      if (!imported && target.find("${") == std::string::npos && !executables.count(target)) {
        executables[target] = c.file;
        executable_order.push_back(target);
      }
    }
    if (c.name == "target_link_libraries" && c.args.size() > 1) {
      for (size_t i = 1; i < c.args.size(); ++i) {
        if (IsGoogleBenchmarkLibrary(c.args[i])) gbench.insert(resolve(c.args[0]));
      }
    }
  }
  plan.env = {{"CFLAGS", "-O3"}, {"CXXFLAGS", "-O3"}, {"LDFLAGS", ""}};
  plan.opt_levels = R"(["2", "s"])";
  plan.build = std::string(kPgoPrelude) +
               "cmake --no-warn-unused-cli -S . -B build -DCMAKE_BUILD_TYPE=Release "
               "\"-DCMAKE_C_FLAGS_RELEASE=-DNDEBUG $CFLAGS $pgo\" "
               "\"-DCMAKE_CXX_FLAGS_RELEASE=-DNDEBUG $CXXFLAGS $pgo\" "
               "\"-DCMAKE_EXE_LINKER_FLAGS=$LDFLAGS\" \"-DCMAKE_SHARED_LINKER_FLAGS=$LDFLAGS\"\n"
               "cmake --build build --parallel $(nproc)";
  plan.build_note =
      "A Release build in build/ whose flags are $CFLAGS and $CXXFLAGS (-O3 in the baseline,\n"
      "as CMake's Release) and $LDFLAGS, so that the compiler actions below apply; with\n"
      "arbor-pgo/ present (the PGO action) it builds with that profile.";
  if (tests) {
    plan.check = "ctest --test-dir build --output-on-failure";
    plan.check_note = "The project's tests (CTest).";
  }
  for (const std::string& target : executable_order) {
    if (!gbench.count(target)) continue;
    const std::string dir = Dir(executables[target]);
    std::string path = "./build/" + (dir.empty() ? "" : dir + "/") + target;
    if (custom_output_dir) {
      path = "\"$(find build -type f -name '" + target + "' -perm -u+x | head -n 1)\"";
    }
    plan.benches.push_back(
        {Bench::Kind::kGoogleBenchmark, path + " --benchmark_format=json",
         "Google Benchmark executable " + target + " (" + executables[target] + ")"});
  }
  if (!bench_target.empty()) {
    plan.benches.push_back({Bench::Kind::kWallTime, "cmake --build build --target " + bench_target,
                            "CMake target '" + bench_target + "'"});
  }
  return plan;
}

// ---- Meson -------------------------------------------------------------------------------

std::optional<Plan> MesonPlan(const RepoFiles& repo) {
  Plan plan;
  plan.system = BuildSystem::kMeson;
  plan.found = "Meson (meson.build)";
  plan.opt_levels = R"(["2", "s"])";  // --buildtype=release is -O3
  plan.build = std::string(kPgoPrelude) +
               "CFLAGS=\"$CFLAGS $pgo\" CXXFLAGS=\"$CXXFLAGS $pgo\" meson setup build "
               "--buildtype=release\n"
               "meson compile -C build";
  plan.build_note =
      "A release build in build/; meson setup reads $CFLAGS, $CXXFLAGS and $LDFLAGS, so that\n"
      "the compiler actions below apply; with arbor-pgo/ present (the PGO action) it builds\n"
      "with that profile.";
  const std::regex dep(R"((\w+)\s*=\s*dependency\(\s*'benchmark')");
  const std::regex exe(R"(executable\(\s*'([^']+)')");
  bool tests = false;
  bool benchmarks = false;
  // Variables holding dependency('benchmark'), from every file (subdir() shares them).
  std::set<std::string> vars = {"dependency('benchmark'"};
  for (const std::string& p : repo.paths) {
    const std::string* t = Base(p) == "meson.build" ? Text(repo, p) : nullptr;
    if (t == nullptr) continue;
    for (std::sregex_iterator it(t->begin(), t->end(), dep), end; it != end; ++it) {
      vars.insert((*it)[1]);
    }
  }
  for (const std::string& p : repo.paths) {
    if (Base(p) != "meson.build") continue;
    const std::string* t = Text(repo, p);
    if (t == nullptr) continue;
    tests = tests || t->find("test(") != std::string::npos;
    benchmarks = benchmarks || t->find("benchmark(") != std::string::npos;
    plan.openmp = plan.openmp || t->find("dependency('openmp'") != std::string::npos;
    for (std::sregex_iterator it(t->begin(), t->end(), exe), end; it != end; ++it) {
      size_t open = static_cast<size_t>(it->position(0)) + 10;
      int depth = 0;
      size_t k = open;
      for (; k < t->size(); ++k) {
        if ((*t)[k] == '(') ++depth;
        if ((*t)[k] == ')' && --depth == 0) break;
      }
      const std::string call = t->substr(open, k - open);
      bool uses = false;
      for (const std::string& v : vars) uses = uses || call.find(v) != std::string::npos;
      if (!uses) continue;
      const std::string dir = Dir(p);
      plan.benches.push_back({Bench::Kind::kGoogleBenchmark,
                              "./build/" + (dir.empty() ? "" : dir + "/") + (*it)[1].str() +
                                  " --benchmark_format=json",
                              "Google Benchmark executable " + (*it)[1].str() + " (" + p + ")"});
    }
  }
  if (tests) {
    plan.check = "meson test -C build --print-errorlogs";
    plan.check_note = "The project's tests (meson test).";
  }
  if (benchmarks) {
    plan.benches.push_back(
        {Bench::Kind::kWallTime, "meson test -C build --benchmark", "Meson benchmark() entries"});
  }
  return plan;
}

// ---- Cargo -------------------------------------------------------------------------------

std::optional<Plan> CargoPlan(const RepoFiles& repo) {
  Plan plan;
  plan.system = BuildSystem::kCargo;
  plan.found = "Cargo (Cargo.toml)";
  plan.compiler_actions = false;  // rust.toml instead of c-cxx.toml
  bool benches = false;
  for (const std::string& p : repo.paths) benches = benches || StartsWith(p, "benches/");
  if (const std::string* t = Text(repo, "Cargo.toml")) {
    benches = benches || t->find("[[bench]]") != std::string::npos;
  }
  plan.build = "cargo build --release";
  plan.build_note =
      "The release profile; the actions below change it through CARGO_PROFILE_RELEASE_* and\n"
      "RUSTFLAGS.";
  if (benches) {
    plan.build += " && cargo bench --no-run";
    plan.build_note +=
        "\nThe benchmarks are compiled here, so that their run is all the bench\n"
        "command times.";
    plan.benches.push_back(
        {Bench::Kind::kWallTime, "cargo bench", "cargo bench ([[bench]] or benches/)"});
  }
  plan.check = "cargo test --release";
  plan.check_note = "The crate's tests.";
  return plan;
}

// ---- Make --------------------------------------------------------------------------------

std::optional<Plan> MakePlan(const RepoFiles& repo, const std::string& makefile) {
  Plan plan;
  plan.system = BuildSystem::kMake;
  plan.found = "Make (" + makefile + ")";
  plan.build = "make -j$(nproc)";
  plan.build_note =
      "make reads $CFLAGS, $CXXFLAGS and $LDFLAGS from the environment when the Makefile\n"
      "sets them with ?= or += or not at all.";
  std::set<std::string> targets;
  if (const std::string* t = Text(repo, makefile)) {
    const std::regex target(R"(^([A-Za-z0-9_.-]+)\s*:([^=]|$))");
    const std::regex hard(R"(^\s*(CFLAGS|CXXFLAGS)\s*:?=)");
    int line_no = 0;
    for (const std::string& line : Split(*t, '\n')) {
      ++line_no;
      std::smatch m;
      if (std::regex_search(line, m, target)) targets.insert(m[1]);
      if (plan.compiler_actions && std::regex_search(line, m, hard)) {
        plan.compiler_actions = false;
        plan.compiler_note = "the compiler actions are left out: " + makefile + " sets " +
                             m[1].str() + " with '=' on line " + std::to_string(line_no) +
                             ", which beats the environment (use ?= or += and run "
                             "`arbor init --detect --force` again)";
      }
    }
    plan.openmp = t->find("-fopenmp") != std::string::npos;
  }
  for (const char* check : {"check", "test", "tests"}) {
    if (targets.count(check)) {
      plan.check = std::string("make ") + check;
      plan.check_note = std::string("The Makefile's '") + check + "' target.";
      break;
    }
  }
  for (const char* bench : {"bench", "benchmark", "benchmarks"}) {
    if (targets.count(bench)) {
      plan.benches.push_back({Bench::Kind::kWallTime, std::string("make ") + bench,
                              std::string("the Makefile's '") + bench + "' target"});
      break;
    }
  }
  return plan;
}

// ---- Python ------------------------------------------------------------------------------

std::optional<Plan> PythonPlan(const RepoFiles& repo, const std::string& file) {
  Plan plan;
  plan.system = BuildSystem::kPython;
  plan.found = "a Python package (" + file + ")";
  if (const std::string* setup = Text(repo, "setup.py")) {
    plan.c_extensions = setup->find("Extension(") != std::string::npos ||
                        setup->find("ext_modules") != std::string::npos;
  }
  if (plan.c_extensions) {
    plan.build = "python3 setup.py build_ext --inplace";
    plan.build_note =
        "The C extensions, in place; setuptools passes $CFLAGS and $LDFLAGS to the compiler.";
  } else {
    plan.build_note = "Pure Python: nothing to build.";
  }
  bool test_files = false;
  bool pytest_benchmark = false;
  const std::regex fixture(R"(def\s+test\w*\s*\([^)]*\bbenchmark\b)");
  for (const std::string& p : repo.paths) {
    if (!IsPythonTestFile(p)) continue;
    test_files = true;
    if (const std::string* t = Text(repo, p)) {
      pytest_benchmark = pytest_benchmark || std::regex_search(*t, fixture);
    }
  }
  if (test_files) {
    plan.check = "python3 -m pytest -q -p no:cacheprovider";
    if (pytest_benchmark) plan.check += " --benchmark-skip";
    plan.check_note = "The package's tests (pytest).";
  }
  if (pytest_benchmark) {
    plan.benches.push_back({Bench::Kind::kPytestBenchmark,
                            "python3 -m pytest -q -p no:cacheprovider --benchmark-only "
                            "--benchmark-json=\"$ARBOR_OUT/metrics.json\"",
                            "pytest-benchmark tests (the benchmark fixture)"});
  }
  return plan;
}

}  // namespace

bool IsBuildFile(const std::string& path) {
  const std::string base = Base(path);
  if (base == "CMakeLists.txt" || EndsWith(base, ".cmake") || base == "meson.build") return true;
  return path == "Cargo.toml" || path == "Makefile" || path == "GNUmakefile" ||
         path == "makefile" || path == "setup.py" || path == "pyproject.toml" ||
         path == "setup.cfg";
}

bool IsPythonTestFile(const std::string& path) {
  const std::string base = Base(path);
  if (!EndsWith(base, ".py")) return false;
  return StartsWith(base, "test_") || EndsWith(base, "_test.py") || StartsWith(path, "tests/") ||
         path.find("/tests/") != std::string::npos;
}

std::optional<Plan> FindPlan(const RepoFiles& repo) {
  const std::vector<std::string>& paths = repo.paths;
  if (Has(paths, "CMakeLists.txt")) return CMakePlan(repo);
  if (Has(paths, "meson.build")) return MesonPlan(repo);
  if (Has(paths, "Cargo.toml")) return CargoPlan(repo);
  for (const char* makefile : {"GNUmakefile", "makefile", "Makefile"}) {
    if (Has(paths, makefile)) return MakePlan(repo, makefile);
  }
  for (const char* file : {"pyproject.toml", "setup.py", "setup.cfg"}) {
    if (Has(paths, file)) return PythonPlan(repo, file);
  }
  return std::nullopt;
}

std::string WallTimeCommand(const std::string& command) {
  return "t0=$(date +%s%N)\n{\n" + command +
         "\n} || exit $?\nt1=$(date +%s%N)\necho \"{\\\"wall_s\\\": $((t1 - t0))e-9}\"";
}

}  // namespace arbor::detect

#include "exec/scrubbing.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "exec/runner.h"
#include "exec/test_util.h"

namespace arbor {
namespace {

constexpr std::string_view kCanary = "sk-CANARY/9x+Q\"uo\\te d\nline-7f3a";
constexpr const char* kName = "ARBOR_TEST_KEY";

Scrubber Canary() {
  Scrubber s;
  s.Add(kName, std::string(kCanary));
  return s;
}

// A log of several chunks with a form of the canary straddling each chunk boundary, a different
// number of its bytes on each side every time.
TEST(ScrubFileInPlace, CatchesSecretsAcrossChunkBoundaries) {
  Scrubber scrubber = Canary();
  std::vector<std::string> forms = Scrubber::Forms(kCanary);
  std::string text;
  std::string filler = "step 42: loss=0.1234 tokens/s=12345.6\n";
  for (size_t boundary = 1; boundary <= 8; ++boundary) {
    const std::string& form = forms[(boundary * 5) % forms.size()];
    size_t before = std::max<size_t>(1, form.size() * boundary / 9);  // bytes in the first chunk
    while (text.size() < boundary * kScrubChunkBytes) text += filler;
    text.resize(boundary * kScrubChunkBytes - before);
    text += form + "\n";
  }
  while (text.size() < 9 * kScrubChunkBytes + 123) text += filler;
  ASSERT_TRUE(scrubber.Contains(text));

  test::TempDir dir;
  std::string path = dir.path() + "/stdout";
  std::ofstream(path, std::ios::binary) << text;
  ASSERT_EQ(chmod(path.c_str(), 0640), 0);
  ASSERT_TRUE(ScrubFileInPlace(path, scrubber).ok());
  std::string got = test::Slurp(path);
  EXPECT_FALSE(scrubber.Contains(got));
  EXPECT_EQ(got, scrubber.Scrub(text));  // the same as scrubbing it whole
  struct stat st {};
  ASSERT_EQ(stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
  // Nothing left behind but the file itself.
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()),
                          std::filesystem::directory_iterator()),
            1);
}

TEST(ScrubFileInPlace, LeavesCleanAndMissingFilesAlone) {
  Scrubber scrubber = Canary();
  test::TempDir dir;
  std::string path = dir.path() + "/stderr";
  std::ofstream(path) << "nothing secret here\n";
  struct stat before {};
  ASSERT_EQ(stat(path.c_str(), &before), 0);
  ASSERT_TRUE(ScrubFileInPlace(path, scrubber).ok());
  struct stat after {};
  ASSERT_EQ(stat(path.c_str(), &after), 0);
  EXPECT_EQ(before.st_ino, after.st_ino);  // not rewritten
  EXPECT_TRUE(ScrubFileInPlace(dir.path() + "/missing", scrubber).ok());
  EXPECT_TRUE(ScrubFileInPlace(path, Scrubber()).ok());
}

// Kept output (the default) is scrubbed before RunCommand returns: stdout, stderr and every
// regular file under a kept folder, even one a child still wrote after the shell exited.
// Transient output and symbolic links are left alone.
TEST(RunnerScrubbing, KeptOutputAndKeptPathsHoldNoSecretWhenRunReturns) {
  const std::string secret = "sk-live-0123456789abcdef";
  Scrubber scrubber;
  scrubber.Add(kName, secret);
  test::TempDir dir;
  const std::string kept = dir.path() + "/kept";
  std::filesystem::create_directories(kept + "/deep");
  const std::string outside = dir.path() + "/outside.txt";
  std::ofstream(outside) << secret << "\n";
  RunSpec rs;
  rs.command =
      "echo \"$S\"; echo \"$S\" >&2; echo \"x $S\" > kept/report.json; "
      "(sleep 0.2; echo \"$S\" > kept/deep/late.txt) & ln -s ../outside.txt kept/link";
  rs.cwd = dir.path();
  rs.env = {{"PATH", "/usr/bin:/bin"}, {"S", secret}};
  rs.stdout_path = dir.path() + "/stdout";
  rs.stderr_path = dir.path() + "/stderr";
  rs.kept_paths = {kept};
  ScopedScrubber installed(&scrubber);
  ASSERT_TRUE(RunCommand(rs).ok());
  EXPECT_EQ(test::Slurp(rs.stdout_path), "[redacted:ARBOR_TEST_KEY]\n");
  EXPECT_EQ(test::Slurp(rs.stderr_path), "[redacted:ARBOR_TEST_KEY]\n");
  EXPECT_EQ(test::Slurp(kept + "/report.json"), "x [redacted:ARBOR_TEST_KEY]\n");
  // The background writer was killed with the command, or wrote before the scrub.
  EXPECT_FALSE(scrubber.Contains(test::Slurp(kept + "/deep/late.txt")));
  EXPECT_TRUE(std::filesystem::is_symlink(kept + "/link"));
  EXPECT_EQ(test::Slurp(outside), secret + "\n");  // not Arbor's file

  rs.output = RunSpec::Output::kTransient;
  rs.kept_paths.clear();
  ASSERT_TRUE(RunCommand(rs).ok());
  EXPECT_EQ(test::Slurp(rs.stdout_path), secret + "\n");
}

TEST(RunnerScrubbing, NothingIsRewrittenWithoutAnInstalledScrubber) {
  test::TempDir dir;
  RunSpec rs;
  rs.command = "echo sk-live-0123456789abcdef";
  rs.env = {{"PATH", "/usr/bin:/bin"}};
  rs.stdout_path = dir.path() + "/stdout";
  rs.stderr_path = dir.path() + "/stderr";
  ASSERT_EQ(InstalledScrubber(), nullptr);
  ASSERT_TRUE(RunCommand(rs).ok());
  EXPECT_EQ(test::Slurp(rs.stdout_path), "sk-live-0123456789abcdef\n");
}

TEST(ScopedScrubber, InstallsForItsLifetimeAndIgnoresAnEmptyScrubber) {
  Scrubber scrubber = Canary();
  Scrubber none;
  EXPECT_EQ(InstalledScrubber(), nullptr);
  {
    ScopedScrubber outer(&scrubber);
    EXPECT_EQ(InstalledScrubber(), &scrubber);
    {
      ScopedScrubber inner(&none);  // nothing to scrub: same as none installed
      EXPECT_EQ(InstalledScrubber(), nullptr);
    }
    EXPECT_EQ(InstalledScrubber(), &scrubber);
  }
  EXPECT_EQ(InstalledScrubber(), nullptr);
}

}  // namespace
}  // namespace arbor

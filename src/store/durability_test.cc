// kill -9 at any moment: what Apply() acknowledged is on disk, and nothing is half-written.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>

#include "store/sqlite_store.h"
#include "store/store_testing.h"

namespace arbor {
namespace {

using store_testing::FullNode;
using store_testing::RootNode;
using store_testing::ScratchDir;

// Mutation i: node i+1 under the root, two samples and one event, all or nothing.
Mutation NthMutation(int i) {
  const NodeId id = i + 2;
  Mutation m;
  m.nodes.push_back(FullNode(id, kRootId));
  for (int rep = 0; rep < 2; ++rep) {
    m.samples.push_back(Sample{.node = id, .arm = "self", .rep = rep, .value = 1.0 * i});
  }
  m.events.push_back(Event{.node = id, .kind = "measured", .message = "m", .t = 1.0 * i});
  m.meta = CampaignMeta{.name = "kill", .next_seq = i + 1};
  return m;
}

// Child side: never returns into gtest.
[[noreturn]] void ChildApplyThenDie(const std::string& path, int count, int ack_fd) {
  auto store = SqliteStore::Open(path, OpenMode::kReadWrite);
  if (!store.ok()) _exit(2);
  if (!(*store)->Apply({.nodes = {RootNode()}}).ok()) _exit(3);
  for (int i = 0; count < 0 || i < count; ++i) {
    if (!(*store)->Apply(NthMutation(i)).ok()) _exit(4);
    if (ack_fd >= 0) {
      const int32_t done = i + 1;
      if (write(ack_fd, &done, sizeof(done)) != sizeof(done)) _exit(5);
    }
  }
  raise(SIGKILL);  // no destructor, no close, no checkpoint
  _exit(6);
}

void ExpectKilled(pid_t pid) {
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFSIGNALED(status)) << "child exited with " << WEXITSTATUS(status);
  EXPECT_EQ(WTERMSIG(status), SIGKILL);
}

// Reopens the store and checks that exactly mutations [0, n) are present, each complete.
void ExpectPrefixOfSteps(const std::string& path, int at_least, int* found) {
  auto store = SqliteStore::Open(path, OpenMode::kReadWrite);
  ASSERT_TRUE(store.ok()) << store.error().message;
  auto check = (*store)->IntegrityCheck();
  ASSERT_TRUE(check.ok());
  EXPECT_EQ(*check, "ok");
  auto nodes = (*store)->LoadNodes();
  ASSERT_TRUE(nodes.ok()) << nodes.error().message;
  ASSERT_FALSE(nodes->empty());
  const int n = static_cast<int>(nodes->size()) - 1;  // minus the root
  EXPECT_GE(n, at_least);
  for (int i = 0; i < n; ++i) {
    const NodeId id = i + 2;
    EXPECT_EQ((*nodes)[i + 1].id, id);
    auto samples = (*store)->LoadSamples(id);
    ASSERT_TRUE(samples.ok());
    EXPECT_EQ(samples->size(), 2u) << "node " << id;
  }
  auto events = (*store)->LoadEvents(kNoNode, 0, -1);
  ASSERT_TRUE(events.ok());
  EXPECT_EQ(static_cast<int>(events->size()), n);
  auto meta = (*store)->LoadMeta();
  ASSERT_TRUE(meta.ok());
  if (n > 0) {
    ASSERT_TRUE(meta->has_value());
    EXPECT_EQ((*meta)->next_seq, n);
  }
  *found = n;
}

TEST(DurabilityTest, KillRightAfterApplyLosesNothing) {
  ScratchDir dir;
  const std::string path = dir.File("arbor.db");
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) ChildApplyThenDie(path, 25, -1);
  ExpectKilled(pid);
  int found = 0;
  ExpectPrefixOfSteps(path, 25, &found);
  EXPECT_EQ(found, 25);
}

TEST(DurabilityTest, KillAtAnArbitraryMomentKeepsEveryAcknowledgedMutation) {
  for (int trial = 0; trial < 5; ++trial) {
    ScratchDir dir;
    const std::string path = dir.File("arbor.db");
    int fds[2];
    ASSERT_EQ(pipe(fds), 0);
    const pid_t pid = fork();
    ASSERT_GE(pid, 0);
    if (pid == 0) {
      close(fds[0]);
      ChildApplyThenDie(path, -1, fds[1]);
    }
    close(fds[1]);
    // Let the child get a varying distance into its stream of commits, then kill it mid-way.
    int32_t acked = 0;
    const int32_t target = 10 + 17 * trial;
    while (acked < target) {
      const ssize_t r = read(fds[0], &acked, sizeof(acked));
      if (r < 0 && errno == EINTR) continue;
      ASSERT_EQ(r, static_cast<ssize_t>(sizeof(acked)));
    }
    kill(pid, SIGKILL);
    ExpectKilled(pid);
    close(fds[0]);
    int found = 0;
    ExpectPrefixOfSteps(path, acked, &found);
  }
}

}  // namespace
}  // namespace arbor

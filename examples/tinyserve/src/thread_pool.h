// A fixed pool of worker threads for data-parallel loops. The calling thread takes part in
// every loop, so a pool of size 1 has no workers and no synchronisation cost. Workers spin
// briefly before sleeping on a condition variable: cheap hand-offs for back-to-back loops,
// no burnt core when idle. Not reentrant: ParallelFor must not be called from inside a task.
#pragma once

#include <atomic>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace tinyserve {

class ThreadPool {
 public:
  // `pin` binds thread i (the caller is thread 0) to CPU i modulo the CPUs available.
  ThreadPool(int threads, bool pin);
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  int size() const { return static_cast<int>(workers_.size()) + 1; }
  // Calls fn(begin, end) on contiguous, disjoint slices covering [0, n), one per thread.
  void ParallelFor(int n, const std::function<void(int, int)>& fn);

 private:
  void WorkerLoop(int index);
  void RunSlice(int index, int n, const std::function<void(int, int)>& fn);

  std::vector<std::thread> workers_;
  std::mutex mu_;
  std::condition_variable wake_;
  std::atomic<unsigned> generation_{0};
  std::atomic<int> pending_{0};
  std::atomic<bool> stop_{false};
  const std::function<void(int, int)>* task_ = nullptr;
  int task_n_ = 0;
};

}  // namespace tinyserve

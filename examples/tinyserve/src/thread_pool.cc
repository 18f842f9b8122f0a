#include "thread_pool.h"

#include <pthread.h>
#include <sched.h>

namespace tinyserve {
namespace {

constexpr int kSpinIterations = 20000;

void PinTo(std::thread::native_handle_type handle, int index) {
  cpu_set_t available;
  CPU_ZERO(&available);
  if (sched_getaffinity(0, sizeof available, &available) != 0) return;
  const int count = CPU_COUNT(&available);
  if (count <= 0) return;
  int wanted = index % count;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu) {
    if (!CPU_ISSET(cpu, &available)) continue;
    if (wanted-- == 0) {
      cpu_set_t one;
      CPU_ZERO(&one);
      CPU_SET(cpu, &one);
      pthread_setaffinity_np(handle, sizeof one, &one);
      return;
    }
  }
}

}  // namespace

ThreadPool::ThreadPool(int threads, bool pin) {
  for (int i = 1; i < threads; ++i) {
    workers_.emplace_back([this, i] { WorkerLoop(i); });
    if (pin) PinTo(workers_.back().native_handle(), i);
  }
  if (pin) PinTo(pthread_self(), 0);
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
    generation_.fetch_add(1);
  }
  wake_.notify_all();
  for (auto& t : workers_) t.join();
}

void ThreadPool::RunSlice(int index, int n, const std::function<void(int, int)>& fn) {
  const int threads = size();
  const int begin = static_cast<int>(static_cast<long>(n) * index / threads);
  const int end = static_cast<int>(static_cast<long>(n) * (index + 1) / threads);
  if (begin < end) fn(begin, end);
}

void ThreadPool::ParallelFor(int n, const std::function<void(int, int)>& fn) {
  if (workers_.empty() || n <= 1) {
    if (n > 0) fn(0, n);
    return;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    task_ = &fn;
    task_n_ = n;
    pending_.store(static_cast<int>(workers_.size()));
    generation_.fetch_add(1);
  }
  wake_.notify_all();
  RunSlice(0, n, fn);
  while (pending_.load(std::memory_order_acquire) != 0) {
  }
}

void ThreadPool::WorkerLoop(int index) {
  unsigned seen = 0;
  while (true) {
    int spins = 0;
    while (generation_.load(std::memory_order_acquire) == seen && spins < kSpinIterations) {
      ++spins;
    }
    if (generation_.load(std::memory_order_acquire) == seen) {
      std::unique_lock<std::mutex> lock(mu_);
      wake_.wait(lock, [&] { return generation_.load() != seen; });
    }
    if (stop_.load()) return;
    const std::function<void(int, int)>* task;
    int n;
    {
      std::lock_guard<std::mutex> lock(mu_);
      seen = generation_.load();
      task = task_;
      n = task_n_;
    }
    RunSlice(index, n, *task);
    pending_.fetch_sub(1, std::memory_order_release);
  }
}

}  // namespace tinyserve

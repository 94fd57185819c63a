#include <algorithm>
#include <atomic>
#include <system_error>
#include <thread>
#include <vector>

#if defined(__linux__)
#include <sched.h>
#endif

#include "core/router.h"
#include "optimized/families.h"
#include "optimized/threads.h"

namespace layoutcheck {

const Impl& optimized_impl() {
  static const FamilyRouter impl("optimized", {
                                                  {"tpu", &tpu_optimized()},
                                                  {"htp", &htp_optimized()},
                                                  {"tla", &tla_optimized()},
                                                  {"nvdla", &nvdla_optimized()},
                                                  {"mge", &mge_optimized()},
                                                  {"mge.strided", &mge_strided_optimized()},
                                              });
  return impl;
}

// ---- threads (optimized/threads.h) ------------------------------------------------

namespace {
thread_local unsigned t_requested = kAutoThreads;
}  // namespace

unsigned hardware_threads() {
#if defined(__linux__)
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    const int n = CPU_COUNT(&set);
    if (n > 0) return std::min<unsigned>(static_cast<unsigned>(n), kMaxThreads);
  }
#endif
  const unsigned n = std::thread::hardware_concurrency();
  return std::clamp<unsigned>(n, 1, kMaxThreads);
}

unsigned resolve_threads(unsigned requested, uint64_t bytes) {
  if (requested == kAutoThreads) return bytes >= kThreadedBytes ? hardware_threads() : 1;  // mutate: equivalent (a thread count changes no byte)
  return std::min(requested, kMaxThreads);
}

ThreadCountScope::ThreadCountScope(unsigned threads) : saved_(t_requested) { t_requested = threads; }
ThreadCountScope::~ThreadCountScope() { t_requested = saved_; }

unsigned requested_threads() { return t_requested; }

Status optimized_pack(const Case& c, const void* logical, size_t logical_size, void* physical, size_t physical_size,
                      unsigned threads) {
  ThreadCountScope scope(threads);
  return optimized_impl().pack(c, logical, logical_size, physical, physical_size);
}

Status optimized_unpack(const Case& c, const void* physical, size_t physical_size, void* logical, size_t logical_size,
                        unsigned threads) {
  ThreadCountScope scope(threads);
  return optimized_impl().unpack(c, physical, physical_size, logical, logical_size);
}

void parallel_ranges(uint64_t n, uint64_t bytes, RangeBody body) {
  const uint64_t t = std::min<uint64_t>(resolve_threads(requested_threads(), bytes), n);
  if (t <= 1) {  // mutate: equivalent (one thread or a pool of one runs the same ranges)
    if (n) body(0, n);
    return;
  }
  // Range i is [n*i/t, n*(i+1)/t): sizes differ by at most one.
  auto bound = [n, t](uint64_t i) { return n / t * i + n % t * i / t; };
  std::vector<std::thread> workers;
  workers.reserve(t - 1);  // mutate: equivalent (capacity only)
  uint64_t inline_from = t;  // ranges from here on run on this thread
  for (uint64_t i = 1; i < t; ++i) {
    try {
      workers.emplace_back(body, bound(i), bound(i + 1));
    } catch (const std::system_error&) {
      inline_from = i;
      break;
    }
  }
  body(bound(0), bound(1));
  for (uint64_t i = inline_from; i < t; ++i) body(bound(i), bound(i + 1));
  for (std::thread& w : workers) w.join();
}

void parallel_chunks(uint64_t n, uint64_t chunk, uint64_t bytes, RangeBody body) {
  chunk = std::max<uint64_t>(chunk, 1);
  const uint64_t chunks = n / chunk + (n % chunk != 0);
  const uint64_t t = std::min<uint64_t>(resolve_threads(requested_threads(), bytes), chunks);
  if (t <= 1) {  // mutate: equivalent (one thread runs the same ranges in order)
    if (n) body(0, n);
    return;
  }
  std::atomic<uint64_t> next{0};
  auto run = [&] {
    for (uint64_t i = next.fetch_add(1, std::memory_order_relaxed); i < chunks;
         i = next.fetch_add(1, std::memory_order_relaxed)) {
      body(i * chunk, std::min(n, (i + 1) * chunk));
    }
  };
  std::vector<std::thread> workers;
  workers.reserve(t - 1);  // mutate: equivalent (capacity only)
  for (uint64_t i = 1; i < t; ++i) {
    try {
      workers.emplace_back(run);
    } catch (const std::system_error&) {
      break;  // the threads there are take every range
    }
  }
  run();
  for (std::thread& w : workers) w.join();
}

}  // namespace layoutcheck

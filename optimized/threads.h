// optimized/threads.h — how many threads the optimized pack and unpack use.
//
// A caller asks for a count per call; a kernel splits the outer loop of its
// layout (surfaces x lines, kernel groups, ...) into disjoint ranges:
//
//   // pack with 4 threads, whatever the size (0: the default below)
//   Status s = optimized_pack(c, logical, logical_size, physical, physical_size, 4);
//
//   // inside a kernel: ranges of [0, lines), each written by one thread
//   parallel_ranges(lines, moved_bytes, [&](uint64_t begin, uint64_t end) {
//     for (uint64_t i = begin; i < end; ++i) convert_line(i);
//   });
//
// The default (kAutoThreads) is every core for tensors of kThreadedBytes and
// more, one thread below: starting threads costs tens of microseconds, a
// 256 KiB tensor converts in less. optimized_impl().pack() and unpack() run
// with the count of the innermost ThreadCountScope of the calling thread, or
// the default outside one. Ranges never share an output byte, so the result
// does not depend on the count.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <type_traits>

#include "layoutcheck/impl.h"

namespace layoutcheck {

constexpr unsigned kAutoThreads = 0;
constexpr uint64_t kThreadedBytes = uint64_t{16} << 20;
constexpr unsigned kMaxThreads = 1024;

// The cores this process may use (at least 1).
unsigned hardware_threads();

// What a request means for a tensor moving `bytes`: kAutoThreads is
// hardware_threads() at kThreadedBytes and more, 1 below; other counts are
// clamped to [1, kMaxThreads].
unsigned resolve_threads(unsigned requested, uint64_t bytes);

// Sets the count optimized pack/unpack use on this thread until it goes out of scope.
class ThreadCountScope {
 public:
  explicit ThreadCountScope(unsigned threads);
  ~ThreadCountScope();
  ThreadCountScope(const ThreadCountScope&) = delete;
  ThreadCountScope& operator=(const ThreadCountScope&) = delete;

 private:
  unsigned saved_;
};

// The count of the innermost ThreadCountScope of this thread, or kAutoThreads.
unsigned requested_threads();

// optimized_impl().pack()/unpack() with `threads` threads (kAutoThreads: the default).
Status optimized_pack(const Case& c, const void* logical, size_t logical_size, void* physical, size_t physical_size,
                      unsigned threads = kAutoThreads);
Status optimized_unpack(const Case& c, const void* physical, size_t physical_size, void* logical, size_t logical_size,
                        unsigned threads = kAutoThreads);

// body(begin, end) by reference: the callable outlives the call it is passed
// to. No allocation (a std::function of a lambda with many captures allocated
// on every conversion: a fifth of a small case's cost).
class RangeBody {
 public:
  template <typename F, typename = std::enable_if_t<!std::is_same_v<std::decay_t<F>, RangeBody>>>
  RangeBody(F&& f)  // NOLINT(google-explicit-constructor): lambdas convert at the call
      : object_(const_cast<void*>(static_cast<const void*>(std::addressof(f)))),
        call_([](void* o, uint64_t begin, uint64_t end) { (*static_cast<std::remove_reference_t<F>*>(o))(begin, end); }) {}
  void operator()(uint64_t begin, uint64_t end) const { call_(object_, begin, end); }

 private:
  void* object_;
  void (*call_)(void*, uint64_t, uint64_t);
};

// Calls body(begin, end) on disjoint ranges that cover [0, n), one per thread,
// with resolve_threads(requested_threads(), bytes) threads (never more than n).
// The calling thread runs the first range; if a thread cannot be started, its
// range runs on the calling thread. `body` must not throw.
void parallel_ranges(uint64_t n, uint64_t bytes, RangeBody body);

// The same threads, the ranges handed out as they go: body(begin, end) on
// consecutive ranges of `chunk` (the last one the rest) that cover [0, n), each
// to the first thread that is free, so a thread whose core is busy with other
// work takes fewer and the last one ends with the others. `body` runs several
// times on a thread, must not throw, and may not assume which thread runs
// which range.
void parallel_chunks(uint64_t n, uint64_t chunk, uint64_t bytes, RangeBody body);

}  // namespace layoutcheck

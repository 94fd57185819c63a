// Benchmark helpers: every row is measured beside a memcpy of the same bytes in
// the same run, and the program ends with a table of ratios to that memcpy.
//
//   static const bool registered = [] {
//     bench::register_case("tpu.aligned/fp32/16MiB", *parse_case(...), {&optimized_impl()});
//     return true;
//   }();
//
// Rows are named GROUP/OPERATION/IMPL; GROUP/memcpy is the baseline of GROUP.
#pragma once

#include <benchmark/benchmark.h>

#include <cstdio>

#include <cstdint>
#include <functional>
#include <new>
#include <string>
#include <vector>

#include "layoutcheck/impl.h"

namespace layoutcheck::bench {

// Every buffer a row measures starts on a cache line, as a tensor allocator's
// do (oneDNN, MegEngine and PyTorch align to 64 bytes or more), and as a plain
// std::vector of more than 128 KiB does not (glibc's mmap chunks start 16 bytes
// into a page). The memcpy baseline uses the same buffers.
template <typename T>
struct CacheLineAllocator {
  using value_type = T;
  static constexpr std::align_val_t kAlign{64};
  CacheLineAllocator() = default;
  template <typename U>
  CacheLineAllocator(const CacheLineAllocator<U>&) {}
  T* allocate(size_t n) { return static_cast<T*>(::operator new(n * sizeof(T), kAlign)); }
  void deallocate(T* p, size_t) { ::operator delete(p, kAlign); }
  template <typename U>
  bool operator==(const CacheLineAllocator<U>&) const { return true; }
  template <typename U>
  bool operator!=(const CacheLineAllocator<U>&) const { return false; }
};
using Buffer = std::vector<uint8_t, CacheLineAllocator<uint8_t>>;

// fill_position_unique() into a cache-line-aligned buffer.
Buffer position_unique(const Case& c, uint64_t seed);

// The bytes a conversion moves: the larger of the logical and physical sizes.
uint64_t moved_bytes(const Case& c, const Impl& impl);

// memcpy baseline, then pack and unpack with each implementation.
void register_case(const std::string& group, const Case& c, const std::vector<const Impl*>& impls);

// A table row: a group, its case, and whether the (slow) reference is measured too.
struct Row {
  const char* group;
  const char* layout;
  const char* dtype;
  const char* shape;
  bool with_reference = false;
};

// Runs `work` once per iteration of the state loop, with the memcpy baseline
// of the row interleaved: `bytes` from src to dst (the row's own buffers), as
// many times as the row ran, in slices of a few milliseconds between the
// row's iterations (the row's timer paused). The same pages and the same
// milliseconds as the row, so neither the placement of the buffers in memory
// nor the load of a shared host, which comes and goes, changes the ratio.
// Each slice starts with one untimed memcpy and ends with one untimed `work`,
// so that each is timed in the cache state it leaves itself, as when it runs
// alone (a streaming pack leaves its output out of the cache; a memcpy after
// it would pay for that). Reported as the counters memcpy_real and memcpy_cpu
// (seconds per iteration), which bench_report prefers to the memcpy row of
// the group.
void run_paired(benchmark::State& state, void* dst, const void* src, uint64_t bytes,
                const std::function<void()>& work);

// register_case() for every row; a row whose case does not parse or validate is
// reported on stderr. Returns the (group, case) pairs registered, for peer rows.
std::vector<std::pair<std::string, Case>> register_rows(const std::vector<Row>& rows);

// Any other row of a group (a peer library, a special kernel); `bytes` per iteration.
void register_row(const std::string& group, const std::string& row, uint64_t bytes,
                  std::function<void(benchmark::State&)> body);

}  // namespace layoutcheck::bench

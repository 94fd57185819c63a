#include "bench_util.h"

#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>

#include "layoutcheck/checker.h"
#include "optimized/threads.h"

namespace layoutcheck::bench {
namespace {

// The buffers of the row being measured, made once and kept across its
// repetitions (filling and first touching 64 MiB costs more than measuring it);
// freed when the next row starts.
struct RowBuffers {
  std::string row;
  Buffer a, b;  // each at least the row's bytes long, for its paired memcpy
  uint64_t a_size = 0, b_size = 0;  // the sizes the row passes
};

template <typename Make>
RowBuffers& row_buffers(const std::string& row, Make make) {
  static RowBuffers buffers;
  if (buffers.row != row) {
    buffers = RowBuffers();
    make(&buffers);
    buffers.row = row;
  }
  return buffers;
}

double thread_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace

void run_paired(benchmark::State& state, void* dst, const void* src, uint64_t bytes,
                const std::function<void()>& work) {
  double real = 0, cpu = 0;
  int64_t copies = 0;
  auto copy = [&](int64_t n) {
    std::memcpy(dst, src, bytes);  // into memcpy's own cache state, untimed
    const double cpu0 = thread_cpu_seconds();
    const auto real0 = std::chrono::steady_clock::now();
    for (int64_t i = 0; i < n; ++i) {
      std::memcpy(dst, src, bytes);
      benchmark::DoNotOptimize(dst);
      benchmark::ClobberMemory();
    }
    real += std::chrono::duration<double>(std::chrono::steady_clock::now() - real0).count();
    cpu += thread_cpu_seconds() - cpu0;
    copies += n;
  };
  // An untimed copy sets the slice: about 2 ms of memcpy, at least 4 of each.
  const auto t0 = std::chrono::steady_clock::now();
  std::memcpy(dst, src, bytes);
  const double once = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const int64_t slice = std::clamp<int64_t>(static_cast<int64_t>(2e-3 / std::max(once, 1e-9)), 4, 1 << 16);
  int64_t pending = 0;
  for (auto _ : state) {
    work();
    benchmark::ClobberMemory();
    if (++pending == slice) {
      state.PauseTiming();
      copy(pending);
      pending = 0;
      work();  // back into the row's own cache state, untimed
      benchmark::ClobberMemory();
      state.ResumeTiming();
    }
  }
  if (pending != 0 || copies == 0) copy(std::max<int64_t>(pending, 1));
  state.counters["memcpy_real"] = benchmark::Counter(real / static_cast<double>(copies));
  state.counters["memcpy_cpu"] = benchmark::Counter(cpu / static_cast<double>(copies));
}

Buffer position_unique(const Case& c, uint64_t seed) {
  std::vector<uint8_t> logical;
  fill_position_unique(c, seed, &logical);
  return Buffer(logical.begin(), logical.end());
}

uint64_t moved_bytes(const Case& c, const Impl& impl) {
  return std::max(*logical_bytes(c), *impl.size_bytes(c));
}

void register_row(const std::string& group, const std::string& row, uint64_t bytes,
                  std::function<void(benchmark::State&)> body) {
  benchmark::RegisterBenchmark((group + "/" + row).c_str(), [bytes, body](benchmark::State& state) {
    body(state);
    state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
  })->Unit(benchmark::kMillisecond)->UseRealTime();
}

void register_case(const std::string& group, const Case& c, const std::vector<const Impl*>& impls) {
  Status s = reference_impl().supports(c);
  if (!s.ok()) {
    std::fprintf(stderr, "bench %s: %s\n", group.c_str(), s.message().c_str());
    return;
  }
  const uint64_t bytes = moved_bytes(c, reference_impl());
  register_row(group, "memcpy", bytes, [group, bytes](benchmark::State& state) {
    RowBuffers& rb = row_buffers(group + "/memcpy", [&](RowBuffers* b) {
      b->a.assign(bytes, 1);
      b->b.assign(bytes, 0);
    });
    Buffer& src = rb.a;
    Buffer& dst = rb.b;
    for (auto _ : state) {
      std::memcpy(dst.data(), src.data(), bytes);
      benchmark::DoNotOptimize(dst.data());
      benchmark::ClobberMemory();
    }
  });
  for (const Impl* impl : impls) {
    for (bool pack : {true, false}) {
      register_row(group, std::string(pack ? "pack/" : "unpack/") + impl->name(), bytes,
                   [group, c, impl, pack, bytes](benchmark::State& state) {
                     Status st;
                     RowBuffers& rb = row_buffers(group + "/" + impl->name() + (pack ? "/pack" : "/unpack"),
                                                  [&](RowBuffers* b) {
                                                    b->a = position_unique(c, 1);
                                                    b->a_size = b->a.size();
                                                    b->b_size = *impl->size_bytes(c);
                                                    b->a.resize(std::max(b->a_size, bytes));
                                                    b->b.assign(std::max(b->b_size, bytes), 0);
                                                    st = impl->pack(c, b->a.data(), b->a_size, b->b.data(),
                                                                    b->b_size);
                                                  });
                     uint8_t* logical = rb.a.data();
                     uint8_t* physical = rb.b.data();
                     ThreadCountScope one_thread(1);  // the thread rows: bench/threads_bench.cc
                     run_paired(state, pack ? physical : logical, pack ? logical : physical, bytes, [&] {
                       st = pack ? impl->pack(c, logical, rb.a_size, physical, rb.b_size)
                                 : impl->unpack(c, physical, rb.b_size, logical, rb.a_size);
                     });
                     if (!st.ok()) state.SkipWithError(st.message().c_str());
                   });
    }
  }
}

std::vector<std::pair<std::string, Case>> register_rows(const std::vector<Row>& rows) {
  std::vector<std::pair<std::string, Case>> out;
  for (const Row& r : rows) {
    auto c = parse_case(r.layout, r.dtype, r.shape);
    if (!c.ok()) {
      std::fprintf(stderr, "bench %s: %s\n", r.group, c.status().message().c_str());
      continue;
    }
    if (!reference_impl().supports(*c).ok()) {
      register_case(r.group, *c, {});  // reports the rule the case breaks
      continue;
    }
    std::vector<const Impl*> impls = {&optimized_impl()};
    if (r.with_reference) impls.push_back(&reference_impl());
    register_case(r.group, *c, impls);
    out.emplace_back(r.group, *c);
  }
  return out;
}

namespace {

// Prints the usual console rows, then each row's speed as a ratio to the memcpy
// paired with it (its group's memcpy row if it has none).
class RatioReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const auto& r : runs) {
      if (r.error_occurred || r.run_type != Run::RT_Iteration) continue;
      std::string name = r.benchmark_name();
      if (size_t slash = name.find("/real_time"); slash != std::string::npos) name.resize(slash);
      seconds_[name] = r.GetAdjustedRealTime();
      if (auto it = r.counters.find("memcpy_real"); it != r.counters.end()) {
        // run_paired's memcpy seconds, in the unit of GetAdjustedRealTime().
        paired_[name] = it->second.value * benchmark::GetTimeUnitMultiplier(r.time_unit);
      }
      order_.push_back(name);
    }
  }
  void Finalize() override {
    ConsoleReporter::Finalize();
    std::printf("\n%-64s %10s\n", "row", "x memcpy");
    for (const auto& name : order_) {
      if (name.size() >= 7 && name.compare(name.size() - 7, 7, "/memcpy") == 0) continue;
      std::string group = name;
      std::string base;
      // The group is everything before the operation: try successively shorter prefixes.
      while (!group.empty()) {
        size_t slash = group.rfind('/');
        if (slash == std::string::npos) break;
        group.resize(slash);
        if (seconds_.count(group + "/memcpy")) {
          base = group + "/memcpy";
          break;
        }
      }
      if (base.empty()) continue;
      const auto paired = paired_.find(name);
      std::printf("%-64s %10.3g\n", name.c_str(),
                  (paired != paired_.end() ? paired->second : seconds_[base]) / seconds_[name]);
    }
  }

 private:
  std::map<std::string, double> seconds_;
  std::map<std::string, double> paired_;  // the memcpy paired with the row, if any
  std::vector<std::string> order_;
};

}  // namespace
}  // namespace layoutcheck::bench

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  layoutcheck::bench::RatioReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();
  return 0;
}

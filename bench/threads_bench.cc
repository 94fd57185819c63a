// Threads (optimized/threads.h): large packs and unpacks with one thread and
// with every core, beside a one-thread memcpy of the same bytes and a copy
// with streaming stores by as many threads (the memory's ceiling). Rows are
// named threads/GROUP/pack/1-thread, threads/GROUP/pack/N-threads and
// threads/GROUP/stream-copy/N-threads; their wall-clock ratio is the one to
// read (the CPU time is the calling thread's).
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "bench_util.h"
#include "layoutcheck/checker.h"
#include "optimized/isa.h"
#include "optimized/stream_run.h"
#include "optimized/threads.h"

namespace layoutcheck {
namespace {

// n bytes with the whole lines of dst streamed (optimized/stream_run.h, the
// kernels' own way out of a stage) at the ISA level the kernels use; memcpy
// below AVX2 or off x86-64.
void stream_copy(uint8_t* dst, const uint8_t* src, uint64_t n) {
#if defined(__x86_64__) || defined(_M_X64)
  if (isa_at_least(Isa::kAvx512)) {
    stream_run(dst, src, n);
  } else if (isa_at_least(Isa::kAvx2)) {
    stream_run_avx2(dst, src, n);
  } else {
    std::memcpy(dst, src, n);
    return;
  }
  _mm_sfence();
#else
  std::memcpy(dst, src, n);
#endif
}

void register_thread_rows(const std::string& name, const char* layout, const char* dtype, const char* shape) {
  auto parsed = parse_case(layout, dtype, shape);
  if (!parsed.ok() || !optimized_impl().supports(*parsed).ok()) {
    std::fprintf(stderr, "bench %s: %s\n", name.c_str(),
                 parsed.ok() ? optimized_impl().supports(*parsed).message().c_str() : parsed.status().message().c_str());
    return;
  }
  const Case c = *parsed;
  const std::string group = "threads/" + name;
  const uint64_t bytes = bench::moved_bytes(c, optimized_impl());
  bench::register_row(group, "memcpy", bytes, [bytes](benchmark::State& state) {
    bench::Buffer src(bytes, 1), dst(bytes, 0);
    for (auto _ : state) {
      std::memcpy(dst.data(), src.data(), bytes);
      benchmark::DoNotOptimize(dst.data());
      benchmark::ClobberMemory();
    }
  });
  std::vector<unsigned> counts = {1};
  if (hardware_threads() > 1) counts.push_back(hardware_threads());
  // The memory's ceiling for a conversion that streams its output: a copy of
  // the same bytes with non-temporal stores (no read of the destination, as
  // the conversions' streamed writes; glibc's memcpy streams only far larger
  // copies), by one thread and by as many as the rows, in slices of kSlice.
  for (unsigned n : counts) {
    const std::string row = "stream-copy/" + std::to_string(n) + (n == 1 ? "-thread" : "-threads");
    bench::register_row(group, row, bytes, [n, bytes](benchmark::State& state) {
      constexpr uint64_t kSlice = uint64_t{64} << 10;
      bench::Buffer src(bytes, 1), dst(bytes, 0);
      const ThreadCountScope scope(n);
      bench::run_paired(state, dst.data(), src.data(), bytes, [&] {
        parallel_ranges((bytes + kSlice - 1) / kSlice, bytes, [&](uint64_t begin, uint64_t end) {
          stream_copy(dst.data() + begin * kSlice, src.data() + begin * kSlice,
                      std::min(end * kSlice, bytes) - begin * kSlice);
        });
      });
    });
  }
  for (bool pack : {true, false}) {
    for (unsigned n : counts) {
      const std::string row = std::string(pack ? "pack/" : "unpack/") + std::to_string(n) + (n == 1 ? "-thread" : "-threads");
      bench::register_row(group, row, bytes, [c, pack, n, bytes](benchmark::State& state) {
        bench::Buffer logical = bench::position_unique(c, 1);
        const uint64_t logical_size = logical.size(), physical_size = *optimized_impl().size_bytes(c);
        logical.resize(std::max(logical_size, bytes));
        bench::Buffer physical(std::max(physical_size, bytes), 0);
        Status st = optimized_pack(c, logical.data(), logical_size, physical.data(), physical_size, n);
        bench::run_paired(state, pack ? physical.data() : logical.data(), pack ? logical.data() : physical.data(),
                          bytes, [&] {
                            st = pack ? optimized_pack(c, logical.data(), logical_size, physical.data(),
                                                       physical_size, n)
                                      : optimized_unpack(c, physical.data(), physical_size, logical.data(),
                                                         logical_size, n);
                          });
        if (!st.ok()) state.SkipWithError(st.message().c_str());
      });
    }
  }
}

const bool registered = [] {
  register_thread_rows("nvdla.feature/int8/16MiB", "nvdla.feature", "int8", "256,256,256");
  register_thread_rows("nvdla.feature/fp16/16MiB", "nvdla.feature", "fp16", "128,256,256");
  register_thread_rows("nvdla.pixel/T_A8B8G8R8/4k", "nvdla.pixel(format=T_A8B8G8R8)", "uint8", "2160,3840,4");
  register_thread_rows("tpu.aligned/fp32/16MiB", "tpu.aligned(chip=bm1684x)", "fp32", "4,64,128,128");
  register_thread_rows("htp.crouton/uint8/64MiB", "htp.crouton", "uint8", "1,256,256,1024");
  register_thread_rows("htp.depth32/fp16/64MiB", "htp.depth32", "fp16", "1,256,256,512");
  register_thread_rows("htp.crouton/uint8/padded-16MiB", "htp.crouton", "uint8", "1,250,250,250");
  register_thread_rows("htp.crouton4x1/uint8/64MiB", "htp.crouton4x1", "uint8", "1,256,256,1024");
  register_thread_rows("htp.crouton2x2/uint8/64MiB", "htp.crouton2x2", "uint8", "1,256,256,1024");
  register_thread_rows("htp.weights/uint8/16MiB", "htp.weights", "uint8", "3,3,1024,1820");
  register_thread_rows("tla.nZ/int8/2048x4096", "tla.nZ", "int8", "2048,4096");
  register_thread_rows("mge.nchw4/fp32/64MiB", "mge.nchw4", "fp32", "8,64,256,128");
  register_thread_rows("mge.nchw32/int8/64MiB", "mge.nchw32", "int8", "16,128,256,128");
  register_thread_rows("mge.nhwc/fp32/64MiB", "mge.nhwc", "fp32", "8,64,256,128");
  register_thread_rows("mge.chwn4/int8/64MiB", "mge.chwn4", "int8", "16,128,256,128");
  register_thread_rows("tpu.aligned-4n/int8/16MiB", "tpu.aligned(chip=bm1684x,mode=4n)", "int8", "16,64,128,128");
  register_thread_rows("tpu.matrix/fp32/16MiB", "tpu.matrix(chip=bm1684x,w=16384)", "fp32", "4,1048576");
  return true;
}();

}  // namespace
}  // namespace layoutcheck

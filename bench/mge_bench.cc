// MegEngine: pack (NCHW -> format) and unpack of fp32 and int8 tensors, one
// cache-sized (256 KiB) and one DRAM-sized (64 MiB) per format, beside memcpy
// and oneDNN's reorder of the same conversion (run with OMP_NUM_THREADS=1 to
// compare single-threaded code with single-threaded code). The threads group
// puts oneDNN with 1 thread and with every core beside layoutcheck's rows of
// the same counts (bench/threads_bench.cc).
#include <algorithm>

#include "bench_util.h"
#include "optimized/threads.h"

#if defined(LAYOUTCHECK_HAVE_DNNL)
#include <oneapi/dnnl/dnnl.hpp>
#if defined(_OPENMP)
#include <omp.h>
#endif
#endif

namespace layoutcheck {
namespace {

#if defined(LAYOUTCHECK_HAVE_DNNL)
using dt = dnnl::memory::data_type;

// NCHWX / CHWN4 as oneDNN blocking descriptors (as in tests/differential/mge_onednn_test.cc).
dnnl::memory::desc blocked(const Shape& s, dt type, int64_t block, bool chwn) {
  dnnl_memory_desc_t md{};
  md.ndims = 4;
  const int64_t N = s[0], C = s[1], H = s[2], W = s[3], Cp = (C + block - 1) / block * block;
  const int64_t dims[4] = {N, C, H, W}, padded[4] = {N, Cp, H, W};
  for (int i = 0; i < 4; ++i) md.dims[i] = dims[i], md.padded_dims[i] = padded[i];
  md.data_type = static_cast<dnnl_data_type_t>(type);
  md.format_kind = dnnl_blocked;
  auto& b = md.format_desc.blocking;
  b.inner_nblks = 1;
  b.inner_blks[0] = block;
  b.inner_idxs[0] = 1;
  if (chwn) {
    b.strides[0] = block, b.strides[3] = N * block, b.strides[2] = W * N * block, b.strides[1] = H * W * N * block;
  } else {
    b.strides[3] = block, b.strides[2] = W * block, b.strides[1] = H * W * block, b.strides[0] = Cp * H * W;
  }
  return dnnl::memory::desc(md);
}

// Sets oneDNN's thread count while it lives (OpenMP runtime only); 0 leaves it.
class OneDnnThreads {
 public:
  explicit OneDnnThreads(unsigned n) {
#if defined(_OPENMP)
    if (n > 0) {
      saved_ = omp_get_max_threads();
      omp_set_num_threads(static_cast<int>(n));
    }
#else
    (void)n;
#endif
  }
  ~OneDnnThreads() {
#if defined(_OPENMP)
    if (saved_ > 0) omp_set_num_threads(saved_);
#endif
  }
  OneDnnThreads(const OneDnnThreads&) = delete;
  OneDnnThreads& operator=(const OneDnnThreads&) = delete;

 private:
  int saved_ = 0;
};

// Whether the thread count of oneDNN can be set from here.
bool onednn_threads_settable() {
#if defined(_OPENMP)
  return dnnl::version()->cpu_runtime == DNNL_RUNTIME_OMP;
#else
  return false;
#endif
}

// oneDNN's reorder of the same conversion as pack/IMPL and unpack/IMPL rows:
// pack/onednn, or pack/onednn-N-threads with `threads` threads.
void register_onednn(const std::string& group, const Case& c, unsigned threads = 0) {
  if (c.dtype == DType::kInt4 || c.dtype == DType::kUInt4) return;  // oneDNN 2.x has no 4-bit type
  const dt type = c.dtype == DType::kFp32 ? dt::f32 : c.dtype == DType::kFp16 ? dt::f16 : dt::s8;
  const dnnl::memory::dims d(c.shape.begin(), c.shape.end());
  const dnnl::memory::desc plain(d, type, dnnl::memory::format_tag::nchw);
  const std::string f = c.layout.name;
  const dnnl::memory::desc phys = f == "mge.nhwc"     ? dnnl::memory::desc(d, type, dnnl::memory::format_tag::nhwc)
                                  : f == "mge.chwn4"  ? blocked(c.shape, type, 4, true)
                                  : f == "mge.nchw4"  ? blocked(c.shape, type, 4, false)
                                  : f == "mge.nchw32" ? blocked(c.shape, type, 32, false)
                                                      : blocked(c.shape, type, 64, false);
  const uint64_t bytes = bench::moved_bytes(c, reference_impl());
  const std::string impl = threads == 0 ? "onednn"
                           : "onednn-" + std::to_string(threads) + (threads == 1 ? "-thread" : "-threads");
  for (bool pack : {true, false}) {
    bench::register_row(group, (pack ? "pack/" : "unpack/") + impl, bytes, [=](benchmark::State& state) {
      const OneDnnThreads scope(threads);
      static dnnl::engine engine(dnnl::engine::kind::cpu, 0);
      dnnl::stream stream(engine);
      bench::Buffer logical(std::max<uint64_t>(plain.get_size(), bytes), 1),
          physical(std::max<uint64_t>(phys.get_size(), bytes), 2);
      dnnl::memory a(plain, engine, logical.data()), b(phys, engine, physical.data());
      dnnl::reorder r = pack ? dnnl::reorder(a, b) : dnnl::reorder(b, a);
      // One execution outside the timing, as the layoutcheck rows pack once
      // before theirs: the first one pays oneDNN's lazy set-up.
      if (pack) r.execute(stream, a, b);
      else r.execute(stream, b, a);
      stream.wait();
      bench::run_paired(state, pack ? physical.data() : logical.data(), pack ? logical.data() : physical.data(),
                        bytes, [&] {
                          if (pack) r.execute(stream, a, b);
                          else r.execute(stream, b, a);
                          stream.wait();
                        });
    });
  }
}
#endif

const bool registered = [] {
  const auto rows = bench::register_rows({
      bench::Row{"mge.nchw4/fp32/256KiB", "mge.nchw4", "fp32", "1,64,32,32"},
      bench::Row{"mge.nchw4/fp32/64MiB", "mge.nchw4", "fp32", "8,64,256,128"},
      bench::Row{"mge.nchw32/int8/256KiB", "mge.nchw32", "int8", "1,64,64,64"},
      bench::Row{"mge.nchw32/int8/64MiB", "mge.nchw32", "int8", "16,128,256,128"},
      bench::Row{"mge.nchw64/int8/256KiB", "mge.nchw64", "int8", "1,64,64,64"},
      bench::Row{"mge.nchw64/int8/64MiB", "mge.nchw64", "int8", "16,128,256,128"},
      // A late convolution layer: groups of 49 pixels, fewer than a tile.
      bench::Row{"mge.nchw64/int8/98KiB-7x7", "mge.nchw64", "int8", "1,2048,7,7"},
      bench::Row{"mge.nhwc/fp32/392KiB-7x7", "mge.nhwc", "fp32", "1,2048,7,7"},
      bench::Row{"mge.nhwc/fp16/196KiB-7x7", "mge.nhwc", "fp16", "1,2048,7,7"},
      bench::Row{"mge.nchw4/fp16/49KiB-7x7", "mge.nchw4", "fp16", "1,512,7,7"},
      // Images of one pixel (after a global pooling), a batch of eight.
      bench::Row{"mge.nchw64/int8/16KiB-1x1", "mge.nchw64", "int8", "8,2048,1,1"},
      bench::Row{"mge.nhwc/fp32/64KiB-1x1", "mge.nhwc", "fp32", "8,2048,1,1"},
      bench::Row{"mge.nchw4/int8/64MiB", "mge.nchw4", "int8", "16,128,256,128"},
      bench::Row{"mge.nhwc/fp32/64MiB", "mge.nhwc", "fp32", "8,64,256,128"},
      bench::Row{"mge.chwn4/int8/64MiB", "mge.chwn4", "int8", "16,128,256,128"},
      // 16-bit elements (fp16 networks): in cache, rows 4 KiB apart; streamed.
      bench::Row{"mge.nchw32/fp16/256KiB", "mge.nchw32", "fp16", "1,64,32,64"},
      bench::Row{"mge.nhwc/fp16/64MiB", "mge.nhwc", "fp16", "8,64,256,256"},
      bench::Row{"mge.nchw4/fp16/64MiB", "mge.nchw4", "fp16", "8,64,256,256"},
      // A batch of RGB input images (groups of 3 rows), and 4-bit weights and
      // activations (NCHW64 is MegEngine's layout for them; no oneDNN peer).
      bench::Row{"mge.nhwc/uint8/24MiB-rgb", "mge.nhwc", "uint8", "32,3,512,512"},
      bench::Row{"mge.nchw64/int4/256KiB", "mge.nchw64", "int4", "1,128,64,64"},
      bench::Row{"mge.nchw64/int4/32MiB", "mge.nchw64", "int4", "16,128,256,128"},
      // A layer of 24 channels (MobileNet's): groups of rows no tile takes.
      bench::Row{"mge.nhwc/int8/24MiB-c24", "mge.nhwc", "int8", "16,24,256,256"},
  });
#if defined(LAYOUTCHECK_HAVE_DNNL)
  for (const auto& [group, c] : rows) register_onednn(group, c);
  if (onednn_threads_settable()) {
    auto threaded = parse_case("mge.nchw4", "fp32", "8,64,256,128");
    std::vector<unsigned> counts = {1};
    if (hardware_threads() > 1) counts.push_back(hardware_threads());
    for (unsigned n : counts) register_onednn("threads/mge.nchw4/fp32/64MiB", *threaded, n);
  } else {
    std::fprintf(stderr, "layoutcheck_bench: oneDNN's thread count cannot be set (not its OpenMP runtime): "
                         "no oneDNN rows in the threads group\n");
  }
#else
  (void)rows;
  std::fprintf(stderr, "layoutcheck_bench: the oneDNN peer rows are missing: %s\n", LAYOUTCHECK_DNNL_MISSING);
#endif
  return true;
}();

}  // namespace
}  // namespace layoutcheck

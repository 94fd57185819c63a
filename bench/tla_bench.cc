// CATLASS TLA: zN/nZ (and zZ/nN) pack and unpack of fp16, int8 and fp32 matrices
// (8 MiB, inside the last-level cache, and 32 MiB, past it),
// beside memcpy of the same bytes; one general nested layout for the
// table-driven path.
#include "bench_util.h"

namespace layoutcheck {
namespace {

const bool registered = [] {
  bench::register_rows({
      bench::Row{"tla.zN/fp16/2048x2048", "tla.zN", "fp16", "2048,2048", false},
      bench::Row{"tla.nZ/fp16/2048x2048", "tla.nZ", "fp16", "2048,2048", false},
      bench::Row{"tla.zN/int8/2048x4096", "tla.zN", "int8", "2048,4096", false},
      bench::Row{"tla.nZ/int8/2048x4096", "tla.nZ", "int8", "2048,4096", false},
      bench::Row{"tla.zZ/fp16/2048x2048", "tla.zZ", "fp16", "2048,2048", false},
      bench::Row{"tla.nN/fp16/2048x2048", "tla.nN", "fp16", "2048,2048", false},
      bench::Row{"tla.zN/fp16/32MiB", "tla.zN", "fp16", "4096,4096", false},
      bench::Row{"tla.nZ/fp16/32MiB", "tla.nZ", "fp16", "4096,4096", false},
      bench::Row{"tla.zN/int8/32MiB", "tla.zN", "int8", "4096,8192", false},
      bench::Row{"tla.nZ/int8/32MiB", "tla.nZ", "int8", "4096,8192", false},
      bench::Row{"tla.zN/fp16/256x256", "tla.zN", "fp16", "256,256", true},
      bench::Row{"tla.nZ/int8/256x512", "tla.nZ", "int8", "256,512", false},
      bench::Row{"tla.zN/fp16/2047x2047-padded", "tla.zN", "fp16", "2047,2047", false},
      // fp32: fractals of 8 x 16 (C0 = 8 elements).
      bench::Row{"tla.nZ/fp32/2048x2048", "tla.nZ", "fp32", "2048,2048", false},
      bench::Row{"tla.nN/fp32/256x256", "tla.nN", "fp32", "256,256", false},
      bench::Row{"tla.layout/fp16/nested-1024x1024", "((16,64),(16,64)):((16,16384),(1,256))", "fp16", "1024,1024", false},
  });
  return true;
}();

}  // namespace
}  // namespace layoutcheck

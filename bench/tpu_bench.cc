// Sophgo TPU: pack and unpack of tensors that fill a bm1684x local memory image
// (64 NPUs x 256 KiB = 16 MiB), beside memcpy of the same bytes.
#include "bench_util.h"

namespace layoutcheck {
namespace {

const bool registered = [] {
  bench::register_rows({
      bench::Row{"tpu.aligned/fp32/16MiB", "tpu.aligned(chip=bm1684x)", "fp32", "4,64,128,128", true},
      bench::Row{"tpu.compact/fp32/16MiB", "tpu.compact(chip=bm1684x)", "fp32", "4,64,128,128", false},
      bench::Row{"tpu.aligned/fp16/8MiB-in-16MiB", "tpu.aligned(chip=bm1684x)", "fp16", "4,64,128,128", false},
      bench::Row{"tpu.compact/int8/16MiB", "tpu.compact(chip=bm1684x)", "int8", "16,64,128,128", false},
      bench::Row{"tpu.aligned-4n/int8/16MiB", "tpu.aligned(chip=bm1684x,mode=4n)", "int8", "16,64,128,128", false},
      bench::Row{"tpu.aligned-2n/int16/16MiB", "tpu.aligned(chip=bm1684x,mode=2n)", "int16", "8,64,128,128", false},
      bench::Row{"tpu.matrix/fp32/16MiB", "tpu.matrix(chip=bm1684x,w=16384)", "fp32", "4,1048576", false},
      bench::Row{"tpu.aligned/fp32/1MiB", "tpu.aligned(npus=64,lmem=16384)", "fp32", "1,64,64,64", false},
  });
  return true;
}();

}  // namespace
}  // namespace layoutcheck

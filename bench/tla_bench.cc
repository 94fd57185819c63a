// CATLASS TLA: zN/nZ (and zZ/nN) pack and unpack of fp16 and int8 matrices,
// beside memcpy of the same bytes; one general nested layout for the
// table-driven path.
#include "bench_util.h"

namespace layoutcheck {
namespace {

const bool registered = [] {
  const std::vector<const Impl*> both = {&optimized_impl(), &reference_impl()};
  const std::vector<const Impl*> fast = {&optimized_impl()};
  struct Row { const char* group; const char* layout; const char* dtype; const char* shape; bool with_reference; };
  for (const Row& r : {
           Row{"tla.zN/fp16/2048x2048", "tla.zN", "fp16", "2048,2048", false},
           Row{"tla.nZ/fp16/2048x2048", "tla.nZ", "fp16", "2048,2048", false},
           Row{"tla.zN/int8/2048x4096", "tla.zN", "int8", "2048,4096", false},
           Row{"tla.nZ/int8/2048x4096", "tla.nZ", "int8", "2048,4096", false},
           Row{"tla.zZ/fp16/2048x2048", "tla.zZ", "fp16", "2048,2048", false},
           Row{"tla.nN/fp16/2048x2048", "tla.nN", "fp16", "2048,2048", false},
           Row{"tla.zN/fp16/256x256", "tla.zN", "fp16", "256,256", true},
           Row{"tla.nZ/int8/256x512", "tla.nZ", "int8", "256,512", false},
           Row{"tla.zN/fp16/2047x2047-padded", "tla.zN", "fp16", "2047,2047", false},
           Row{"tla.layout/fp16/nested-1024x1024", "((16,64),(16,64)):((16,16384),(1,256))", "fp16", "1024,1024", false},
       }) {
    auto c = parse_case(r.layout, r.dtype, r.shape);
    if (c.ok()) bench::register_case(r.group, *c, r.with_reference ? both : fast);
  }
  return true;
}();

}  // namespace
}  // namespace layoutcheck

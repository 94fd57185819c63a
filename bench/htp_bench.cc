// Qualcomm HTP: crouton and depth32 pack/unpack of 64 MiB activations (uint8
// and fp16), padded tensors, the tiled layouts (crouton4x1, crouton2x2,
// weights), and the reference on a small one, each beside memcpy of the same
// bytes.
#include "bench_util.h"

namespace layoutcheck {
namespace {

const bool registered = [] {
  const std::vector<const Impl*> both = {&optimized_impl(), &reference_impl()};
  const std::vector<const Impl*> fast = {&optimized_impl()};
  struct Row { const char* group; const char* layout; const char* dtype; const char* shape; bool with_reference; };
  for (const Row& r : {
           Row{"htp.crouton/uint8/64MiB", "htp.crouton", "uint8", "1,256,256,1024", false},
           Row{"htp.crouton/fp16/64MiB", "htp.crouton", "fp16", "1,256,256,512", false},
           Row{"htp.depth32/uint8/64MiB", "htp.depth32", "uint8", "1,256,256,1024", false},
           Row{"htp.depth32/fp16/64MiB", "htp.depth32", "fp16", "1,256,256,512", false},
           Row{"htp.crouton/uint8/padded-16MiB", "htp.crouton", "uint8", "1,250,250,250", false},
           Row{"htp.depth32/fp16/padded-16MiB", "htp.depth32", "fp16", "1,255,255,125", false},
           Row{"htp.crouton4x1/uint8/64MiB", "htp.crouton4x1", "uint8", "1,256,256,1024", false},
           Row{"htp.crouton2x2/uint8/64MiB", "htp.crouton2x2", "uint8", "1,256,256,1024", false},
           Row{"htp.weights/uint8/16MiB", "htp.weights", "uint8", "3,3,1024,1820", false},
           Row{"htp.crouton/uint8/1MiB", "htp.crouton", "uint8", "1,32,32,1024", true},
       }) {
    auto c = parse_case(r.layout, r.dtype, r.shape);
    if (c.ok()) bench::register_case(r.group, *c, r.with_reference ? both : fast);
  }
  return true;
}();

}  // namespace
}  // namespace layoutcheck

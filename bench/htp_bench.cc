// Qualcomm HTP: crouton and depth32 pack/unpack of 64 MiB activations (uint8
// and fp16), padded tensors, the tiled layouts (crouton4x1, crouton2x2,
// weights), and the reference on a small one, each beside memcpy of the same
// bytes.
#include "bench_util.h"

namespace layoutcheck {
namespace {

const bool registered = [] {
  bench::register_rows({
      bench::Row{"htp.crouton/uint8/64MiB", "htp.crouton", "uint8", "1,256,256,1024", false},
      bench::Row{"htp.crouton/fp16/64MiB", "htp.crouton", "fp16", "1,256,256,512", false},
      bench::Row{"htp.depth32/uint8/64MiB", "htp.depth32", "uint8", "1,256,256,1024", false},
      bench::Row{"htp.depth32/fp16/64MiB", "htp.depth32", "fp16", "1,256,256,512", false},
      bench::Row{"htp.crouton/uint8/padded-16MiB", "htp.crouton", "uint8", "1,250,250,250", false},
      bench::Row{"htp.depth32/fp16/padded-16MiB", "htp.depth32", "fp16", "1,255,255,125", false},
      bench::Row{"htp.crouton4x1/uint8/64MiB", "htp.crouton4x1", "uint8", "1,256,256,1024", false},
      bench::Row{"htp.crouton2x2/uint8/64MiB", "htp.crouton2x2", "uint8", "1,256,256,1024", false},
      bench::Row{"htp.crouton4x1/uint8/padded-16MiB", "htp.crouton4x1", "uint8", "1,255,255,256", false},
      bench::Row{"htp.crouton2x2/uint8/padded-16MiB", "htp.crouton2x2", "uint8", "1,255,255,256", false},
      bench::Row{"htp.weights/uint8/16MiB", "htp.weights", "uint8", "3,3,1024,1820", false},
      bench::Row{"htp.crouton/uint8/1MiB", "htp.crouton", "uint8", "1,32,32,1024", true},
  });
  return true;
}();

}  // namespace
}  // namespace layoutcheck

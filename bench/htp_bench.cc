// Qualcomm HTP: crouton and depth32 pack/unpack of 64 MiB activations (uint8
// and fp16), padded tensors, the tiled layouts (crouton4x1, crouton2x2,
// crouton2, weights), the NCHW transposes, in-cache tensors, and the
// reference on a small one, each beside memcpy of the same bytes.
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
      bench::Row{"htp.crouton2/uint8/64MiB", "htp.crouton2", "uint8", "1,256,256,1024", false},
      bench::Row{"htp.crouton2/uint8/padded-16MiB", "htp.crouton2", "uint8", "1,255,255,256", false},
      bench::Row{"htp.crouton4x1/fp16/64MiB", "htp.crouton4x1", "fp16", "1,256,256,512", false},
      bench::Row{"htp.nchw/uint8/64MiB", "htp.nchw", "uint8", "1,256,256,1024", false},
      bench::Row{"htp.crouton2/uint8/256KiB", "htp.crouton2", "uint8", "1,32,32,256", false},
      bench::Row{"htp.crouton2x2/fp16/256KiB", "htp.crouton2x2", "fp16", "1,32,32,128", false},
      bench::Row{"htp.nchw/fp16/256KiB", "htp.nchw", "fp16", "1,32,32,128", false},
      bench::Row{"htp.crouton/uint8/1MiB", "htp.crouton", "uint8", "1,32,32,1024", true},
  });
  return true;
}();

}  // namespace
}  // namespace layoutcheck

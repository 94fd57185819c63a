// optimized/isa.h — which instruction-set level the optimized kernels use.
//
// Every kernel with a SIMD path asks isa_at_least() per call and keeps its
// portable path. The level is the best this CPU (and OS) supports, capped by
// LAYOUTCHECK_ISA (portable, ssse3, avx2, avx512 or avx512vbmi) in the environment, and by
// the innermost IsaCapScope, so that tests and users on an AVX-512 host can
// check every narrower path too:
//
//   LAYOUTCHECK_ISA=portable layoutcheck check      # the portable kernels only
//
//   for (Isa isa : available_isas()) {              // in a test
//     IsaCapScope cap(isa);
//     ... optimized_impl().pack(...) ...
//   }
//
// The cap is process-wide (the worker threads of a threaded pack see it too);
// the last scope to end restores the one before it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace layoutcheck {

// In order: each level includes the ones before it. kAvx512 is F, BW, VL and DQ
// (Skylake-SP class); kAvx512Vbmi adds VBMI and VBMI2 (byte permutes, byte and
// word compress and expand: Ice Lake, Zen 4 and later). A kernel that uses VBMI
// or VBMI2 asks for kAvx512Vbmi, never the CPU directly, so that its kAvx512
// fallback is reachable, and tested, on a CPU that has both.
enum class Isa : uint8_t { kPortable, kSsse3, kAvx2, kAvx512, kAvx512Vbmi };

const char* isa_name(Isa isa);
// "portable", "ssse3", "avx2", "avx512" or "avx512vbmi"; false for anything else.
bool parse_isa(const std::string& text, Isa* out);

// The best level this CPU supports (kPortable off x86-64).
Isa cpu_isa();

// The level the kernels use now: cpu_isa() capped by LAYOUTCHECK_ISA and the
// innermost IsaCapScope.
Isa optimized_isa();
inline bool isa_at_least(Isa level) { return static_cast<uint8_t>(optimized_isa()) >= static_cast<uint8_t>(level); }

// The levels up to cpu_isa(), portable first: the paths a test can run here.
std::vector<Isa> available_isas();

// Whether this CPU runs each 512-bit operation as two 256-bit halves (AMD Zen
// 4: family 0x19 with AVX-512; Zen 5 and Intel's AVX-512 cores have whole
// 512-bit units), so that a kernel bound by its 512-bit shuffles may run
// slower than its AVX2 form. A kernel whose AVX2 form measured faster on such
// a CPU asks this, never the CPU directly; the innermost Split512Scope sets
// the answer, so that a test reaches both forms on any CPU with AVX-512.
bool splits_512bit_ops();

class Split512Scope {
 public:
  explicit Split512Scope(bool split);
  ~Split512Scope();
  Split512Scope(const Split512Scope&) = delete;
  Split512Scope& operator=(const Split512Scope&) = delete;

 private:
  int8_t saved_;
};

class IsaCapScope {
 public:
  explicit IsaCapScope(Isa cap);
  ~IsaCapScope();
  IsaCapScope(const IsaCapScope&) = delete;
  IsaCapScope& operator=(const IsaCapScope&) = delete;

 private:
  uint8_t saved_;
};

}  // namespace layoutcheck

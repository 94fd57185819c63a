// Switches for the NVDLA optimized kernels (optimized/nvdla.cc).
#pragma once

namespace layoutcheck {

// Enables or disables the AVX2 transposes (the SSE2 and scalar paths run
// instead), so tests cover both on one CPU. Returns the previous setting.
bool nvdla_set_simd(bool enabled);

}  // namespace layoutcheck

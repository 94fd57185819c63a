// Controls of the optimized TLA implementation (for tests and benchmarks).
#pragma once

namespace layoutcheck {

// Enables or disables the AVX2 fractal transposes (the portable copies run
// instead); returns whether the CPU has AVX2 at all.
bool tla_set_simd(bool enabled);

}  // namespace layoutcheck

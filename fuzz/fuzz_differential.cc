// Differential fuzzer: optimized against reference on every registered layout.
// Input: a text case ("case: LAYOUT | DTYPE | SHAPE"), or bytes choosing a
// layout, a generator seed and shape overrides.
#include <string>

#include "fuzz_util.h"
#include "input_scope.h"

using namespace layoutcheck;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  fuzz::InputScope scope;
  const auto& specs = layout_specs();
  Case c;
  if (!fuzz::parse_text_case(std::string(reinterpret_cast<const char*>(data), size), &c)) {
    fuzz::Bytes in(data, size);
    const LayoutSpec& spec = specs[in.take(1) % specs.size()];
    if (!spec.random_case) return 0;
    std::mt19937_64 rng(in.take(8));
    c = spec.random_case(rng, static_cast<int>(in.take(1) % 3));
    // Then (dimension, extent) pairs steer the shape toward boundaries.
    while (!in.empty() && !c.shape.empty()) {
      size_t dim = in.take(1) % c.shape.size();
      c.shape[dim] = static_cast<int64_t>(in.take(1) % 70) + 1;
    }
  }
  fuzz::require_agreement(c, reference_impl(), optimized_impl(), size);
  return 0;
}

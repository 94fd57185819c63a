// Parser fuzzer: any text either fails with a message or parses to a layout
// whose canonical text parses back to the same layout.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "layoutcheck/impl.h"

using namespace layoutcheck;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 4096) return 0;
  const std::string text(reinterpret_cast<const char*>(data), size);
  auto layout = parse_layout(text);
  if (!layout.ok()) {
    if (layout.status().message().empty()) std::abort();  // errors must say something
    return 0;
  }
  const std::string canonical = to_string(*layout);
  auto again = parse_layout(canonical);
  if (!again.ok() || !(*again == *layout) || to_string(*again) != canonical) {
    std::fprintf(stderr, "round trip failed: '%s' -> '%s' -> %s\n", text.c_str(), canonical.c_str(),
                 again.ok() ? to_string(*again).c_str() : again.status().message().c_str());
    std::abort();
  }
  // Validation of any parsed layout must not crash, on a few shapes.
  for (const char* shape : {"1,1,1,1", "2,3,4,5", "1,1", "3,40", "1,1,1", "7,9,2,2,4"}) {
    auto s = parse_shape(shape);
    Case c{*layout, DType::kFp32, *s};
    (void)reference_impl().supports(c);
    (void)optimized_impl().supports(c);
  }
  return 0;
}

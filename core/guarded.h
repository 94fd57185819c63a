// The checker's buffers and its round-trip comparison, shared with the tests
// that compare kernels the same way (tests/support.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace layoutcheck {

// A buffer with poisoned guard zones on both sides.
struct Guarded {
  Guarded(size_t size_in, size_t guard_in, uint8_t poison_in)
      : bytes(size_in + 2 * guard_in, poison_in), guard(guard_in), size(size_in), poison(poison_in) {}
  uint8_t* data() { return bytes.data() + guard; }
  const uint8_t* data() const { return bytes.data() + guard; }
  // Index of the first clobbered guard byte, relative to data(); or 0 and false.
  bool guards_intact(int64_t* where) const {
    for (size_t i = 0; i < guard; ++i) {
      if (bytes[i] != poison) { *where = static_cast<int64_t>(i) - static_cast<int64_t>(guard); return false; }
      if (bytes[guard + size + i] != poison) { *where = static_cast<int64_t>(size + i); return false; }
    }
    return true;
  }
  std::vector<uint8_t> bytes;
  size_t guard, size;
  uint8_t poison;
};

// Sub-byte types: the bits of a dense logical buffer of `elements` elements of
// `bits` bits past its last element belong to no element; clears them.
inline void clear_spare_bits(uint64_t elements, uint64_t bits, uint8_t* logical, size_t size) {
  if (const uint64_t used = elements * bits % 8; used != 0 && size > 0) {
    logical[size - 1] &= static_cast<uint8_t>((1u << used) - 1);
  }
}

}  // namespace layoutcheck

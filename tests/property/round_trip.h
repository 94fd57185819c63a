// The round-trip property shared by every family's property tests.
#pragma once

#include <rapidcheck.h>

#include <vector>

#include "layoutcheck/checker.h"
#include "layoutcheck/impl.h"

namespace layoutcheck::testing {

// unpack(pack(x)) == x in the reference and the optimized implementation, for
// position-unique x; physical buffers start poisoned, so a byte pack forgets
// to write cannot pass for one it wrote.
inline void assert_unpack_inverts_pack(const Case& c) {
  std::vector<uint8_t> logical;
  fill_position_unique(c, *rc::gen::arbitrary<uint64_t>(), &logical);
  for (const Impl* impl : {&reference_impl(), &optimized_impl()}) {
    std::vector<uint8_t> phys(*impl->size_bytes(c), 0x3C), back(logical.size(), 0xA5);
    RC_ASSERT(impl->pack(c, logical.data(), logical.size(), phys.data(), phys.size()).ok());
    RC_ASSERT(impl->unpack(c, phys.data(), phys.size(), back.data(), back.size()).ok());
    RC_ASSERT(back == logical);
  }
}

}  // namespace layoutcheck::testing

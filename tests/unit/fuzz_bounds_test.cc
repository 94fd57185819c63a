#include <gtest/gtest.h>

#include "fuzz/fuzz_util.h"
#include "layoutcheck/impl.h"

using namespace layoutcheck;

namespace {

Case tla_case(const std::string& layout, const std::string& shape) { return *parse_case(layout, "int8", shape); }

}  // namespace

TEST(FuzzBounds, tla_layout_counts_every_coordinate) {
  EXPECT_EQ(fuzz::tla_coordinates(tla_case("((4,2),(4,3)):((4,16),(1,32))", "8,12")), 96u);
  EXPECT_EQ(fuzz::tla_coordinates(tla_case("tla.zN", "16,32")), 0u);
}

TEST(FuzzBounds, tla_tile_counts_the_tiled_layout) {
  EXPECT_EQ(fuzz::tla_coordinates(tla_case("MakeLayoutTile(((4,2),(4,3)):((4,16),(1,32)),(5,6))", "5,6")), 64u);
  const Case deep = tla_case(
      "MakeLayoutTile((((2,_4)),((_4,_4,_4),(_4,6,_4),(_4,_4,_4))):"
      "(((_0,_1)),((_4096,16,64),(256,65536,1024),(4,16384,393216))),(1,1))",
      "1,1");
  EXPECT_EQ(fuzz::tla_coordinates(deep), uint64_t{2} * 4 * 4 * 4 * 4 * 4 * 4 * 4 * 6);
}

TEST(FuzzBounds, a_tile_above_the_bound_is_not_checked) {
  const Case small = tla_case("MakeLayoutTile(((4,2),(4,3)):((4,16),(1,32)),(5,6))", "5,6");
  const Case deep = tla_case(
      "MakeLayoutTile((((2,_4)),((_4,_4,_4),(_4,6,_4),(_4,_4,_4))):"
      "(((_0,_1)),((_4096,16,64),(256,65536,1024),(4,16384,393216))),(1,1))",
      "1,1");
  const uint64_t before = fuzz::not_checked;
  EXPECT_TRUE(fuzz::require_agreement(small, reference_impl(), optimized_impl(), 1));
  EXPECT_EQ(fuzz::not_checked, before);
  EXPECT_FALSE(fuzz::require_agreement(deep, reference_impl(), optimized_impl(), 1));
  EXPECT_EQ(fuzz::not_checked, before + 1);
}

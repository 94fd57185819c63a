// The CATLASS TLA document's layout operations, as the reference states them.
//
//   auto l = *parse_tla_layout("((4,2),(4,3)):((4,16),(1,32))");
//   tla_ref::crd2offset(*parse_int_tuple("(1,5)"), l.shape, l.stride);   // 37
//   tla_ref::make_layout_tile(l, *parse_int_tuple("(4,4)"));  // ((4,1),(4,1)):((4,16),(1,32))
#pragma once

#include <cstdint>

#include "layoutcheck/int_tuple.h"

namespace layoutcheck {
namespace tla_ref {

// tla::crd2offset(c, shape, stride) ("Layout 坐标与索引"). Each part of the
// coordinate is an integer or a tuple congruent with its mode; an integer
// against a nested mode is split colexicographically (first element fastest).
Result<uint64_t> crd2offset(const IntTuple& coord, const IntTuple& shape, const IntTuple& stride);
// The colexicographic index of a coordinate in a shape (the first element
// fastest): the integer that crd2offset would split back into `coord`.
Result<uint64_t> crd2idx(const IntTuple& coord, const IntTuple& shape);
// size: the number of coordinates; cosize: the offset of the last one plus 1.
Result<uint64_t> size(const TlaLayoutText& layout);
Result<uint64_t> cosize(const TlaLayoutText& layout);
// MakeLayoutTile(layout, (rows, cols)): "changes the shape, not the stride".
Result<TlaLayoutText> make_layout_tile(const TlaLayoutText& layout, const IntTuple& tile);

}  // namespace tla_ref
}  // namespace layoutcheck

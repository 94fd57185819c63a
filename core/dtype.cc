#include "layoutcheck/dtype.h"

#include <iterator>

namespace layoutcheck {
namespace {

using K = DTypeKind;
constexpr DTypeInfo kTable[] = {
    {DType::kInt4, "int4", 4, K::kSignedInt, 1, DType::kInt4, true},
    {DType::kUInt4, "uint4", 4, K::kUnsignedInt, 1, DType::kUInt4, true},
    {DType::kInt8, "int8", 8, K::kSignedInt, 1, DType::kInt8, true},
    {DType::kUInt8, "uint8", 8, K::kUnsignedInt, 1, DType::kUInt8, true},
    {DType::kInt16, "int16", 16, K::kSignedInt, 1, DType::kInt16, true},
    {DType::kUInt16, "uint16", 16, K::kUnsignedInt, 1, DType::kUInt16, true},
    {DType::kInt32, "int32", 32, K::kSignedInt, 1, DType::kInt32, true},
    {DType::kUInt32, "uint32", 32, K::kUnsignedInt, 1, DType::kUInt32, true},
    {DType::kFp16, "fp16", 16, K::kFloat, 1, DType::kFp16, true},
    {DType::kBf16, "bf16", 16, K::kFloat, 1, DType::kBf16, true},
    {DType::kFp32, "fp32", 32, K::kFloat, 1, DType::kFp32, true},
    {DType::kInt8x4, "int8x4", 32, K::kSignedInt, 4, DType::kInt8, false},
    {DType::kUInt8x4, "uint8x4", 32, K::kUnsignedInt, 4, DType::kUInt8, false},
    {DType::kInt16x2, "int16x2", 32, K::kSignedInt, 2, DType::kInt16, false},
    {DType::kUInt16x2, "uint16x2", 32, K::kUnsignedInt, 2, DType::kUInt16, false},
    {DType::kFp32x2, "fp32x2", 64, K::kFloat, 2, DType::kFp32, false},
};

// Logical dtypes a layout may be asked about. int4/uint4 are in the table so
// offsets can be expressed for them, and become logical once a layout uses them.
constexpr DType kLogical[] = {DType::kInt8, DType::kUInt8, DType::kInt16, DType::kUInt16,
                              DType::kInt32, DType::kUInt32, DType::kFp16, DType::kBf16,
                              DType::kFp32, DType::kInt4, DType::kUInt4};

}  // namespace

const DTypeInfo& dtype_info(DType t) { return kTable[static_cast<size_t>(t)]; }

Result<DType> parse_dtype(std::string_view name) {
  for (const auto& e : kTable) {
    if (name == e.name) {
      if (!e.logical) {
        return Status::invalid("dtype " + quote_input(name) +
                               " is a packed storage type, not a logical element type; "
                               "use its lane type with a storage mode");
      }
      return e.dtype;
    }
  }
  return Status::invalid("unknown dtype " + quote_input(name) + " (known: " +
                         logical_dtype_names() + ")");
}

const DType* logical_dtypes(size_t* count) {
  *count = std::size(kLogical);
  return kLogical;
}

std::string logical_dtype_names() {
  std::string out;
  for (DType t : kLogical) {
    if (!out.empty()) out += ' ';
    out += dtype_info(t).name;
  }
  return out;
}

}  // namespace layoutcheck

// layoutcheck/dtype.h — the one table of element types.
//
// Every element size any document depends on comes from this table: the plain
// types, the sub-byte types (offsets are kept in bits, so int4 fits), and the
// packed storage types the TPU storage modes define (int8x4 in 4N-mode, ...).
//
//   DType t = *parse_dtype("fp16");
//   dtype_info(t).bits == 16;  dtype_info(DType::kInt8x4).lanes == 4;
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "layoutcheck/status.h"

namespace layoutcheck {

enum class DType : uint8_t {
  kInt4, kUInt4,
  kInt8, kUInt8, kInt16, kUInt16, kInt32, kUInt32,
  kFp16, kBf16, kFp32,
  // Packed storage types (sophgo-tpu-okkernel-local-memory.txt, "Storage Modes").
  kInt8x4, kUInt8x4, kInt16x2, kUInt16x2, kFp32x2,
};

enum class DTypeKind : uint8_t { kSignedInt, kUnsignedInt, kFloat };

struct DTypeInfo {
  DType dtype;
  const char* name;
  uint32_t bits;     // storage bits of one element (all lanes)
  DTypeKind kind;
  uint32_t lanes;    // 1 for plain types
  DType lane;        // the element type of one lane (itself for plain types)
  bool logical;      // may be the dtype of a logical tensor (packed types may not)
};

const DTypeInfo& dtype_info(DType t);
inline uint32_t dtype_bits(DType t) { return dtype_info(t).bits; }
inline const char* dtype_name(DType t) { return dtype_info(t).name; }
Result<DType> parse_dtype(std::string_view name);
// The logical dtypes, in table order (for listings and generators).
const DType* logical_dtypes(size_t* count);
// "int8 uint8 ... fp32"
std::string logical_dtype_names();

}  // namespace layoutcheck

// layoutcheck/impl.h — the one interface every implementation answers to.
//
// The reference (the documents in executable form), the optimized library and
// third-party plugins all implement Impl. The checker compares any two of them.
//
//   const Impl& ref = reference_impl();
//   Case c = *parse_case("tpu.aligned(npus=4,lmem=1024)", "fp32", "2,3,4,5");
//   if (Status s = ref.supports(c); s.ok()) {
//     uint64_t phys = *ref.size_bytes(c);
//     uint64_t bit = *ref.offset_bits(c, {1, 2, 3, 4});   // physical bit offset
//     ref.pack(c, logical.data(), logical.size(), physical.data(), phys);
//   }
//
// supports() returns ok, kInvalid (the case breaks a rule of the document,
// named in the message) or kUnsupported (this implementation declines a valid
// case). Declining is not failing. pack() writes every byte of the physical
// buffer: element bytes, the bytes the document fixes, and anything the
// document allows in the bytes it leaves free (the reference writes 0 there;
// byte_rules() says which are which). unpack() is its inverse on the element
// bytes and must not depend on the free ones.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "layoutcheck/layout.h"
#include "layoutcheck/status.h"

namespace layoutcheck {

struct ByteRules;  // layoutcheck/byte_rules.h
class IntTuple;    // layoutcheck/int_tuple.h

// A named fact about a case, e.g. {"c_stride", "32"} (for describe and oracles).
using Fact = std::pair<std::string, std::string>;

class Impl {
 public:
  virtual ~Impl() = default;
  virtual std::string name() const = 0;
  virtual Status supports(const Case& c) const = 0;
  // Size of the physical buffer in bytes.
  virtual Result<uint64_t> size_bytes(const Case& c) const = 0;
  // Physical offset in bits of the element at a logical coordinate.
  virtual Result<uint64_t> offset_bits(const Case& c, const Coord& at) const = 0;
  // Dense row-major logical buffer -> physical buffer of size_bytes().
  virtual Status pack(const Case& c, const void* logical, size_t logical_size, void* physical,
                      size_t physical_size) const = 0;
  // Physical buffer -> dense row-major logical buffer.
  virtual Status unpack(const Case& c, const void* physical, size_t physical_size, void* logical,
                        size_t logical_size) const = 0;
  // Derived quantities (strides, padding, ...) for `describe`; optional.
  virtual Result<std::vector<Fact>> describe(const Case& c) const {
    (void)c;
    return Status::unsupported(name() + " does not describe layouts");
  }
  // What the document requires of every physical byte (layoutcheck/byte_rules.h).
  // The reference answers; other implementations need not.
  virtual Result<ByteRules> byte_rules(const Case& c) const;
  // Physical offset in bits of a nested coordinate ("((1,0),(1,1))"), for
  // layouts whose modes nest (CATLASS TLA); optional.
  virtual Result<uint64_t> offset_bits_nested(const Case& c, const IntTuple& at) const {
    (void)c, (void)at;
    return Status::unsupported(name() + " does not take nested coordinates");
  }
};

// The documents in executable form, for every registered layout.
const Impl& reference_impl();
// The bundled fast implementation, for every registered layout.
const Impl& optimized_impl();
// "reference" or "optimized"; nullptr otherwise.
const Impl* builtin_impl(const std::string& name);

// Validates buffer sizes against the case before an Impl touches them.
Status check_buffers(const Impl& impl, const Case& c, size_t logical_size, size_t physical_size);
// The same, for an Impl that already knows the case's physical size.
Status check_buffers(const Case& c, uint64_t want_physical, size_t logical_size, size_t physical_size);
// The same, for an Impl that keeps both sizes with its plan of the case (no
// arithmetic on the shape: the check of every call of a small case).
Status check_buffers(const Case& c, uint64_t want_logical, uint64_t want_physical, size_t logical_size,
                     size_t physical_size);

}  // namespace layoutcheck

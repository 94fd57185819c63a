// layoutcheck/checked.h — overflow-checked size arithmetic.
//
// Sizes and offsets are uint64_t; every product or sum that depends on user
// input goes through these helpers, which report overflow instead of wrapping:
//
//   uint64_t bytes;
//   if (!checked_mul(n, c, &bytes)) return Status::invalid("N*C overflows");
//
// The Checked<T> wrapper chains operations and remembers the first overflow:
//   Checked n(2); auto total = n * 3 + 4;  // total.ok(), total.value() == 10
#pragma once

#include <cstdint>

namespace layoutcheck {

inline bool checked_add(uint64_t a, uint64_t b, uint64_t* out) {
  return !__builtin_add_overflow(a, b, out);
}
inline bool checked_mul(uint64_t a, uint64_t b, uint64_t* out) {
  return !__builtin_mul_overflow(a, b, out);
}

class Checked {
 public:
  Checked(uint64_t v = 0) : v_(v) {}  // NOLINT(google-explicit-constructor)
  bool ok() const { return ok_; }
  uint64_t value() const { return v_; }
  friend Checked operator+(Checked a, Checked b) {
    Checked r;
    r.ok_ = a.ok_ && b.ok_ && checked_add(a.v_, b.v_, &r.v_);
    return r;
  }
  friend Checked operator*(Checked a, Checked b) {
    Checked r;
    r.ok_ = a.ok_ && b.ok_ && checked_mul(a.v_, b.v_, &r.v_);
    return r;
  }
  Checked& operator+=(Checked b) { return *this = *this + b; }
  Checked& operator*=(Checked b) { return *this = *this * b; }

 private:
  uint64_t v_ = 0;
  bool ok_ = true;
};

// ceil(a / b) for b > 0, without the overflow of (a + b - 1) / b.
inline uint64_t ceil_div(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }

}  // namespace layoutcheck

/* Shared by the HTP example plugins: the padding element of a case.
 *
 * qualcomm-htp-memory-layout.txt, "Practical tips working with Crouton":
 * "user padding need to be explicitly set to quantized 0 (or other specified
 * value)". The host passes pad=VALUE in the element's own units: an integer
 * for integer types, a decimal (or inf, -inf) for fp16, bf16 and fp32, rounded
 * to nearest-even. A ScaleOffsetInterface tensor (interface=scale_offset,
 * "applies the offset and scale value (for quantized types)", Details about
 * Tensors) holds integers, and its quantized 0 is the stored value `offset`,
 * which the host passes as the default pad. */
#ifndef LAYOUTCHECK_EXAMPLE_HTP_PAD_H_
#define LAYOUTCHECK_EXAMPLE_HTP_PAD_H_

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layoutcheck/c_api.h"

/* float -> fp16, round to nearest-even; -1 when a finite value overflows. */
static int htp_pad_fp16(float f, uint16_t* out) {
  uint32_t x, sign, mant;
  int32_t exp;
  memcpy(&x, &f, 4);
  sign = (x >> 16) & 0x8000u;
  exp = (int32_t)((x >> 23) & 0xFF);
  mant = x & 0x7FFFFFu;
  if (exp == 0xFF) return *out = (uint16_t)(sign | 0x7C00u), 0; /* inf (NaN is refused earlier) */
  exp -= 127 - 15;
  if (exp >= 31) return -1;
  if (exp <= 0) { /* subnormal or zero: shift the 24-bit significand into place, then round */
    uint32_t sig = mant | 0x800000u, shift = (uint32_t)(14 - exp), q, rest, half;
    if (exp < -10) return *out = (uint16_t)sign, 0;
    q = sig >> shift;
    rest = sig & ((1u << shift) - 1);
    half = 1u << (shift - 1);
    if (rest > half || (rest == half && (q & 1))) ++q;
    return *out = (uint16_t)(sign | q), 0;
  }
  {
    uint32_t q = ((uint32_t)exp << 10) | (mant >> 13), rest = mant & 0x1FFFu;
    if (rest > 0x1000u || (rest == 0x1000u && (q & 1))) ++q; /* may carry into the exponent */
    if ((q >> 10) >= 31) return -1;
    return *out = (uint16_t)(sign | q), 0;
  }
}

/* The padding element of case c, little-endian, into out[0 .. dtype_bits/8). */
static lc_status htp_pad_element(const lc_case* c, uint8_t out[8], char* why, size_t n) {
  const char* pad = lc_param(c, "pad");
  const char* iface = lc_param(c, "interface");
  const int is_float = strncmp(c->dtype, "fp", 2) == 0 || strncmp(c->dtype, "bf", 2) == 0;
  const int is_signed = strncmp(c->dtype, "int", 3) == 0;
  const unsigned bits = c->dtype_bits;
  uint64_t value = 0;
  unsigned b;
  char* end;
  memset(out, 0, 8);
  if (!pad) return LC_OK;
  if (iface && strcmp(iface, "scale_offset") == 0) {
    const char* offset = lc_param(c, "offset");
    long long o = offset ? strtoll(offset, NULL, 10) : 0;
    if (is_float) return snprintf(why, n, "scale/offset tensors hold integers, not %s", c->dtype), LC_INVALID;
    if (is_signed ? (o < -(1LL << (bits - 1)) || o > (1LL << (bits - 1)) - 1) : (o < 0 || (bits < 64 && (unsigned long long)o >> bits))) {
      return snprintf(why, n, "offset %lld is not a %s", o, c->dtype), LC_INVALID;
    }
  }
  if (is_float) {
    double d = strtod(pad, &end);
    float f = (float)d;
    uint32_t x;
    if (end == pad || *end || isnan(d) || strpbrk(pad, "xXpP")) return snprintf(why, n, "pad '%s' is not a number", pad), LC_INVALID;
    if (isinf(f) && !isinf(d)) return snprintf(why, n, "pad '%s' overflows %s", pad, c->dtype), LC_INVALID;
    memcpy(&x, &f, 4);
    if (bits == 32) {
      value = x;
    } else if (strcmp(c->dtype, "bf16") == 0) {
      if ((x & 0x7F800000u) == 0x7F800000u) value = x >> 16;
      else value = (x + 0x7FFFu + ((x >> 16) & 1)) >> 16;
      if ((value & 0x7F80u) == 0x7F80u && !isinf(d)) return snprintf(why, n, "pad '%s' overflows bf16", pad), LC_INVALID;
    } else {
      uint16_t h;
      if (htp_pad_fp16(f, &h)) return snprintf(why, n, "pad '%s' overflows fp16", pad), LC_INVALID;
      value = h;
    }
  } else {
    long long v = strtoll(pad, &end, 10);
    if (end == pad || *end || strchr(pad, '+')) return snprintf(why, n, "pad '%s' is not an integer", pad), LC_INVALID;
    if (is_signed ? (v < -(1LL << (bits - 1)) || v > (1LL << (bits - 1)) - 1) : (v < 0 || (bits < 64 && (unsigned long long)v >> bits))) {
      return snprintf(why, n, "pad %lld is not a %s", v, c->dtype), LC_INVALID;
    }
    value = (uint64_t)v;
  }
  for (b = 0; b < bits / 8 && b < 8; ++b) out[b] = (uint8_t)(value >> (8 * b));
  return LC_OK;
}

/* Fills `bytes` bytes (whole elements of e bytes) with the padding element. */
static void htp_pad_fill(uint8_t* dst, size_t bytes, const uint8_t* element, size_t e) {
  size_t i;
  for (i = 0; i + e <= bytes; i += e) memcpy(dst + i, element, e);
}

#endif

/* Example plugin: the precision conversions of ABI 1.1 (c_api.h, `convert`).
 *
 *   ieee       fp32, fp16, bf16 between each other, round to nearest even, INF stays INF
 *   nvdla      fp32/fp16 as NVDLA does it ("FP16 Supporting"): round to nearest,
 *              overflow clipped to the largest normal value, an INF input replaced by
 *              its unit's value first, NaN propagated unless flush_nan (then +0)
 *   nvdla-int  d_out = truncate2intN((d - offset) * SF) or int2fp((d - offset) * SF)
 *   nvdla-float fp16 d_out = (d - offset) * SF in the unit's internal format (conv: fp17,
 *              sdp: fp32; each operation to nearest even, no denormals, clipped), then
 *              fp16 or truncate2int16
 *
 * Build: cc -shared -fPIC -I include examples/plugins/convert_plugin.c -o libconvert.so
 * Check: layoutcheck check --impl ./libconvert.so --layout 'convert.*'
 *
 * Each CONVERT_MUTANT_* define plants one realistic bug (examples/plugins/mutants). */
#include <stdint.h>
#include <string.h>

#include "layoutcheck/c_api.h"

#ifndef CONVERT_PLUGIN_NAME
#define CONVERT_PLUGIN_NAME "convert-c"
#endif

typedef struct { int bits, precision, emin, emax; } fmt;
static const fmt kF32 = {32, 24, -126, 127}, kF16 = {16, 11, -14, 15}, kBf16 = {16, 8, -126, 127};

static int fmt_of(const char* d, fmt* f) {
  if (!strcmp(d, "fp32")) *f = kF32;
  else if (!strcmp(d, "fp16")) *f = kF16;
  else if (!strcmp(d, "bf16")) *f = kBf16;
  else return 0;
  return 1;
}

static uint64_t sign_of(fmt f, int s) { return s ? (uint64_t)1 << (f.bits - 1) : 0; }
static uint64_t inf_of(fmt f, int s) { return sign_of(f, s) | ((uint64_t)(2 * f.emax + 1) << (f.precision - 1)); }
static uint64_t max_of(fmt f, int s) {
  return sign_of(f, s) | ((uint64_t)(2 * f.emax) << (f.precision - 1)) | (((uint64_t)1 << (f.precision - 1)) - 1);
}

/* (-1)^s * m * 2^q to the format, nearest even; clip: overflow to the largest value. */
static uint64_t round_to(fmt f, int s, uint64_t m, int q, int clip) {
  int p = f.precision, msb, e, qe, shift;
  uint64_t n;
  if (m == 0) return sign_of(f, s);
  msb = 63 - __builtin_clzll(m);
  e = q + msb;
  qe = (e < f.emin ? f.emin : e) - (p - 1);
  if (q >= qe) {
    n = m << (q - qe);
  } else {
    shift = qe - q;
    if (shift >= 64) {
      n = 0;
    } else {
      uint64_t rem = m & (((uint64_t)1 << shift) - 1), half = (uint64_t)1 << (shift - 1);
      n = m >> shift;
#if defined(CONVERT_MUTANT_ROUND_TOWARD_ZERO)
      (void)rem, (void)half;
#elif defined(CONVERT_MUTANT_TIES_AWAY)
      if (rem >= half) ++n;
#else
      if (rem > half || (rem == half && (n & 1))) ++n;
#endif
    }
  }
  if (n == (uint64_t)1 << p) n >>= 1, ++qe;
  if (n == 0) return sign_of(f, s);
  if (n < (uint64_t)1 << (p - 1)) {
#ifdef CONVERT_MUTANT_DENORMALS_FLUSHED
    return sign_of(f, s);
#else
    return sign_of(f, s) | n;
#endif
  }
  if (qe + (p - 1) > f.emax) return clip ? max_of(f, s) : inf_of(f, s);
  return sign_of(f, s) | ((uint64_t)(qe + (p - 1) + f.emax) << (p - 1)) | (n - ((uint64_t)1 << (p - 1)));
}

enum { ZERO, FINITE, INF, NAN_ };
typedef struct { int cls, s; uint64_t m; int q; uint64_t frac; } val;

static val decode(fmt f, uint64_t b) {
  int fb = f.precision - 1, eb = f.bits - f.precision;
  uint64_t frac = b & (((uint64_t)1 << fb) - 1), ex = (b >> fb) & (((uint64_t)1 << eb) - 1);
  val v;
  v.s = (int)((b >> (f.bits - 1)) & 1);
  v.frac = frac;
  v.m = 0;
  v.q = 0;
  if (ex == ((uint64_t)1 << eb) - 1) {
    v.cls = frac ? NAN_ : INF;
  } else if (ex == 0) {
    v.cls = frac ? FINITE : ZERO;
    v.m = frac;
    v.q = f.emin - fb;
  } else {
    v.cls = FINITE;
    v.m = frac | ((uint64_t)1 << fb);
    v.q = (int)ex - f.emax - fb;
  }
  return v;
}

/* Quiet NaN keeping the sign and the leading payload bits. */
static uint64_t nan_of(fmt from, fmt to, val v, int nvdla) {
  int fb = from.precision - 1, tb = to.precision - 1;
#ifdef CONVERT_LENIENT_NAN
  /* The NVDLA leaves a propagated NaN's mantissa open: any NaN of the sign passes. */
  if (nvdla) return inf_of(to, v.s) | (((uint64_t)1 << tb) - 1);
#else
  (void)nvdla;
#endif
  uint64_t payload = tb >= fb ? v.frac << (tb - fb) : v.frac >> (fb - tb);
  return inf_of(to, v.s) | payload | ((uint64_t)1 << (tb - 1));
}

/* The "INF converted values" table, as fp32 bits. */
static int inf_value(const char* unit, uint32_t* bits) {
  if (!strcmp(unit, "conv")) *bits = 0x47800000u;               /* 65536 */
  else if (!strcmp(unit, "conv-winograd")) *bits = 0x477fe000u; /* 65504 */
  else if (!strcmp(unit, "sdp")) *bits = 0x7f7fffffu;           /* largest fp32 */
  else if (!strcmp(unit, "cdp")) *bits = 0x4f7fe000u;           /* 2^32 - 2^21 */
  else if (!strcmp(unit, "pdp")) *bits = 0x4f7fe000u;           /* average pooling: as CDP */
  else if (!strcmp(unit, "pdp-minmax")) *bits = 0x7f800000u;    /* INF kept, then saturated */
  else return 0;
  return 1;
}

static uint64_t nvdla_float(const lc_convert_case* c, fmt from, fmt to, uint64_t b) {
  val v = decode(from, b);
  uint32_t unit_bits = 0;
#ifdef CONVERT_MUTANT_FLUSH_NAN_IGNORED
  if (v.cls == NAN_) return nan_of(from, to, v, 1);
#else
  if (v.cls == NAN_) return c->flush_nan ? 0 : nan_of(from, to, v, 1);
#endif
  if (v.cls == INF) {
#ifdef CONVERT_MUTANT_INF_KEPT
    (void)unit_bits;
    return inf_of(to, v.s);
#else
    val u;
    inf_value(c->unit, &unit_bits);
    u = decode(kF32, unit_bits);
    if (u.cls == INF) return max_of(to, v.s);
    v.m = u.m;
    v.q = u.q;
    v.cls = FINITE;
#endif
  }
  if (v.cls == ZERO) return sign_of(to, v.s);
#ifdef CONVERT_MUTANT_NO_CLIP
  return round_to(to, v.s, v.m, v.q, 0);
#else
  return round_to(to, v.s, v.m, v.q, 1);
#endif
}

static uint64_t ieee_float(fmt from, fmt to, uint64_t b) {
  val v = decode(from, b);
  if (v.cls == NAN_) return nan_of(from, to, v, 0);
  if (v.cls == INF) return inf_of(to, v.s);
  if (v.cls == ZERO) return sign_of(to, v.s);
  return round_to(to, v.s, v.m, v.q, 0);
}

static int int_type(const char* d, int* bits, int* is_signed) {
  if (!strcmp(d, "int8")) *bits = 8, *is_signed = 1;
  else if (!strcmp(d, "uint8")) *bits = 8, *is_signed = 0;
  else if (!strcmp(d, "int16")) *bits = 16, *is_signed = 1;
  else if (!strcmp(d, "uint16")) *bits = 16, *is_signed = 0;
  else return 0;
  return 1;
}

/* Rule nvdla-int: the exact product (d - offset) * SF, rounded once. */
static uint64_t nvdla_int(const lc_convert_case* c, int from_bits, int from_signed, int to_bits, uint64_t b) {
  int64_t d = (from_signed && ((b >> (from_bits - 1)) & 1)) ? (int64_t)b - ((int64_t)1 << from_bits) : (int64_t)b;
  int64_t diff = d - c->offset, max, min, value;
  uint32_t sb;
  val sf;
  int s;
  uint64_t m, n;
  memcpy(&sb, &c->scale, sizeof sb);
  sf = decode(kF32, sb);
  s = (diff < 0) != sf.s;
  m = (uint64_t)(diff < 0 ? -diff : diff) * sf.m;
  if (to_bits == 0) return round_to(kF16, s && m != 0, m, sf.q, 1); /* int2fp to fp16 */
  max = ((int64_t)1 << (to_bits - 1)) - 1;
  min = -max - 1;
  if (m == 0) {
    n = 0;
  } else if (sf.q >= 0) {
    n = (sf.q >= 62 || (m >> (62 - sf.q)) != 0) ? (uint64_t)1 << 62 : m << sf.q;
  } else {
    int shift = -sf.q;
    uint64_t rem = m, half = 0;
    n = 0;
    if (shift < 64) {
      n = m >> shift;
      rem = m & (((uint64_t)1 << shift) - 1);
      half = (uint64_t)1 << (shift - 1);
      if (!strcmp(c->truncate, "nearest-away")) n += rem >= half ? 1 : 0;
      else if (!strcmp(c->truncate, "nearest-even")) n += (rem > half || (rem == half && (n & 1))) ? 1 : 0;
    }
  }
  if (n > ((uint64_t)1 << 62)) n = (uint64_t)1 << 62;
  value = s ? -(int64_t)n : (int64_t)n;
  if (value > max) value = max;
  if (value < min) value = min;
  return (uint64_t)value & (((uint64_t)1 << to_bits) - 1);
}

/* truncate2intN of (-1)^s * m * 2^q, then saturation. */
static uint64_t to_int(const char* truncate, int to_bits, int s, uint64_t m, int q) {
  int64_t max = ((int64_t)1 << (to_bits - 1)) - 1, min = -max - 1, value;
  uint64_t n = 0;
  if (m != 0 && q >= 0) {
    n = (q >= 62 || (m >> (62 - q)) != 0) ? (uint64_t)1 << 62 : m << q;
  } else if (m != 0 && -q < 64) {
    int shift = -q;
    uint64_t rem = m & (((uint64_t)1 << shift) - 1), half = (uint64_t)1 << (shift - 1);
    n = m >> shift;
    if (!strcmp(truncate, "nearest-away")) n += rem >= half ? 1 : 0;
    else if (!strcmp(truncate, "nearest-even")) n += (rem > half || (rem == half && (n & 1))) ? 1 : 0;
  }
  if (n > ((uint64_t)1 << 62)) n = (uint64_t)1 << 62;
  value = s ? -(int64_t)n : (int64_t)n;
  if (value > max) value = max;
  if (value < min) value = min;
  return (uint64_t)value & (((uint64_t)1 << to_bits) - 1);
}

/* A value of the internal format: (-1)^s * m * 2^q; m == 0 is a zero. */
typedef struct { int s; uint64_t m; int q; } num;
typedef struct { int p, emin, emax; } internal_fmt;
static const internal_fmt kFp17 = {11, -30, 31}, kFp32Internal = {24, -126, 127};

/* To nearest even with p bits; clipped above the largest value; a zero of its sign
 * below the smallest normal (no denormals). */
static num internal_round(internal_fmt f, int s, uint64_t m, int q) {
  num r;
  int msb;
  r.s = s, r.m = 0, r.q = 0;
  if (m == 0) return r;
  msb = 63 - __builtin_clzll(m);
  if (msb >= f.p) {
    int shift = msb + 1 - f.p;
    uint64_t rem = m & (((uint64_t)1 << shift) - 1), half = (uint64_t)1 << (shift - 1);
    m >>= shift;
    q += shift;
    if (rem > half || (rem == half && (m & 1))) ++m;
    if (m == (uint64_t)1 << f.p) m >>= 1, ++q;
  }
  msb = 63 - __builtin_clzll(m);
  if (q + msb > f.emax) {
    r.m = ((uint64_t)1 << f.p) - 1;
    r.q = f.emax - (f.p - 1);
  } else if (q + msb >= f.emin) {
    r.m = m;
    r.q = q;
  }
  return r;
}

static uint64_t nvdla_float_path(const lc_convert_case* c, int to_bits, uint64_t b) {
#ifdef CONVERT_MUTANT_SDP_IN_FP17
  internal_fmt f = kFp17;
  (void)kFp32Internal;
#else
  internal_fmt f = !strcmp(c->unit, "sdp") ? kFp32Internal : kFp17;
#endif
  val v = decode(kF16, b), sf;
  num x, t;
  uint32_t sb, unit_bits = 0;
  int64_t a, o, d;
  int base;
  if (v.cls == NAN_ && !c->flush_nan) return to_bits ? 0 : nan_of(kF16, kF16, v, 1);
  x.s = v.cls == ZERO ? v.s : v.cls == NAN_ ? 0 : v.s;
  x.m = (v.cls == ZERO || v.cls == NAN_) ? 0 : v.m;
  x.q = x.m != 0 ? v.q : 0;
  if (v.cls == INF) {
    val u;
    inf_value(c->unit, &unit_bits);
    u = decode(kF32, unit_bits);
    x = internal_round(f, v.s, u.m, u.q);
  }
  /* t = x - offset */
  if (c->offset == 0) {
    t = x;
  } else if (x.m != 0 && x.q > 40) {
    t = x; /* the SDP's INF value 3.4e38: an offset below 2^17 is far under half its last place */
  } else {
    base = x.q < 0 ? x.q : 0;
    a = (int64_t)(x.m << (x.q - base)) * (x.s ? -1 : 1);
    o = (int64_t)c->offset * ((int64_t)1 << -base);
    d = a - o;
    t = internal_round(f, d < 0, (uint64_t)(d < 0 ? -d : d), base);
    if (d == 0) t.s = 0;
  }
  memcpy(&sb, &c->scale, sizeof sb);
  sf = decode(kF32, sb);
  t = internal_round(f, t.s != sf.s, t.m * sf.m, t.q + sf.q);
  if (to_bits == 0) return round_to(kF16, t.s, t.m, t.q, 1);
  return to_int(c->truncate, to_bits, t.s, t.m, t.q);
}

static lc_status convert(const lc_convert_case* c, const void* src, size_t src_bytes, void* dst, size_t dst_bytes) {
  fmt from, to;
  int rule = !strcmp(c->rule, "ieee")          ? 0
             : !strcmp(c->rule, "nvdla")       ? 1
             : !strcmp(c->rule, "nvdla-int")   ? 2
             : !strcmp(c->rule, "nvdla-float") ? 3
                                               : -1;
  int ib = 0, is_signed = 0, ob = 0, osigned = 0;
  size_t fbytes, tbytes, i, k, count;
  const uint8_t* in = (const uint8_t*)src;
  uint8_t* out = (uint8_t*)dst;
  uint32_t unit_bits;
  if (rule < 0) return LC_UNSUPPORTED;
  if (rule == 3) {
    if (strcmp(c->from, "fp16") != 0) return LC_INVALID;
    if (!strcmp(c->unit, "sdp") && !strcmp(c->to, "int16")) ob = 16;
    else if (strcmp(c->to, "fp16") != 0 || (strcmp(c->unit, "sdp") != 0 && strcmp(c->unit, "conv") != 0)) return LC_INVALID;
    fbytes = 2;
    tbytes = 2;
  } else if (rule == 2) {
    if (!int_type(c->from, &ib, &is_signed)) return LC_INVALID;
    if (!strcmp(c->to, "fp16")) ob = 0, tbytes = 2;
    else if (int_type(c->to, &ob, &osigned) && osigned) tbytes = (size_t)ob / 8;
    else return LC_INVALID;
    fbytes = (size_t)ib / 8;
  } else {
    if (!fmt_of(c->from, &from) || !fmt_of(c->to, &to)) return LC_INVALID;
    if (rule == 1 && (from.precision == 8 || to.precision == 8)) return LC_INVALID; /* no bf16 in NVDLA */
    if (rule == 1 && !inf_value(c->unit, &unit_bits)) return LC_INVALID;
    fbytes = (size_t)from.bits / 8;
    tbytes = (size_t)to.bits / 8;
  }
  if (src_bytes % fbytes != 0 || dst_bytes != src_bytes / fbytes * tbytes) return LC_INVALID;
  count = src_bytes / fbytes;
  for (i = 0; i < count; ++i) {
    uint64_t x = 0, y;
    for (k = 0; k < fbytes; ++k) x |= (uint64_t)in[i * fbytes + k] << (8 * k);
    y = rule == 0   ? ieee_float(from, to, x)
        : rule == 1 ? nvdla_float(c, from, to, x)
        : rule == 2 ? nvdla_int(c, ib, is_signed, ob, x)
                    : nvdla_float_path(c, ob, x);
    for (k = 0; k < tbytes; ++k) out[i * tbytes + k] = (uint8_t)(y >> (8 * k));
  }
  return LC_OK;
}

/* No layouts: the layout members decline every case. */
static lc_status supports(const lc_case* c, char* why, size_t n) {
  (void)c;
  if (n) strncpy(why, "conversions only", n - 1);
  return LC_UNSUPPORTED;
}
static lc_status size_bytes(const lc_case* c, uint64_t* bytes) {
  (void)c, (void)bytes;
  return LC_UNSUPPORTED;
}
static lc_status pack(const lc_case* c, const void* a, size_t as, void* b, size_t bs) {
  (void)c, (void)a, (void)as, (void)b, (void)bs;
  return LC_UNSUPPORTED;
}

static const lc_capability kCaps[] = {
    {"convert.ieee", "fp32>fp16 fp16>fp32 fp32>bf16 bf16>fp32 fp16>bf16 bf16>fp16 fp32>fp32 fp16>fp16 bf16>bf16", 0},
    {"convert.nvdla", "fp32>fp16 fp16>fp32 fp32>fp32 fp16>fp16", 0},
    {"convert.nvdla-int",
     "int8>int8 int8>int16 int8>fp16 uint8>int8 uint8>int16 uint8>fp16 "
     "int16>int8 int16>int16 int16>fp16 uint16>int8 uint16>int16 uint16>fp16", 0},
    {"convert.nvdla-float", "fp16>int16 fp16>fp16", 0},
};

static const lc_plugin kPlugin = {LC_ABI_MAJOR, LC_ABI_MINOR, sizeof(lc_plugin), CONVERT_PLUGIN_NAME,
                                  kCaps, sizeof kCaps / sizeof kCaps[0], supports, size_bytes, NULL, pack, pack,
                                  convert, NULL, NULL, NULL, NULL};

LC_EXPORT const lc_plugin* layoutcheck_plugin_v1(void) { return &kPlugin; }

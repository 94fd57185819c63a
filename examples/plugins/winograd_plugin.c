/* Example plugin: NVDLA Winograd weight conversion, phase 1, of ABI 1.1
 * (c_api.h, `winograd_extend` / `winograd_transform`; "Basic Weight for
 * Winograd Convolution").
 *
 *   extend     stride s > 1: (K, C, R, S) kernels padded with 0 to 3s x 3s and
 *              split into s*s phases; extended channel (p*s + q)*C + c holds
 *              W[c][i*s + p][j*s + q] at (i, j). Stride 1: 3x3 kernels unchanged.
 *   transform  U = G W G^T, G = [[1,0,0],[.5,.5,.5],[.5,-.5,.5],[0,0,1]], computed
 *              exactly (4U is an integer combination), rounded once: integers to
 *              nearest even and saturated, fp16 to nearest even and clipped to
 *              +-65504; an fp16 INF counts as +-65504, a NaN makes its outputs NaN.
 *
 * Build: cc -shared -fPIC -I include examples/plugins/winograd_plugin.c -o libwinograd.so
 * Check: layoutcheck check --impl ./libwinograd.so --layout nvdla.winograd.phase1
 *
 * WINOGRAD_MUTANT_* defines plant one bug each (examples/plugins/mutants). */
#include <stdint.h>
#include <string.h>

#include "layoutcheck/c_api.h"

#ifndef WINOGRAD_PLUGIN_NAME
#define WINOGRAD_PLUGIN_NAME "winograd-c"
#endif

static int element_bytes(const lc_winograd_case* c) {
  if (!strcmp(c->dtype, "int8")) return 1;
  if (!strcmp(c->dtype, "int16") || !strcmp(c->dtype, "fp16")) return 2;
  return 0;
}

static lc_status extend(const lc_winograd_case* c, const void* src, size_t src_bytes, void* dst, size_t dst_bytes) {
  const int64_t K = c->shape[0], C = c->shape[1], R = c->shape[2], S = c->shape[3], s = c->stride;
  const int eb = element_bytes(c);
  const uint8_t* in = (const uint8_t*)src;
  uint8_t* out = (uint8_t*)dst;
  int64_t k, p, q, ch, i, j;
  if (!eb || s < 1 || s > 64 || K < 1 || C < 1 || R < 1 || S < 1 || R > 3 * s || S > 3 * s) return LC_INVALID;
  if (s == 1 && (R != 3 || S != 3)) return LC_INVALID;
  if ((uint64_t)(K * C * R * S * eb) != src_bytes || (uint64_t)(K * C * s * s * 9 * eb) != dst_bytes) return LC_INVALID;
  memset(out, 0, dst_bytes);
  for (k = 0; k < K; ++k) {
    for (p = 0; p < s; ++p) {
      for (q = 0; q < s; ++q) {
        for (ch = 0; ch < C; ++ch) {
#ifdef WINOGRAD_MUTANT_PHASE_ORDER_SWAPPED
          const int64_t ec = (q * s + p) * C + ch;
#else
          const int64_t ec = (p * s + q) * C + ch;
#endif
          for (i = 0; i < 3; ++i) {
            for (j = 0; j < 3; ++j) {
              const int64_t h = i * s + p, w = j * s + q;
              if (h >= R || w >= S) continue;
              memcpy(out + (((k * s * s * C + ec) * 3 + i) * 3 + j) * eb, in + (((k * C + ch) * R + h) * S + w) * eb,
                     (size_t)eb);
            }
          }
        }
      }
    }
  }
  return LC_OK;
}

/* 2G: 4U = (2G) W (2G)^T is an integer combination of the weights. */
static const int64_t kG2[4][3] = {{2, 0, 0}, {1, 1, 1}, {1, -1, 1}, {0, 0, 2}};

/* t / 4 to the nearest integer, ties to even. */
static int64_t quarter_nearest_even(int64_t t) {
  int64_t q = t >= 0 ? t / 4 : -((-t + 3) / 4); /* floor */
  int64_t r = t - 4 * q;                          /* 0..3 */
#ifdef WINOGRAD_MUTANT_TRUNCATE
  return t >= 0 ? t / 4 : -(-t / 4);
#endif
  if (r > 2 || (r == 2 && (q & 1))) ++q;
  return q;
}

/* (-1)^neg * a * 2^-26 (a the magnitude of 4U in units of 2^-24) to fp16. */
static uint16_t fp16_of(int neg, uint64_t a) {
  int shift, msb;
  uint64_t n, rem, half;
  uint16_t sign = neg ? 0x8000 : 0;
  if (a == 0) return 0;
  msb = 63 - __builtin_clzll(a);
  /* value = a * 2^-26; spacing at exponent e = msb - 26 is 2^(e - 10), at least 2^-24. */
  shift = msb - 26 - 10 < -24 ? 2 : msb - 10;
  if (shift <= 0) {
    n = a << -shift;
  } else {
    n = a >> shift;
    rem = a & (((uint64_t)1 << shift) - 1);
    half = (uint64_t)1 << (shift - 1);
    if (rem > half || (rem == half && (n & 1))) ++n;
  }
  if (n == 0) return 0;
  /* n * 2^(shift - 26): normalise to an fp16 pattern. */
  if (n >= 2048) n >>= 1, ++shift;
  if (n < 1024) return (uint16_t)(sign | n); /* subnormal: shift - 26 == -24 */
  if (shift - 26 + 10 > 15) return (uint16_t)(sign | 0x7bff);
  return (uint16_t)(sign | ((uint64_t)(shift - 26 + 10 + 15) << 10) | (n - 1024));
}

/* An fp16 weight in units of 2^-24; INF counts as +-65504. */
static int64_t fp16_units(uint16_t b) {
  int64_t e = (b >> 10) & 31, m = b & 1023, v;
  if (e == 31) e = 30, m = 1023;
  v = e == 0 ? m : (1024 + m) << (e - 1);
  return (b & 0x8000) ? -v : v;
}

static lc_status transform(const lc_winograd_case* c, const void* src, size_t src_bytes, void* dst, size_t dst_bytes) {
  const int64_t K = c->shape[0], C = c->shape[1];
  const int eb = element_bytes(c);
  const int fp16 = !strcmp(c->dtype, "fp16"), int8 = eb == 1;
  const uint8_t* in = (const uint8_t*)src;
  uint8_t* out = (uint8_t*)dst;
  int64_t ch, i, j, a, b;
  if (!eb || K < 1 || C < 1 || c->shape[2] != 3 || c->shape[3] != 3) return LC_INVALID;
  if ((uint64_t)(K * C * 9 * eb) != src_bytes || (uint64_t)(K * C * 16 * eb) != dst_bytes) return LC_INVALID;
  for (ch = 0; ch < K * C; ++ch) {
    int64_t w[3][3];
    int nan[3][3];
    for (i = 0; i < 3; ++i) {
      for (j = 0; j < 3; ++j) {
        const uint8_t* e = in + (ch * 9 + i * 3 + j) * eb;
        const uint16_t bits = (uint16_t)(e[0] | (eb == 2 ? e[1] << 8 : 0));
        nan[i][j] = fp16 && (bits & 0x7c00) == 0x7c00 && (bits & 0x3ff);
        w[i][j] = int8 ? (int8_t)e[0] : fp16 ? fp16_units(bits) : (int16_t)bits;
      }
    }
    for (a = 0; a < 4; ++a) {
      for (b = 0; b < 4; ++b) {
        int64_t t = 0;
        int any_nan = 0;
        uint8_t* d = out + (ch * 16 + a * 4 + b) * eb;
        uint16_t v;
        for (i = 0; i < 3; ++i) {
          for (j = 0; j < 3; ++j) {
            const int64_t coefficient = kG2[a][i] * kG2[b][j];
            if (!coefficient) continue;
            if (nan[i][j]) any_nan = 1;
            else t += coefficient * w[i][j];
          }
        }
        if (int8) {
          int64_t q = quarter_nearest_even(t);
          d[0] = (uint8_t)(q > 127 ? 127 : q < -128 ? -128 : q);
          continue;
        }
        if (fp16) {
          v = any_nan ? 0x7e00 : fp16_of(t < 0, (uint64_t)(t < 0 ? -t : t));
        } else {
          int64_t q = quarter_nearest_even(t);
          v = (uint16_t)(q > 32767 ? 32767 : q < -32768 ? -32768 : q);
        }
        d[0] = (uint8_t)v;
        d[1] = (uint8_t)(v >> 8);
      }
    }
  }
  return LC_OK;
}

static lc_status supports(const lc_case* c, char* why, size_t n) {
  (void)c;
  if (n) strncpy(why, "Winograd phase 1 only", n - 1);
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

static const lc_capability kCaps[] = {{"nvdla.winograd.phase1", "int8 int16 fp16", 0}};

static const lc_plugin kPlugin = {LC_ABI_MAJOR, LC_ABI_MINOR, sizeof(lc_plugin), WINOGRAD_PLUGIN_NAME,
                                  kCaps, 1, supports, size_bytes, NULL, pack, pack,
                                  NULL, NULL, NULL, extend, transform};

LC_EXPORT const lc_plugin* layoutcheck_plugin_v1(void) { return &kPlugin; }

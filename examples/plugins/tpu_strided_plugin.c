/* A layoutcheck plugin in plain C: Sophgo TPU local-memory tensors with
 * explicit strides, tpu.strided(npus=X,lmem=S,addr=A,mode=M,n=..,c=..,h=..,w=..).
 *
 * From sophgo-tpu-okkernel-local-memory.txt:
 * - "Address of Tensor in Local Memory": A = Q * S + R, the tensor starts at
 *   NPU Q with offset R; the physical buffer is the whole local memory, X * S
 *   bytes, NPU k at k * S.
 * - "Scatter Features to Different NPUs": channel c lives in NPU (Q + c) mod X,
 *   in slot (Q + c) / X of that NPU; channels per NPU = ceil((Q + C) / X).
 * - "Strides in Local Memory": the N, H, W strides step n, h, w; the C stride
 *   steps "from (n, c, h, w) to (n, c + X, h, w)", i.e. from one slot of an
 *   NPU to the next. All four are counted in (stored) elements.
 * - "Storage Modes": 4N (int8/uint8), 2N (int16/uint16), 2IC (fp32) pack 4, 2,
 *   2 consecutive N (I) into one stored element; the strides are "against the
 *   new data type and the new shape"; dummy lanes are 0.
 * The document gives no address rule and no rule against overlapping strides;
 * as layoutcheck reads it (oracles/ERRATA.md, TPU 5 and 6) the address must be
 * a multiple of the stored element size, the strides must nest (ordered by
 * size, each at least the extent times the next smaller one, over the grid of
 * N, channel slots per NPU, H and W), and the last element must end inside
 * its NPU's S bytes.
 *
 * Bytes holding no element ("empty blocks storing nothing about this tensor")
 * are free. Built with -DTPU_STRIDED_LENIENT the plugin fills them with 0x55
 * instead of 0: a lenient but correct implementation, which must pass `check`
 * and fail `check --strict-padding`. Nothing is declined. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layoutcheck/c_api.h"

#ifdef TPU_STRIDED_LENIENT
#define FREE_BYTE 0x55
#define PLUGIN_NAME "tpu-c-strided-lenient"
#else
#define FREE_BYTE 0x00
#define PLUGIN_NAME "tpu-c-strided"
#endif

typedef struct {
  uint64_t X, S, Q, R;
  uint64_t lanes, lane_bytes, word;
  uint64_t N, C, H, W;      /* stored shape (N counts packed words) */
  uint64_t ns, cs, hs, ws;  /* strides in stored words */
  uint64_t slots;
} strided;

static lc_status number(const lc_case* c, const char* key, uint64_t* out, char* why, size_t n) {
  const char* v = lc_param(c, key);
  char* end;
  long long x;
  if (!v) return snprintf(why, n, "parameter %s missing", key), LC_INVALID;
  x = strtoll(v, &end, 10);
  if (end == v || *end || x < 0) return snprintf(why, n, "%s=%s is not a non-negative integer", key, v), LC_INVALID;
  *out = (uint64_t)x;
  return LC_OK;
}

/* Offset in bytes from the tensor's start in its NPU of stored word (n, slot, h, w). */
static uint64_t word_offset(const strided* g, uint64_t n, uint64_t slot, uint64_t h, uint64_t w) {
  return (n * g->ns + slot * g->cs + h * g->hs + w * g->ws) * g->word;
}

static lc_status plan(const lc_case* c, strided* g, char* why, size_t n, int check_overlap) {
  const char* mode = lc_param(c, "mode");
  uint64_t addr, last;
  uint32_t d;
  lc_status s;
  memset(g, 0, sizeof *g);
  if (strcmp(c->layout_name, "tpu.strided") != 0) {
    return snprintf(why, n, "%s is not implemented by this plugin", c->layout_name), LC_UNSUPPORTED;
  }
  if (c->rank != 4) return snprintf(why, n, "a (N, C, H, W) tensor"), LC_INVALID;
  for (d = 0; d < 4; ++d) {
    if (c->shape[d] <= 0 || c->shape[d] > (1 << 24)) return snprintf(why, n, "extents must be in 1..2^24"), LC_INVALID;
  }
  if (c->dtype_bits == 0 || c->dtype_bits % 8) return snprintf(why, n, "%s is not a TPU data type", c->dtype), LC_INVALID;
  g->lane_bytes = c->dtype_bits / 8;
  g->lanes = 1;
  if (mode && strcmp(mode, "4n") == 0) {
    if (strcmp(c->dtype, "int8") && strcmp(c->dtype, "uint8")) return snprintf(why, n, "4N-mode is for int8/uint8"), LC_INVALID;
    g->lanes = 4;
  } else if (mode && strcmp(mode, "2n") == 0) {
    if (strcmp(c->dtype, "int16") && strcmp(c->dtype, "uint16")) return snprintf(why, n, "2N-mode is for int16/uint16"), LC_INVALID;
    g->lanes = 2;
  } else if (mode && strcmp(mode, "2ic") == 0) {
    if (strcmp(c->dtype, "fp32")) return snprintf(why, n, "2IC-mode is for fp32"), LC_INVALID;
    g->lanes = 2;
  } else if (mode && *mode && strcmp(mode, "1n")) {
    return snprintf(why, n, "unknown storage mode %s", mode), LC_INVALID;
  }
  g->word = g->lanes * g->lane_bytes;
  if ((s = number(c, "npus", &g->X, why, n)) || (s = number(c, "lmem", &g->S, why, n)) ||
      (s = number(c, "addr", &addr, why, n)) || (s = number(c, "n", &g->ns, why, n)) ||
      (s = number(c, "c", &g->cs, why, n)) || (s = number(c, "h", &g->hs, why, n)) || (s = number(c, "w", &g->ws, why, n))) {
    return s;
  }
  if (g->X == 0 || g->S == 0 || g->X > 4096 || g->S > ((uint64_t)1 << 30) || g->X * g->S > ((uint64_t)1 << 32)) {
    return snprintf(why, n, "local memory of %llu NPUs x %llu bytes", (unsigned long long)g->X, (unsigned long long)g->S),
           LC_INVALID;
  }
  if (addr >= g->X * g->S) return snprintf(why, n, "address %llu outside local memory", (unsigned long long)addr), LC_INVALID;
  if (addr % g->word) return snprintf(why, n, "address not a multiple of the %llu-byte element", (unsigned long long)g->word), LC_INVALID;
  g->Q = addr / g->S, g->R = addr % g->S;
  g->N = ((uint64_t)c->shape[0] + g->lanes - 1) / g->lanes;
  g->C = (uint64_t)c->shape[1], g->H = (uint64_t)c->shape[2], g->W = (uint64_t)c->shape[3];
  g->slots = (g->Q + g->C + g->X - 1) / g->X;
  /* Strides are at most what fits in S bytes once they matter; bound them so
   * the products below cannot overflow. */
  if (g->ns > g->S || g->cs > g->S || g->hs > g->S || g->ws > g->S) {
    if ((g->N > 1 && g->ns > g->S) || (g->slots > 1 && g->cs > g->S) || (g->H > 1 && g->hs > g->S) ||
        (g->W > 1 && g->ws > g->S)) {
      return snprintf(why, n, "tensor does not fit in an NPU"), LC_INVALID;
    }
    /* A stride of a dimension of extent 1 "makes no sense": it is never used. */
    if (g->N == 1) g->ns = 0;
    if (g->slots == 1) g->cs = 0;
    if (g->H == 1) g->hs = 0;
    if (g->W == 1) g->ws = 0;
  }
  last = word_offset(g, g->N - 1, g->slots - 1, g->H - 1, g->W - 1);
  if (g->R + last + g->word > g->S) return snprintf(why, n, "tensor does not fit in an NPU"), LC_INVALID;
  if (check_overlap) {
    /* The strides must nest: ordered by size, each stride of a dimension that
     * matters (extent > 1) covers the extent times the next smaller one, so no
     * two places of the (n, slot, h, w) grid coincide. */
    uint64_t st[4], ex[4];
    int k = 0, i, j;
    if (g->N > 1) st[k] = g->ns, ex[k++] = g->N;
    if (g->slots > 1) st[k] = g->cs, ex[k++] = g->slots;
    if (g->H > 1) st[k] = g->hs, ex[k++] = g->H;
    if (g->W > 1) st[k] = g->ws, ex[k++] = g->W;
    for (i = 1; i < k; ++i) {
      for (j = i; j > 0 && st[j] < st[j - 1]; --j) {
        uint64_t t = st[j];
        st[j] = st[j - 1], st[j - 1] = t;
        t = ex[j], ex[j] = ex[j - 1], ex[j - 1] = t;
      }
    }
    for (i = 0; i < k; ++i) {
      if (st[i] == 0 || (i > 0 && st[i] < st[i - 1] * ex[i - 1])) {
        return snprintf(why, n, "strides overlap: a stride of %llu under a span of %llu", (unsigned long long)st[i],
                        i > 0 ? (unsigned long long)(st[i - 1] * ex[i - 1]) : 1ull),
               LC_INVALID;
      }
    }
  }
  return LC_OK;
}

/* Byte offset in local memory of logical element (n, c, h, w). */
static uint64_t offset_of(const strided* g, const int64_t* at) {
  uint64_t n = (uint64_t)at[0], ch = (uint64_t)at[1];
  uint64_t npu = (g->Q + ch) % g->X, slot = (g->Q + ch) / g->X;
  return npu * g->S + g->R + word_offset(g, n / g->lanes, slot, (uint64_t)at[2], (uint64_t)at[3]) +
         (n % g->lanes) * g->lane_bytes;
}

static lc_status tpu_supports(const lc_case* c, char* why, size_t n) {
  strided g;
  return plan(c, &g, why, n, 1);
}

static lc_status tpu_size(const lc_case* c, uint64_t* bytes) {
  strided g;
  char why[160];
  lc_status s = plan(c, &g, why, sizeof why, 1);
  if (s == LC_OK) *bytes = g.X * g.S;
  return s;
}

static lc_status tpu_offset(const lc_case* c, const int64_t* at, uint64_t* bits) {
  strided g;
  char why[160];
  lc_status s = plan(c, &g, why, sizeof why, 0);
  if (s == LC_OK) *bits = offset_of(&g, at) * 8;
  return s;
}

static lc_status walk(const lc_case* c, uint8_t* logical, uint8_t* physical, size_t physical_size, int pack) {
  strided g;
  char why[160];
  int64_t at[4];
  uint64_t count = 1, i;
  uint32_t d;
  lc_status s = plan(c, &g, why, sizeof why, 1);
  if (s != LC_OK) return s;
  if (physical_size != g.X * g.S) return LC_ERROR;
  if (pack) {
    uint64_t nn, ch, h, w;
    memset(physical, FREE_BYTE, physical_size);
    /* Every stored word starts as 0: its dummy lanes stay 0 ("Storage Modes"). */
    for (nn = 0; nn < g.N; ++nn) {
      for (ch = 0; ch < g.C; ++ch) {
        uint64_t npu = (g.Q + ch) % g.X, slot = (g.Q + ch) / g.X;
        for (h = 0; h < g.H; ++h) {
          for (w = 0; w < g.W; ++w) memset(physical + npu * g.S + g.R + word_offset(&g, nn, slot, h, w), 0, g.word);
        }
      }
    }
  }
  for (d = 0; d < 4; ++d) count *= (uint64_t)c->shape[d];
  for (i = 0; i < count; ++i) {
    uint64_t r = i, off;
    for (d = 4; d-- > 0;) at[d] = (int64_t)(r % (uint64_t)c->shape[d]), r /= (uint64_t)c->shape[d];
    off = offset_of(&g, at);
    if (off + g.lane_bytes > physical_size) return LC_ERROR;
    if (pack) memcpy(physical + off, logical + i * g.lane_bytes, g.lane_bytes);
    else memcpy(logical + i * g.lane_bytes, physical + off, g.lane_bytes);
  }
  return LC_OK;
}

static lc_status tpu_pack(const lc_case* c, const void* logical, size_t ls, void* physical, size_t ps) {
  (void)ls;
  return walk(c, (uint8_t*)logical, (uint8_t*)physical, ps, 1);
}

static lc_status tpu_unpack(const lc_case* c, const void* physical, size_t ps, void* logical, size_t ls) {
  (void)ls;
  return walk(c, (uint8_t*)logical, (uint8_t*)physical, ps, 0);
}

static const lc_capability kCapabilities[] = {
    {"tpu.strided", "*", 0},
};

static const lc_plugin kPlugin = {LC_ABI_MAJOR, LC_ABI_MINOR, sizeof(lc_plugin), PLUGIN_NAME,
                                  kCapabilities, sizeof kCapabilities / sizeof kCapabilities[0],
                                  tpu_supports, tpu_size, tpu_offset, tpu_pack, tpu_unpack};

LC_EXPORT const lc_plugin* layoutcheck_plugin_v1(void) { return &kPlugin; }

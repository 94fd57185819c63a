/* A layoutcheck plugin in plain C: the Sophgo TPU layouts.
 *
 * Build it as a shared library and check it against the reference:
 *   layoutcheck check --impl ./libtpu_plugin.so --layout 'tpu*'
 *
 * tpu.system is system memory with explicit N, C, H, W element strides; a
 * storage mode of tpu.matrix packs 4 (4N) or 2 (2N) rows into one word.
 *
 * Every call gets the canonical layout text, the layout name and its
 * resolved parameters (lc_param), the dtype and the shape. The mutants in
 * mutants/ reuse this file with one bug switched on (TPU_MUTANT_*). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layoutcheck/c_api.h"

typedef struct {
  int local, matrix;
  uint64_t X, S, Q, R;          /* NPUs, bytes per NPU, start NPU, offset in it */
  uint64_t lanes, lane_bytes;   /* storage mode: 4N int8x4, 2N int16x2, 2IC fp32x2 */
  uint64_t N, C, H, W, M;       /* stored shape; M = matrix columns */
  uint64_t n_stride, c_stride, h_stride, w_stride; /* in stored words */
  uint64_t system_bytes;        /* system memory: the buffer up to the last element */
} geometry;

static uint64_t param(const lc_case* c, const char* key) {
  const char* v = lc_param(c, key);
  return v ? strtoull(v, NULL, 10) : 0;
}

static int is(const lc_case* c, const char* name) { return strcmp(c->layout_name, name) == 0; }

static lc_status plan(const lc_case* c, geometry* g, char* why, size_t n) {
  const char* mode = lc_param(c, "mode");
  uint64_t word, addr, per_eu, slots, last, i;
  memset(g, 0, sizeof *g);
  if (strncmp(c->layout_name, "tpu.", 4) != 0) {
    snprintf(why, n, "this plugin implements the tpu family only");
    return LC_UNSUPPORTED;
  }
  if (c->dtype_bits % 8 != 0) {
    snprintf(why, n, "%s is not a TPU data type", c->dtype);
    return LC_INVALID;
  }
  for (i = 0; i < c->rank; ++i) {
    if (c->shape[i] <= 0) {
      snprintf(why, n, "extents must be positive");
      return LC_INVALID;
    }
  }
  g->lane_bytes = c->dtype_bits / 8;
  g->lanes = 1;
  if (mode && strcmp(mode, "4n") == 0) {
    if (strcmp(c->dtype, "int8") && strcmp(c->dtype, "uint8")) return snprintf(why, n, "4N takes int8/uint8"), LC_INVALID;
    g->lanes = 4;
  } else if (mode && strcmp(mode, "2n") == 0) {
    if (strcmp(c->dtype, "int16") && strcmp(c->dtype, "uint16")) return snprintf(why, n, "2N takes int16/uint16"), LC_INVALID;
    g->lanes = 2;
  } else if (mode && strcmp(mode, "2ic") == 0) {
    if (strcmp(c->dtype, "fp32")) return snprintf(why, n, "2IC takes fp32"), LC_INVALID;
    g->lanes = 2;
  }
  word = g->lanes * g->lane_bytes;
  if (is(c, "tpu.continuous")) {
    if (c->rank != 4) return snprintf(why, n, "rank 4 expected"), LC_INVALID;
    g->N = (uint64_t)c->shape[0], g->C = (uint64_t)c->shape[1], g->H = (uint64_t)c->shape[2], g->W = (uint64_t)c->shape[3];
    g->w_stride = 1, g->h_stride = g->W, g->c_stride = g->H * g->W, g->n_stride = g->C * g->H * g->W;
    g->system_bytes = g->N * g->n_stride * word;
    return LC_OK;
  }
  if (is(c, "tpu.system")) {
    /* "Strides in System Memory": element strides, C from c to c + 1; a stride
     * at extent 1 makes no sense. Sorted by stride, each must step over the
     * elements the smaller ones span; the buffer ends with the last element. */
    uint64_t st[4], ex[4], reach = 1, j, k, t, end;
    if (c->rank != 4) return snprintf(why, n, "rank 4 expected"), LC_INVALID;
    g->N = (uint64_t)c->shape[0], g->C = (uint64_t)c->shape[1], g->H = (uint64_t)c->shape[2], g->W = (uint64_t)c->shape[3];
    g->n_stride = g->N > 1 ? param(c, "n") : 0, g->c_stride = g->C > 1 ? param(c, "c") : 0;
    g->h_stride = g->H > 1 ? param(c, "h") : 0, g->w_stride = g->W > 1 ? param(c, "w") : 0;
    st[0] = g->n_stride, st[1] = g->c_stride, st[2] = g->h_stride, st[3] = g->w_stride;
    ex[0] = g->N, ex[1] = g->C, ex[2] = g->H, ex[3] = g->W;
    for (j = 0; j < 4; ++j) {
      for (k = j + 1; k < 4; ++k) {
        if (st[k] < st[j]) t = st[k], st[k] = st[j], st[j] = t, t = ex[k], ex[k] = ex[j], ex[j] = t;
      }
    }
    for (j = 0; j < 4; ++j) {
      if (ex[j] == 1) continue;
      if (st[j] < reach) return snprintf(why, n, "strides overlap"), LC_INVALID;
      reach = st[j] > UINT64_MAX / ex[j] ? UINT64_MAX : st[j] * ex[j];
    }
    end = 1;
    for (j = 0; j < 4; ++j) {
      if (ex[j] > 1 && st[j] > ((uint64_t)1 << 62) / (ex[j] - 1)) return snprintf(why, n, "buffer past 2^62"), LC_INVALID;
      end += st[j] * (ex[j] - 1);
      if (end > ((uint64_t)1 << 62) / word) return snprintf(why, n, "buffer past 2^62"), LC_INVALID;
    }
    g->system_bytes = end * word;
    return LC_OK;
  }
  g->local = 1;
  g->X = param(c, "npus"), g->S = param(c, "lmem");
  addr = param(c, "addr");
  if (g->X == 0 || g->S == 0 || addr / g->S >= g->X) return snprintf(why, n, "address outside local memory"), LC_INVALID;
#ifdef TPU_MUTANT_IGNORE_START_NPU
  g->Q = 0; /* the bug: the start NPU is dropped, only the offset inside it is kept */
#else
  g->Q = addr / g->S;
#endif
  g->R = addr % g->S;
  if (is(c, "tpu.matrix")) {
    if (c->rank != 2) return snprintf(why, n, "rank 2 expected"), LC_INVALID;
    g->matrix = 1;
    /* A storage mode packs `lanes` rows into one stored word. */
    g->N = ((uint64_t)c->shape[0] + g->lanes - 1) / g->lanes, g->M = (uint64_t)c->shape[1], g->W = param(c, "w"), g->H = 1;
    if (g->W < 1 || g->W > g->M) return snprintf(why, n, "w outside [1, cols]"), LC_INVALID;
#ifdef TPU_MUTANT_MATRIX_FLOOR_COLUMNS
    g->C = g->M / g->W; /* the bug: cols / w rounded down, the last partial column group gets no channel */
#else
    g->C = (g->M + g->W - 1) / g->W;
#endif
  } else {
    if (c->rank != 4) return snprintf(why, n, "rank 4 expected"), LC_INVALID;
#ifdef TPU_MUTANT_4N_FLOOR_BATCH
    g->N = (uint64_t)c->shape[0] / g->lanes; /* the bug: floor of the stored batch words, a partial 4N/2N word is lost */
    if (g->N == 0) g->N = 1;
#else
    g->N = ((uint64_t)c->shape[0] + g->lanes - 1) / g->lanes;
#endif
    g->C = (uint64_t)c->shape[1], g->H = (uint64_t)c->shape[2], g->W = (uint64_t)c->shape[3];
  }
  slots = (g->Q + g->C + g->X - 1) / g->X;
  if (is(c, "tpu.aligned") || g->matrix) {
    uint64_t eu = param(c, "eu");
#ifndef TPU_MUTANT_ACCEPT_UNALIGNED_ADDR /* the bug: the 128-byte start-address rule is never checked */
    if (addr % 128) return snprintf(why, n, "address %llu not divisible by 128", (unsigned long long)addr), LC_INVALID;
#endif
    if (eu % word) return snprintf(why, n, "eu not a multiple of the word"), LC_INVALID;
#ifdef TPU_MUTANT_ALIGN_TO_64_BYTES
    per_eu = 64 / word; /* the bug: aligned to 64 bytes whatever the EU */
    if (per_eu == 0) per_eu = 1;
#elif defined(TPU_MUTANT_EU_IN_BYTES)
    per_eu = eu; /* the bug: the EU size (bytes) used as a count of words, so wide types over-align */
#else
    per_eu = eu / word;
#endif
    g->w_stride = 1, g->h_stride = g->W;
    g->c_stride = (g->H * g->W + per_eu - 1) / per_eu * per_eu;
    g->n_stride = g->c_stride * slots;
  } else if (is(c, "tpu.compact")) {
    if (addr % 4) return snprintf(why, n, "address %llu not divisible by 4", (unsigned long long)addr), LC_INVALID;
    g->w_stride = 1, g->h_stride = g->W, g->c_stride = g->H * g->W, g->n_stride = g->c_stride * slots;
  } else if (is(c, "tpu.strided")) {
    snprintf(why, n, "tpu.strided is not implemented by this plugin");
    return LC_UNSUPPORTED;
  } else {
    snprintf(why, n, "unknown layout %s", c->layout_name);
    return LC_UNSUPPORTED;
  }
  last = (g->N - 1) * g->n_stride + (slots - 1) * g->c_stride + (g->H - 1) * g->h_stride + (g->W - 1) * g->w_stride;
#ifdef TPU_MUTANT_FIT_EXACT_REJECTED
  /* the bug: a tensor that ends exactly at the NPU's end is rejected */
  if (g->R + (last + 1) * word >= g->S) return snprintf(why, n, "tensor does not fit in an NPU"), LC_INVALID;
#else
  if (g->R + (last + 1) * word > g->S) return snprintf(why, n, "tensor does not fit in an NPU"), LC_INVALID;
#endif
  return LC_OK;
}

static uint64_t offset_of(const geometry* g, const int64_t* at) {
  uint64_t n = (uint64_t)at[0], c, h = 0, w, lane = 0, word = g->lanes * g->lane_bytes, chan;
  if (g->matrix) {
    n = (uint64_t)at[0] / g->lanes, lane = (uint64_t)at[0] % g->lanes;
    c = (uint64_t)at[1] / g->W, w = (uint64_t)at[1] % g->W;
  } else {
    n = (uint64_t)at[0] / g->lanes;
#ifdef TPU_MUTANT_REVERSED_LANES
    lane = g->lanes - 1 - (uint64_t)at[0] % g->lanes; /* the bug: lane order inside the word reversed */
#else
    lane = (uint64_t)at[0] % g->lanes;
#endif
    c = (uint64_t)at[1], h = (uint64_t)at[2], w = (uint64_t)at[3];
  }
  if (!g->local) return (n * g->n_stride + c * g->c_stride + h * g->h_stride + w * g->w_stride) * word + lane * g->lane_bytes;
  chan = g->Q + c;
#ifdef TPU_MUTANT_SLOT_INDEX_WRAPS_8
  /* the bug: the slot (channel / NPUs) is kept in a 3-bit field, so the 9th slot
   * lands on the first: wrong only past 8 channels per NPU */
  return (chan % g->X) * g->S + g->R + (n * g->n_stride + ((chan / g->X) & 7) * g->c_stride + h * g->h_stride + w * g->w_stride) * word +
         lane * g->lane_bytes;
#endif
  return (chan % g->X) * g->S + g->R + (n * g->n_stride + (chan / g->X) * g->c_stride + h * g->h_stride + w * g->w_stride) * word +
         lane * g->lane_bytes;
}

static uint64_t image_bytes(const geometry* g) {
  return g->local ? g->X * g->S : g->system_bytes;
}

static lc_status tpu_supports(const lc_case* c, char* why, size_t n) {
  geometry g;
  return plan(c, &g, why, n);
}

static lc_status tpu_size(const lc_case* c, uint64_t* bytes) {
  geometry g;
  char why[128];
  lc_status s = plan(c, &g, why, sizeof why);
  if (s == LC_OK) *bytes = image_bytes(&g);
  return s;
}

static lc_status tpu_offset(const lc_case* c, const int64_t* at, uint64_t* bits) {
  geometry g;
  char why[128];
  lc_status s = plan(c, &g, why, sizeof why);
  if (s == LC_OK) *bits = offset_of(&g, at) * 8;
  return s;
}

/* Visits every logical element in row-major order. */
static lc_status walk(const lc_case* c, uint8_t* logical, uint8_t* physical, size_t physical_size, int pack) {
  geometry g;
  char why[128];
  int64_t at[4] = {0, 0, 0, 0};
  uint64_t count = 1, i, bytes;
  uint32_t d;
  lc_status s = plan(c, &g, why, sizeof why);
  if (s != LC_OK) return s;
  if (physical_size != image_bytes(&g)) return LC_ERROR;
  bytes = g.lane_bytes;
  for (d = 0; d < c->rank; ++d) count *= (uint64_t)c->shape[d];
#ifndef TPU_MUTANT_PADDING_NOT_ZEROED
  if (pack) memset(physical, 0, physical_size);
#endif
  for (i = 0; i < count; ++i) {
    uint64_t rest = i, off;
    for (d = c->rank; d-- > 0;) at[d] = (int64_t)(rest % (uint64_t)c->shape[d]), rest /= (uint64_t)c->shape[d];
    off = offset_of(&g, at);
    if (pack) memcpy(physical + off, logical + i * bytes, bytes);
    else memcpy(logical + i * bytes, physical + off, bytes);
  }
#ifdef TPU_MUTANT_WRITE_PAST_END
  if (pack) memcpy(physical + physical_size, logical, bytes); /* the bug: one element past the buffer */
#endif
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
    {"tpu.continuous", "*", 0},
    {"tpu.aligned", "*", 0},
    {"tpu.compact", "*", 0},
    {"tpu.matrix", "*", 0},
    {"tpu.system", "*", 0},
};

#ifndef TPU_PLUGIN_NAME
#define TPU_PLUGIN_NAME "tpu-c-example"
#endif

static const lc_plugin kPlugin = {LC_ABI_MAJOR, LC_ABI_MINOR, sizeof(lc_plugin), TPU_PLUGIN_NAME,
                                  kCapabilities, sizeof kCapabilities / sizeof kCapabilities[0],
                                  tpu_supports, tpu_size, tpu_offset, tpu_pack, tpu_unpack};

LC_EXPORT const lc_plugin* layoutcheck_plugin_v1(void) { return &kPlugin; }

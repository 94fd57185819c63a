/* A layoutcheck plugin in plain C: every MegEngine layout (mge.matrix, mge.nchw,
 * mge.nhwc, mge.nchw4, mge.nchw32, mge.nchw64, mge.chwn4), written from the
 * stride formula of megengine-tensor-layout.txt rather than per format, and for
 * every itemsize including the 4-bit types NCHW64 is made for.
 *
 * "How Tensor values are stored in memory", "Generalize": the physical tensor
 * T[n_0, ..., n_{N-1}] of shape d has strides s_k = itemsize * prod_{j>k} d_j
 * and the element's offset is sum_k s_k * n_k. Offsets are kept in bits, so an
 * itemsize of half a byte (int4, uint4) works the same way; the lower address
 * nibble is the low nibble of a byte, as the logical buffers store them.
 *
 * The physical tensor of each format:
 *   mge.matrix  order=row: [rows, cols]; order=col: [cols, rows] (the figure's
 *               column-major indexing)
 *   mge.nchw    [N, C, H, W]            ("NCHW and NHWC": W first, then H, C, N)
 *   mge.nhwc    [N, H, W, C]            ("NHWC, the C dimension is stored first")
 *   mge.nchwX   [N, ceil(C/X), H, W, X] ("NCHWX": X = 4, 32, 64)
 *   mge.chwn4   [ceil(C/4), H, W, N, 4] ("CHWN4": 4 channels, then N, W, H)
 * Channels past C in the last block (and a spare nibble at the end) are 0.
 *
 * mge.strided(strides=a:b:..,offset=o,storage=s,row_align=element|byte) is a
 * view of rank 1..7: element strides ("row": the formula above, with
 * row_align=byte the innermost row rounded up to a byte), an element offset
 * and a block of s elements (0: up to the view's last element). A view is
 * valid when it lies in its block and no two elements share memory except
 * along a dimension of stride 0 (a broadcast): views of up to 2^20 such
 * elements are compared offset by offset, larger ones must have nested strides
 * or are declined. Bytes outside the view are written 0; built with
 * -DMGE_STRIDES_LENIENT, 0x55 (the document leaves them free: a lenient but
 * correct implementation, which must pass `check` and fail `check
 * --strict-padding`).
 *
 * Nothing else is declined: every dtype the registry offers is implemented. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layoutcheck/c_api.h"

#define MGE_MAX_RANK 7
#define MGE_ENUMERATE_LIMIT ((uint64_t)1 << 20)

typedef struct {
  uint32_t rank;
  uint64_t dims[MGE_MAX_RANK];
  uint64_t stride_bits[MGE_MAX_RANK];
  uint64_t item_bits, size_bytes;
  uint64_t block;  /* X of NCHWX / CHWN4, 0 otherwise */
  int kind;        /* 0 matrix row, 1 matrix col, 2 nchw, 3 nhwc, 4 nchwX, 5 chwn4, 6 strided view */
  uint64_t start_bits;  /* mge.strided: the offset of element (0, ..., 0) */
} tensor;

static int cmp_u64(const void* a, const void* b) {
  uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
  return x < y ? -1 : x > y;
}

/* a * b + c, or 0 with *ok = 0 past 2^62. */
static uint64_t mad62(uint64_t a, uint64_t b, uint64_t c, int* ok) {
  const uint64_t limit = (uint64_t)1 << 62;
  if (b != 0 && a > limit / b) return *ok = 0, 0;
  if (a * b > limit - c) return *ok = 0, 0;
  return a * b + c;
}

static lc_status plan_view(const lc_case* c, tensor* t, char* why, size_t n) {
  const char* text = lc_param(c, "strides");
  const char* align = lc_param(c, "row_align");
  int byte_rows = align && strcmp(align, "byte") == 0, ok = 1;
  uint64_t st[MGE_MAX_RANK], end, storage, k, count = 1, moving = 0;
  uint32_t d, r = c->rank;
  t->kind = 6, t->rank = r;
  for (d = 0; d < r; ++d) t->dims[d] = (uint64_t)c->shape[d];
  if (!text || strcmp(text, "row") == 0) {
    uint64_t s = t->item_bits;
    for (d = r; d-- > 0;) {
      t->stride_bits[d] = s;
      s = mad62(s, t->dims[d], 0, &ok);
      if (d == r - 1 && byte_rows) s = (s + 7) / 8 * 8;
      if (!ok) return snprintf(why, n, "the view is too large"), LC_INVALID;
    }
  } else {
    const char* p = text;
    uint32_t got = 0;
    while (1) {
      char* e;
      unsigned long long v;
      if (*p < '0' || *p > '9') return snprintf(why, n, "strides '%s' malformed", text), LC_INVALID;
      v = strtoull(p, &e, 10);
      if (got == MGE_MAX_RANK || v > (uint64_t)INT64_MAX) return snprintf(why, n, "strides '%s' malformed", text), LC_INVALID;
      st[got++] = v;
      if (*e == 0) break;
      if (*e != ':') return snprintf(why, n, "strides '%s' malformed", text), LC_INVALID;
      p = e + 1;
    }
    if (got != r) return snprintf(why, n, "%u strides for rank %u", got, r), LC_INVALID;
    for (d = 0; d < r; ++d) {
      t->stride_bits[d] = mad62(st[d], t->item_bits, 0, &ok);
      if (!ok) return snprintf(why, n, "stride too large"), LC_INVALID;
    }
  }
  t->start_bits = mad62(strtoull(lc_param(c, "offset") ? lc_param(c, "offset") : "0", NULL, 10), t->item_bits, 0, &ok);
  if (!ok) return snprintf(why, n, "offset too large"), LC_INVALID;
  if (byte_rows && text && strcmp(text, "row") != 0) {
    if (t->start_bits % 8) return snprintf(why, n, "row_align=byte: the view starts inside a byte"), LC_INVALID;
    for (d = 0; d + 1 < r; ++d) {
      if (t->dims[d] > 1 && t->stride_bits[d] % 8) return snprintf(why, n, "row_align=byte: a row inside a byte"), LC_INVALID;
    }
  }
  end = t->start_bits + t->item_bits;
  for (d = 0; d < r && ok; ++d) end = mad62(t->stride_bits[d], t->dims[d] - 1, end, &ok);
  storage = strtoull(lc_param(c, "storage") ? lc_param(c, "storage") : "0", NULL, 10);
  if (storage == 0) {
    if (!ok) return snprintf(why, n, "the view is too large"), LC_INVALID;
    t->size_bytes = (end + 7) / 8;
  } else {
    int block_ok = 1;
    uint64_t block = mad62(storage, t->item_bits, 0, &block_ok);
    if (!block_ok) return snprintf(why, n, "the block is too large"), LC_INVALID;
    if (!ok || end > block) return snprintf(why, n, "the view leaves its block"), LC_INVALID;
    t->size_bytes = (block + 7) / 8;
  }
  /* Overlap outside broadcast dimensions. */
  for (d = 0; d < r; ++d) {
    if (t->dims[d] > 1 && t->stride_bits[d] != 0) {
      ++moving;
      count = count > MGE_ENUMERATE_LIMIT ? count : count * t->dims[d];
    }
  }
  if (count <= MGE_ENUMERATE_LIMIT) {
    uint64_t* offs = malloc(count * sizeof *offs);
    uint64_t idx[MGE_MAX_RANK] = {0};
    if (!offs) return snprintf(why, n, "out of memory"), LC_ERROR;
    for (k = 0; k < count; ++k) {
      uint64_t o = 0;
      for (d = 0; d < r; ++d) o += idx[d] * (t->dims[d] > 1 ? t->stride_bits[d] : 0);
      offs[k] = o;
      for (d = r; d-- > 0;) {
        if (t->dims[d] <= 1 || t->stride_bits[d] == 0) continue;
        if (++idx[d] < t->dims[d]) break;
        idx[d] = 0;
      }
    }
    qsort(offs, count, sizeof *offs, cmp_u64);
    for (k = 1; k < count; ++k) {
      if (offs[k] == offs[k - 1]) {
        free(offs);
        return snprintf(why, n, "two elements share memory outside a broadcast dimension"), LC_INVALID;
      }
    }
    free(offs);
    return LC_OK;
  }
  {
    /* Nested strides: sorted by size, each at least the span of the smaller ones. */
    uint64_t ss[MGE_MAX_RANK], ee[MGE_MAX_RANK], span = t->item_bits, m = 0, i, j, x;
    for (d = 0; d < r; ++d) {
      if (t->dims[d] > 1 && t->stride_bits[d] != 0) ss[m] = t->stride_bits[d], ee[m] = t->dims[d], ++m;
    }
    for (i = 0; i < m; ++i) {
      for (j = i + 1; j < m; ++j) {
        if (ss[j] < ss[i]) x = ss[i], ss[i] = ss[j], ss[j] = x, x = ee[i], ee[i] = ee[j], ee[j] = x;
      }
    }
    for (i = 0; i < m; ++i) {
      if (ss[i] < span) return snprintf(why, n, "a large view with interleaved strides"), LC_UNSUPPORTED;
      span += ss[i] * (ee[i] - 1);
    }
  }
  (void)moving;
  return LC_OK;
}

static lc_status plan(const lc_case* c, tensor* t, char* why, size_t n) {
  const char* name = c->layout_name;
  uint32_t d;
  uint64_t stride;
  memset(t, 0, sizeof *t);
  if (strncmp(name, "mge.", 4) != 0) return snprintf(why, n, "mge layouts only"), LC_UNSUPPORTED;
  name += 4;
  t->item_bits = c->dtype_bits;
  if (t->item_bits != 4 && t->item_bits % 8) return snprintf(why, n, "itemsize of %u bits", c->dtype_bits), LC_INVALID;
  for (d = 0; d < c->rank; ++d) {
    if (c->shape[d] <= 0 || c->shape[d] > (1 << 24)) return snprintf(why, n, "extents must be in 1..2^24"), LC_INVALID;
  }
  if (strcmp(name, "strided") == 0) {
    if (c->rank < 1 || c->rank > MGE_MAX_RANK) return snprintf(why, n, "rank 1..%d", MGE_MAX_RANK), LC_INVALID;
    return plan_view(c, t, why, n);
  }
  if (strcmp(name, "matrix") == 0) {
    const char* order = lc_param(c, "order");
    if (c->rank != 2) return snprintf(why, n, "a (rows, cols) matrix"), LC_INVALID;
    if (order && strcmp(order, "row") && strcmp(order, "col")) return snprintf(why, n, "order is row or col"), LC_INVALID;
    t->kind = order && strcmp(order, "col") == 0;
    t->rank = 2;
    t->dims[0] = (uint64_t)c->shape[t->kind ? 1 : 0];
    t->dims[1] = (uint64_t)c->shape[t->kind ? 0 : 1];
  } else {
    uint64_t N, C, H, W;
    if (c->rank != 4) return snprintf(why, n, "a logical (N, C, H, W) tensor"), LC_INVALID;
    N = (uint64_t)c->shape[0], C = (uint64_t)c->shape[1], H = (uint64_t)c->shape[2], W = (uint64_t)c->shape[3];
    if (strcmp(name, "nchw") == 0) {
      t->kind = 2, t->rank = 4;
      t->dims[0] = N, t->dims[1] = C, t->dims[2] = H, t->dims[3] = W;
    } else if (strcmp(name, "nhwc") == 0) {
      t->kind = 3, t->rank = 4;
      t->dims[0] = N, t->dims[1] = H, t->dims[2] = W, t->dims[3] = C;
    } else if (strcmp(name, "chwn4") == 0) {
      t->kind = 5, t->rank = 5, t->block = 4;
      t->dims[0] = (C + 3) / 4, t->dims[1] = H, t->dims[2] = W, t->dims[3] = N, t->dims[4] = 4;
    } else if (strcmp(name, "nchw4") == 0 || strcmp(name, "nchw32") == 0 || strcmp(name, "nchw64") == 0) {
      t->kind = 4, t->rank = 5, t->block = strtoull(name + 4, NULL, 10);
      t->dims[0] = N, t->dims[1] = (C + t->block - 1) / t->block, t->dims[2] = H, t->dims[3] = W;
      t->dims[4] = t->block;
    } else {
      return snprintf(why, n, "%s is not implemented by this plugin", c->layout_name), LC_UNSUPPORTED;
    }
  }
  /* "Generalize": s_k = itemsize * prod_{j=k+1}^{N-1} d_j. Extents are at most
   * 2^24 and the ranks small, so the products are checked against 2^62. */
  stride = t->item_bits;
  for (d = t->rank; d-- > 0;) {
    t->stride_bits[d] = stride;
    if (stride > ((uint64_t)1 << 62) / t->dims[d]) return snprintf(why, n, "the tensor is too large"), LC_INVALID;
    stride *= t->dims[d];
  }
  t->size_bytes = (stride + 7) / 8;
  return LC_OK;
}

/* n_offset = sum_k s_k * n_k, in bits. */
static uint64_t offset_bits_of(const tensor* t, const int64_t* at) {
  uint64_t idx[MGE_MAX_RANK] = {0};
  uint32_t k;
  uint64_t off = 0;
  if (t->kind == 6) {
    off = t->start_bits;
    for (k = 0; k < t->rank; ++k) off += t->stride_bits[k] * (uint64_t)at[k];
    return off;
  }
  if (t->kind <= 1) {
    idx[0] = (uint64_t)at[t->kind ? 1 : 0], idx[1] = (uint64_t)at[t->kind ? 0 : 1];
  } else {
    uint64_t nn = (uint64_t)at[0], cc = (uint64_t)at[1], hh = (uint64_t)at[2], ww = (uint64_t)at[3];
    if (t->kind == 2) idx[0] = nn, idx[1] = cc, idx[2] = hh, idx[3] = ww;
    if (t->kind == 3) idx[0] = nn, idx[1] = hh, idx[2] = ww, idx[3] = cc;
    if (t->kind == 4) idx[0] = nn, idx[1] = cc / t->block, idx[2] = hh, idx[3] = ww, idx[4] = cc % t->block;
    if (t->kind == 5) idx[0] = cc / 4, idx[1] = hh, idx[2] = ww, idx[3] = nn, idx[4] = cc % 4;
  }
  for (k = 0; k < t->rank; ++k) off += t->stride_bits[k] * idx[k];
  return off;
}

static void copy_bits(const uint8_t* src, uint64_t from, uint8_t* dst, uint64_t to, uint64_t bits) {
  if (bits % 8 == 0) {
    memcpy(dst + to / 8, src + from / 8, bits / 8);
  } else {
    uint8_t v = (uint8_t)((src[from / 8] >> (from % 8)) & 0xF);
    dst[to / 8] = (uint8_t)((dst[to / 8] & ~(0xF << (to % 8))) | (v << (to % 8)));
  }
}

static lc_status mge_supports(const lc_case* c, char* why, size_t n) {
  tensor t;
  return plan(c, &t, why, n);
}

static lc_status mge_size(const lc_case* c, uint64_t* bytes) {
  tensor t;
  char why[128];
  lc_status s = plan(c, &t, why, sizeof why);
  if (s == LC_OK) *bytes = t.size_bytes;
  return s;
}

static lc_status mge_offset(const lc_case* c, const int64_t* at, uint64_t* bits) {
  tensor t;
  char why[128];
  lc_status s = plan(c, &t, why, sizeof why);
  if (s == LC_OK) *bits = offset_bits_of(&t, at);
  return s;
}

static lc_status walk(const lc_case* c, uint8_t* logical, size_t logical_size, uint8_t* physical, size_t physical_size,
                      int pack) {
  tensor t;
  char why[128];
  int64_t at[MGE_MAX_RANK];
  uint64_t count = 1, i;
  uint32_t d;
  lc_status s = plan(c, &t, why, sizeof why);
  if (s != LC_OK) return s;
  for (d = 0; d < c->rank; ++d) count *= (uint64_t)c->shape[d];
  if (physical_size != t.size_bytes || logical_size < (count * t.item_bits + 7) / 8) return LC_ERROR;
  if (pack) memset(physical, 0, physical_size);
  else memset(logical, 0, logical_size);
#ifdef MGE_STRIDES_LENIENT
  if (pack && t.kind == 6) {
    /* A view's bytes outside it are free: 0x55 there, 0 in every byte an
     * element has a bit of (a 4-bit element's byte is compared whole). */
    memset(physical, 0x55, physical_size);
    for (i = 0; i < count; ++i) {
      uint64_t r = i, bit;
      for (d = c->rank; d-- > 0;) at[d] = (int64_t)(r % (uint64_t)c->shape[d]), r /= (uint64_t)c->shape[d];
      bit = offset_bits_of(&t, at);
      memset(physical + bit / 8, 0, (size_t)((bit + t.item_bits + 7) / 8 - bit / 8));
    }
  }
#endif
  for (i = 0; i < count; ++i) {
    uint64_t r = i;
    for (d = c->rank; d-- > 0;) at[d] = (int64_t)(r % (uint64_t)c->shape[d]), r /= (uint64_t)c->shape[d];
    if (pack) copy_bits(logical, i * t.item_bits, physical, offset_bits_of(&t, at), t.item_bits);
    else copy_bits(physical, offset_bits_of(&t, at), logical, i * t.item_bits, t.item_bits);
  }
  return LC_OK;
}

static lc_status mge_pack(const lc_case* c, const void* logical, size_t ls, void* physical, size_t ps) {
  return walk(c, (uint8_t*)logical, ls, (uint8_t*)physical, ps, 1);
}

static lc_status mge_unpack(const lc_case* c, const void* physical, size_t ps, void* logical, size_t ls) {
  return walk(c, (uint8_t*)logical, ls, (uint8_t*)physical, ps, 0);
}

static const lc_capability kCapabilities[] = {
    {"mge.matrix", "*", 0}, {"mge.nchw*", "*", 0}, {"mge.nhwc", "*", 0}, {"mge.chwn4", "*", 0},
    {"mge.strided", "*", 0},
};

#ifdef MGE_STRIDES_LENIENT
#define PLUGIN_NAME "mge-c-strides-lenient"
#else
#define PLUGIN_NAME "mge-c-strides"
#endif
static const lc_plugin kPlugin = {LC_ABI_MAJOR, LC_ABI_MINOR, sizeof(lc_plugin), PLUGIN_NAME,
                                  kCapabilities, sizeof kCapabilities / sizeof kCapabilities[0],
                                  mge_supports, mge_size, mge_offset, mge_pack, mge_unpack};

LC_EXPORT const lc_plugin* layoutcheck_plugin_v1(void) { return &kPlugin; }

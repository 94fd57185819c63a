/* Example plugin: NVDLA sparse weight compression of ABI 1.1 (c_api.h,
 * `sparse_compress` / `sparse_decompress`; "Sparse Compression option").
 *
 * The packed weight buffer of an nvdla.weight.dc or nvdla.weight.winograd case
 * is read element by element in its stored order, kernel group by kernel group
 * (32 kernels for int8, 16 for int16/fp16):
 *   WMB   bit i (little-endian: bit i % 8 of byte i / 8) = element i is not zero
 *   data  the non-zero elements packed compactly
 *   WGS   per group, the bytes of its non-zero elements, a 32-bit little-endian word
 * every surface padded with zeros to 128 bytes.
 *
 * Build: cc -shared -fPIC -I include examples/plugins/sparse_plugin.c -o libsparse.so
 * Check: layoutcheck check --impl ./libsparse.so --layout nvdla.sparse
 *
 * SPARSE_MUTANT_* defines plant one bug each (examples/plugins/mutants). */
#include <stdint.h>
#include <string.h>

#include "layoutcheck/c_api.h"

#ifndef SPARSE_PLUGIN_NAME
#define SPARSE_PLUGIN_NAME "sparse-c"
#endif

/* The groups of a case: element bytes, elements per kernel, kernels, kernels per group. */
typedef struct {
  uint64_t eb, per_kernel, kernels, group;
} groups;

static int groups_of(const lc_case* c, groups* g) {
  uint64_t per_atom;
  if (c->rank != 4 || (c->dtype_bits != 8 && c->dtype_bits != 16)) return 0;
  g->eb = c->dtype_bits / 8;
  g->kernels = (uint64_t)c->shape[0];
  g->group = c->dtype_bits == 8 ? 32 : 16;
  if (!strcmp(c->layout_name, "nvdla.weight.dc")) {
    g->per_kernel = (uint64_t)(c->shape[1] * c->shape[2] * c->shape[3]);
  } else if (!strcmp(c->layout_name, "nvdla.weight.winograd")) {
    /* The mapped kernel is 4x4 x C, C padded to 32 bytes; those zeros are weights too. */
    per_atom = 32 / g->eb;
    g->per_kernel = ((uint64_t)c->shape[1] + per_atom - 1) / per_atom * per_atom * 16;
  } else {
    return 0;
  }
  return 1;
}

static uint64_t align128(uint64_t v) { return (v + 127) / 128 * 128; }

static int is_zero(const uint8_t* e, uint64_t n) {
  uint64_t i;
  for (i = 0; i < n; ++i) {
    if (e[i]) return 0;
  }
  return 1;
}

static uint64_t wmb_bit(uint64_t i) {
#ifdef SPARSE_MUTANT_WMB_BIT_ORDER_REVERSED
  return 7 - i % 8;
#else
  return i % 8;
#endif
}

static lc_status compress(const lc_case* c, const void* packed, size_t packed_size, const lc_sparse_surfaces* out,
                          uint64_t* data_size) {
  groups g;
  uint64_t total, element = 0, written = 0, k0, gi = 0;
  const uint8_t* src = (const uint8_t*)packed;
  uint8_t *wgs = (uint8_t*)out->wgs, *wmb = (uint8_t*)out->wmb, *data = (uint8_t*)out->data;
  if (!groups_of(c, &g)) return LC_UNSUPPORTED;
  total = g.kernels * g.per_kernel;
  if (total * g.eb > packed_size || out->wmb_size != align128((total + 7) / 8) ||
      out->wgs_size != align128(4 * ((g.kernels + g.group - 1) / g.group)) || out->data_size < align128(total * g.eb)) {
    return LC_INVALID;
  }
  memset(wgs, 0, out->wgs_size);
  memset(wmb, 0, out->wmb_size);
  memset(data, 0, out->data_size);
  for (k0 = 0; k0 < g.kernels; k0 += g.group, ++gi) {
    uint64_t n = (g.kernels - k0 < g.group ? g.kernels - k0 : g.group) * g.per_kernel, i, kept = 0;
    int b;
    for (i = 0; i < n; ++i, ++element) {
      const uint8_t* e = src + element * g.eb;
      if (is_zero(e, g.eb)) continue;
      wmb[element / 8] |= (uint8_t)(1u << wmb_bit(element));
      memcpy(data + written, e, g.eb);
      written += g.eb;
      kept += g.eb;
    }
#ifdef SPARSE_MUTANT_WGS_UNCOMPRESSED_BYTES
    kept = n * g.eb;
#endif
    for (b = 0; b < 4; ++b) wgs[4 * gi + (uint64_t)b] = (uint8_t)(kept >> (8 * b));
  }
  *data_size = align128(written);
  return LC_OK;
}

static lc_status decompress(const lc_case* c, const lc_sparse_surfaces* in, void* packed, size_t packed_size) {
  groups g;
  uint64_t total, element, read = 0;
  const uint8_t *wmb = (const uint8_t*)in->wmb, *data = (const uint8_t*)in->data;
  uint8_t* dst = (uint8_t*)packed;
  if (!groups_of(c, &g)) return LC_UNSUPPORTED;
  total = g.kernels * g.per_kernel;
  if (total * g.eb > packed_size || in->wmb_size < (total + 7) / 8) return LC_INVALID;
  memset(dst, 0, packed_size);
  for (element = 0; element < total; ++element) {
    if (!((wmb[element / 8] >> wmb_bit(element)) & 1)) continue;
    if (read + g.eb > in->data_size) return LC_INVALID;
    memcpy(dst + element * g.eb, data + read, g.eb);
    read += g.eb;
  }
  return LC_OK;
}

static lc_status supports(const lc_case* c, char* why, size_t n) {
  (void)c;
  if (n) strncpy(why, "sparse compression only", n - 1);
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

static const lc_capability kCaps[] = {{"nvdla.sparse", "int8 int16 fp16", 0}};

static const lc_plugin kPlugin = {LC_ABI_MAJOR, LC_ABI_MINOR, sizeof(lc_plugin), SPARSE_PLUGIN_NAME,
                                  kCaps, 1, supports, size_bytes, NULL, pack, pack,
                                  NULL, compress, decompress, NULL, NULL};

LC_EXPORT const lc_plugin* layoutcheck_plugin_v1(void) { return &kPlugin; }

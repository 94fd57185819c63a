/* A layoutcheck plugin in plain C: the MegEngine layouts over a logical NCHW
 * tensor (whole-byte element types).
 *
 * NCHWX is the physical tensor [N, ceil(C/X), H, W, X], CHWN4 is
 * [ceil(C/4), H, W, N, 4], NHWC is [N, H, W, C]; channels that do not fill
 * the last block are 0. The mutants in mutants/ reuse this file with one bug
 * switched on (MGE_MUTANT_*). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layoutcheck/c_api.h"

typedef struct {
  int nhwc, chwn;
  uint64_t N, C, H, W, X, blocks, bytes;
} mge;

static lc_status plan(const lc_case* c, mge* m, char* why, size_t n) {
  const char* name = c->layout_name;
  uint32_t d;
  memset(m, 0, sizeof *m);
  if (strncmp(name, "mge.", 4) != 0) return snprintf(why, n, "mge layouts only"), LC_UNSUPPORTED;
  name += 4;
  if (strcmp(name, "nchw") == 0) m->X = 1;
  else if (strcmp(name, "nhwc") == 0) m->X = 1, m->nhwc = 1;
  else if (strcmp(name, "nchw4") == 0) m->X = 4;
  else if (strcmp(name, "nchw32") == 0) m->X = 32;
#ifdef MGE_MUTANT_NCHW64_AS_32
  else if (strcmp(name, "nchw64") == 0) m->X = 32; /* the bug: NCHW64 handled by the NCHW32 path */
#else
  else if (strcmp(name, "nchw64") == 0) m->X = 64;
#endif
  else if (strcmp(name, "chwn4") == 0) m->X = 4, m->chwn = 1;
  else return snprintf(why, n, "%s is not implemented by this plugin", c->layout_name), LC_UNSUPPORTED;
  if (c->dtype_bits % 8) return snprintf(why, n, "sub-byte types are not implemented by this plugin"), LC_UNSUPPORTED;
  if (c->rank != 4) return snprintf(why, n, "logical NCHW expected"), LC_INVALID;
  for (d = 0; d < 4; ++d) {
    if (c->shape[d] <= 0) return snprintf(why, n, "extents must be positive"), LC_INVALID;
  }
  m->N = (uint64_t)c->shape[0], m->C = (uint64_t)c->shape[1], m->H = (uint64_t)c->shape[2], m->W = (uint64_t)c->shape[3];
  m->bytes = c->dtype_bits / 8;
#ifdef MGE_MUTANT_FLOOR_BLOCKS
  m->blocks = m->C / m->X + (m->C < m->X); /* the bug: floor of the block count */
#else
  m->blocks = (m->C + m->X - 1) / m->X;
#endif
  return LC_OK;
}

static uint64_t elements(const mge* m) { return m->N * m->blocks * m->X * m->H * m->W; }

static uint64_t element_of(const mge* m, const int64_t* at) {
  uint64_t n = (uint64_t)at[0], c = (uint64_t)at[1], h = (uint64_t)at[2], w = (uint64_t)at[3];
  uint64_t cb = c / m->X, ci = c % m->X;
#ifdef MGE_MUTANT_BATCH_TABLE_4
  /* the bug: the per-batch base comes from a 4-entry table sized for the N4 of
   * CHWN4, so batch 4 lands on batch 0: wrong only for batch > 4 */
  n &= 3;
#endif
#ifdef MGE_MUTANT_NHWC_PADDED_C4
  if (m->nhwc) return ((n * m->H + h) * m->W + w) * ((m->C + 3) / 4 * 4) + c; /* the bug: NHWC channels padded to 4 */
#endif
  if (m->nhwc) return ((n * m->H + h) * m->W + w) * m->C + c;
#ifdef MGE_MUTANT_CHWN4_BATCH_INNERMOST
  if (m->chwn) return (((cb * m->H + h) * m->W + w) * m->X + ci) * m->N + n; /* the bug: N inside the 4 channels */
#endif
  if (m->chwn) return (((cb * m->H + h) * m->W + w) * m->N + n) * m->X + ci;
#ifdef MGE_MUTANT_SWAPPED_HW
  return (((n * m->blocks + cb) * m->W + w) * m->H + h) * m->X + ci; /* the bug: H and W exchanged */
#else
  return (((n * m->blocks + cb) * m->H + h) * m->W + w) * m->X + ci;
#endif
}

static lc_status mge_supports(const lc_case* c, char* why, size_t n) {
  mge m;
  return plan(c, &m, why, n);
}

static lc_status mge_size(const lc_case* c, uint64_t* bytes) {
  mge m;
  char why[128];
  lc_status s = plan(c, &m, why, sizeof why);
  if (s == LC_OK) *bytes = elements(&m) * m.bytes;
  return s;
}

static lc_status mge_offset(const lc_case* c, const int64_t* at, uint64_t* bits) {
  mge m;
  char why[128];
  lc_status s = plan(c, &m, why, sizeof why);
  if (s == LC_OK) *bits = element_of(&m, at) * m.bytes * 8;
  return s;
}

static lc_status walk(const lc_case* c, uint8_t* logical, uint8_t* physical, size_t physical_size, int pack) {
  mge m;
  char why[128];
  int64_t at[4];
  uint64_t i, count, off;
  lc_status s = plan(c, &m, why, sizeof why);
  if (s != LC_OK) return s;
  if (physical_size != elements(&m) * m.bytes) return LC_ERROR;
#ifndef MGE_MUTANT_PADDING_NOT_ZEROED /* the bug: the channels past C in the last block are left as they were */
  if (pack) memset(physical, 0, physical_size);
#endif
  count = m.N * m.C * m.H * m.W;
  for (i = 0; i < count; ++i) {
    at[3] = (int64_t)(i % m.W), at[2] = (int64_t)(i / m.W % m.H), at[1] = (int64_t)(i / (m.W * m.H) % m.C);
    at[0] = (int64_t)(i / (m.W * m.H * m.C));
    off = element_of(&m, at) * m.bytes;
    if (off + m.bytes > physical_size) return LC_ERROR;
    if (pack) memcpy(physical + off, logical + i * m.bytes, m.bytes);
    else memcpy(logical + i * m.bytes, physical + off, m.bytes);
  }
  return LC_OK;
}

static lc_status mge_pack(const lc_case* c, const void* logical, size_t ls, void* physical, size_t ps) {
  (void)ls;
  return walk(c, (uint8_t*)logical, (uint8_t*)physical, ps, 1);
}

static lc_status mge_unpack(const lc_case* c, const void* physical, size_t ps, void* logical, size_t ls) {
  (void)ls;
  return walk(c, (uint8_t*)logical, (uint8_t*)physical, ps, 0);
}

static const lc_capability kCapabilities[] = {
    {"mge.nchw*", "int8 uint8 int16 uint16 int32 uint32 fp16 bf16 fp32", 0},
    {"mge.nhwc", "int8 uint8 int16 uint16 int32 uint32 fp16 bf16 fp32", 0},
    {"mge.chwn4", "int8 uint8 int16 uint16 int32 uint32 fp16 bf16 fp32", 0},
};

#ifndef MGE_PLUGIN_NAME
#define MGE_PLUGIN_NAME "mge-c-example"
#endif

static const lc_plugin kPlugin = {LC_ABI_MAJOR, LC_ABI_MINOR, sizeof(lc_plugin), MGE_PLUGIN_NAME,
                                  kCapabilities, sizeof kCapabilities / sizeof kCapabilities[0],
                                  mge_supports, mge_size, mge_offset, mge_pack, mge_unpack};

LC_EXPORT const lc_plugin* layoutcheck_plugin_v1(void) { return &kPlugin; }

/* A layoutcheck plugin in plain C: NVDLA feature data (one cube, or N cubes a
 * batch stride apart) and direct-convolution weights.
 *
 * Feature data (C,H,W): 1x1x32-byte atoms, C' = 32 bytes of channels inside,
 * then W, then H (line stride), then surfaces of C' channels (surface stride);
 * C padded to the atom with 0. Multi-batch feature data (N,C,H,W): batch n's
 * cube at n * batch stride, a multiple of 32 holding the whole cube (0: the
 * cube's size; ERRATA NVDLA 24). DC weights (K,C,H,W): groups of 32 (int8) or 16
 * kernels mapped one after another; inside a group, 1x1x64-element channel
 * cubes scanned C' -> K -> W -> H -> C, the last cube holding only the channels
 * left; zeros to 128-byte alignment at the end. The mutants in mutants/ reuse
 * this file with one bug switched on (NVDLA_MUTANT_*). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layoutcheck/c_api.h"

typedef struct {
  int weights, batch;
  uint64_t N, batch_stride;                                       /* multi-batch feature */
  uint64_t K, C, H, W, bytes;
  uint64_t atom_elements, line_stride, surface_stride, surfaces;  /* feature */
  uint64_t group, cube;                                           /* weights */
  uint64_t size;
} nvdla;

static uint64_t param(const lc_case* c, const char* key) {
  const char* v = lc_param(c, key);
  return v ? strtoull(v, NULL, 10) : 0;
}

static lc_status plan(const lc_case* c, nvdla* m, char* why, size_t n) {
  uint64_t i;
  memset(m, 0, sizeof *m);
  if (strcmp(c->layout_name, "nvdla.feature") && strcmp(c->layout_name, "nvdla.weight.dc") &&
      strcmp(c->layout_name, "nvdla.feature.batch")) {
    return snprintf(why, n, "%s is not implemented by this plugin", c->layout_name), LC_UNSUPPORTED;
  }
  if (strcmp(c->dtype, "int8") && strcmp(c->dtype, "int16") && strcmp(c->dtype, "fp16")) {
    return snprintf(why, n, "precisions are int8, int16 and fp16"), LC_INVALID;
  }
  for (i = 0; i < c->rank; ++i) {
    if (c->shape[i] <= 0) return snprintf(why, n, "extents must be positive"), LC_INVALID;
  }
  m->bytes = c->dtype_bits / 8;
  m->batch = strcmp(c->layout_name, "nvdla.feature.batch") == 0;
  if (strcmp(c->layout_name, "nvdla.feature") == 0 || m->batch) {
    uint64_t ls = param(c, "line_stride"), ss = param(c, "surface_stride");
    const int64_t* cube = c->shape + m->batch;
    if (c->rank != 3u + (uint32_t)m->batch) return snprintf(why, n, "feature data is ([N,]C,H,W)"), LC_INVALID;
    if (param(c, "addr") % 32) return snprintf(why, n, "start address not 32-byte aligned"), LC_INVALID;
    m->C = (uint64_t)cube[0], m->H = (uint64_t)cube[1], m->W = (uint64_t)cube[2];
#ifdef NVDLA_MUTANT_ATOM_16_ELEMENTS
    m->atom_elements = 16; /* the bug: C' = 16 channels whatever the precision (right for int16/fp16 only) */
#else
    m->atom_elements = 32 / m->bytes;
#endif
    m->surfaces = (m->C + m->atom_elements - 1) / m->atom_elements;
#ifdef NVDLA_MUTANT_LINE_STRIDE_OFF_BY_ONE
    m->line_stride = ls ? ls : (m->W + 1) * 32; /* the bug: one atom too many per packed line */
#else
    m->line_stride = ls ? ls : m->W * 32;
#endif
#if defined(NVDLA_MUTANT_ACCEPT_UNALIGNED_LINE_STRIDE)
    /* the bug: the line stride's 32-byte alignment is never checked (only its minimum) */
    if (m->line_stride < m->W * 32) return snprintf(why, n, "bad line stride"), LC_INVALID;
#elif defined(NVDLA_MUTANT_LINE_STRIDE_EXACT_FIT_REJECTED)
    /* the bug: a given line stride must exceed the packed line, one exactly W atoms long is rejected */
    if (m->line_stride % 32 || m->line_stride < m->W * 32 || (ls && ls == m->W * 32)) return snprintf(why, n, "bad line stride"), LC_INVALID;
#else
    if (m->line_stride % 32 || m->line_stride < m->W * 32) return snprintf(why, n, "bad line stride"), LC_INVALID;
#endif
#ifdef NVDLA_MUTANT_SURFACE_STRIDE_FROM_WIDTH
    m->surface_stride = ss ? ss : m->H * m->W * 32; /* the bug: the packed surface stride ignores a given line stride */
#else
    m->surface_stride = ss ? ss : m->H * m->line_stride;
#endif
    if (m->surface_stride % 32 || m->surface_stride < m->H * m->line_stride) {
      return snprintf(why, n, "bad surface stride"), LC_INVALID;
    }
    m->size = m->surfaces * m->surface_stride;
    if (m->batch) {
      uint64_t bs = param(c, "batch_stride");
      m->N = (uint64_t)c->shape[0];
      m->batch_stride = bs ? bs : m->size;
      if (m->batch_stride % 32 || m->batch_stride < m->size) return snprintf(why, n, "bad batch stride"), LC_INVALID;
      if (m->batch_stride > ((uint64_t)1 << 50) / m->N) return snprintf(why, n, "too large"), LC_INVALID;
      m->size = m->N * m->batch_stride;
    }
    return LC_OK;
  }
  if (c->rank != 4) return snprintf(why, n, "weights are (K,C,H,W)"), LC_INVALID;
  if (param(c, "addr") % 256) return snprintf(why, n, "start address not 256-byte aligned"), LC_INVALID;
#ifdef NVDLA_MUTANT_ACCEPT_POST_EXTENSION
  /* the bug: post_extension 2 (an image-input option) accepted on DC weights */
  if (param(c, "post_extension") > 2) return snprintf(why, n, "DC weights take no post-extension"), LC_INVALID;
#else
  if (param(c, "post_extension") > 1) return snprintf(why, n, "DC weights take no post-extension"), LC_INVALID;
#endif
  m->weights = 1;
  m->K = (uint64_t)c->shape[0], m->C = (uint64_t)c->shape[1], m->H = (uint64_t)c->shape[2], m->W = (uint64_t)c->shape[3];
#ifdef NVDLA_MUTANT_INT8_GROUP_16
  m->group = 16; /* the bug: 16 kernels per group for every precision (int8 takes 32) */
#else
  m->group = m->bytes == 1 ? 32 : 16;
#endif
  m->cube = 64;
#ifdef NVDLA_MUTANT_WEIGHT_ALIGN_32
  m->size = (m->K * m->C * m->H * m->W * m->bytes + 31) / 32 * 32; /* the bug: weights padded to the 32-byte atom, not 128 bytes */
#else
  m->size = (m->K * m->C * m->H * m->W * m->bytes + 127) / 128 * 128;
#endif
  return LC_OK;
}

static uint64_t offset_of(const nvdla* m, const int64_t* at) {
  if (!m->weights) {
    uint64_t b = m->batch ? (uint64_t)at[0] : 0;
    uint64_t c = (uint64_t)at[m->batch], h = (uint64_t)at[m->batch + 1], w = (uint64_t)at[m->batch + 2];
    return b * m->batch_stride + (c / m->atom_elements) * m->surface_stride + h * m->line_stride + w * 32 + (c % m->atom_elements) * m->bytes;
  } else {
    uint64_t k = (uint64_t)at[0], c = (uint64_t)at[1], h = (uint64_t)at[2], w = (uint64_t)at[3];
    uint64_t g = k / m->group, kk = k % m->group;
    uint64_t in_group = m->K - g * m->group < m->group ? m->K - g * m->group : m->group;
    uint64_t c0 = c / m->cube * m->cube;
    uint64_t width = m->C - c0 < m->cube ? m->C - c0 : m->cube;
#ifdef NVDLA_MUTANT_ZERO_FILL_LAST_CUBE
    width = m->cube; /* the bug: the last channel cube padded to 64 elements */
#endif
    uint64_t element = g * m->group * m->C * m->H * m->W + c0 * m->H * m->W * in_group +
                       ((h * m->W + w) * in_group + kk) * width + (c - c0);
    return element * m->bytes;
  }
}

static lc_status nv_supports(const lc_case* c, char* why, size_t n) {
  nvdla m;
  return plan(c, &m, why, n);
}

static lc_status nv_size(const lc_case* c, uint64_t* bytes) {
  nvdla m;
  char why[128];
  lc_status s = plan(c, &m, why, sizeof why);
  if (s == LC_OK) *bytes = m.size;
  return s;
}

static lc_status nv_offset(const lc_case* c, const int64_t* at, uint64_t* bits) {
  nvdla m;
  char why[128];
  lc_status s = plan(c, &m, why, sizeof why);
  if (s == LC_OK) *bits = offset_of(&m, at) * 8;
  return s;
}

static lc_status walk(const lc_case* c, uint8_t* logical, uint8_t* physical, size_t physical_size, int pack) {
  nvdla m;
  char why[128];
  int64_t at[4];
  uint64_t count = 1, i, off;
  uint32_t d;
  lc_status s = plan(c, &m, why, sizeof why);
  if (s != LC_OK) return s;
  if (physical_size != m.size) return LC_ERROR;
  if (pack) memset(physical, 0, physical_size);
  for (d = 0; d < c->rank; ++d) count *= (uint64_t)c->shape[d];
  for (i = 0; i < count; ++i) {
    uint64_t r = i;
    for (d = c->rank; d-- > 0;) at[d] = (int64_t)(r % (uint64_t)c->shape[d]), r /= (uint64_t)c->shape[d];
    off = offset_of(&m, at);
    if (off + m.bytes > physical_size) return LC_ERROR;
    if (pack) memcpy(physical + off, logical + i * m.bytes, m.bytes);
    else memcpy(logical + i * m.bytes, physical + off, m.bytes);
  }
  return LC_OK;
}

static lc_status nv_pack(const lc_case* c, const void* logical, size_t ls, void* physical, size_t ps) {
  (void)ls;
  return walk(c, (uint8_t*)logical, (uint8_t*)physical, ps, 1);
}

static lc_status nv_unpack(const lc_case* c, const void* physical, size_t ps, void* logical, size_t ls) {
  (void)ls;
  return walk(c, (uint8_t*)logical, (uint8_t*)physical, ps, 0);
}

static const lc_capability kCapabilities[] = {
    {"nvdla.feature", "int8 int16 fp16", 0},
    {"nvdla.feature.batch", "int8 int16 fp16", 0},
    {"nvdla.weight.dc", "int8 int16 fp16", 0},
};

#ifndef NVDLA_PLUGIN_NAME
#define NVDLA_PLUGIN_NAME "nvdla-c-example"
#endif

static const lc_plugin kPlugin = {LC_ABI_MAJOR, LC_ABI_MINOR, sizeof(lc_plugin), NVDLA_PLUGIN_NAME,
                                  kCapabilities, sizeof kCapabilities / sizeof kCapabilities[0],
                                  nv_supports, nv_size, nv_offset, nv_pack, nv_unpack};

LC_EXPORT const lc_plugin* layoutcheck_plugin_v1(void) { return &kPlugin; }

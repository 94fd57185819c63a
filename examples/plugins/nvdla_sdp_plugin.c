/* A layoutcheck plugin in plain C: NVDLA SDP data, nvdla.sdp.channel (per-channel
 * bias, PReLU, batch normalization: a (C, P) table) and nvdla.sdp.element
 * (per-element bias and element-wise data: a (C, H, W, P) cube).
 *
 * From nvdla-in-memory-data-formats.txt:
 * - "Element-Wise Data Format" (end): "BytesPerAtom = ElementPerAtom *
 *   ComponentsPerElement * BytesPerComponent"; ElementPerAtom is 32 for
 *   PROC_PRECISION int8 and 16 for int16/fp16; ComponentsPerElement is 1 for
 *   bias, PReLU and element-wise with ALU or MUL, 2 for batch normalization
 *   and element-wise with both (use=ew2); BytesPerComponent is the size of
 *   the case's dtype (ONE_BYTE / TWO_BYTE). "The pair data of each element are
 *   always packed together in memory."
 * - "PReLU Data Format" / "Batch Normalization Data Format": per-channel data
 *   "is stored in memory in a continuous 1x1xC space": channel c is in atom
 *   c / ElementPerAtom, atoms one after another, the whole padded to 32 bytes.
 * - "Bias Data Format" (per element, W x H x C) and element-wise data: mapped as
 *   feature data ("Feature Data Format"): atoms of channel block s, line h,
 *   column w at s * surface_stride + h * line_stride + w * BytesPerAtom.
 * - "Alignment of Start Address and Stride": start address, line stride and
 *   surface stride are multiples of 32 bytes.
 * Readings of layoutcheck followed here (oracles/ERRATA.md, NVDLA 2, 8-11): the
 * default (packed) line stride is W * BytesPerAtom rounded up to 32 and the
 * surface stride H * line stride; a given line stride must hold W atoms and a
 * surface stride H lines; proc=same means the component precision; fp16
 * components go with fp16 processing only, int8/int16 with int8/int16.
 *
 * Channels past C in the last atoms and every gap are free ("The attached data
 * can be any value except NaN when it's fp16"; "Atom cube mapping at line
 * boundary and/or surface boundary can be either adjacently or incompactly").
 * Built with -DNVDLA_SDP_LENIENT the plugin fills them with 0x55 (as fp16
 * 0x5555, not a NaN) instead of 0: lenient but correct, it must pass `check`
 * and fail `check --strict-padding`. Nothing is declined. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layoutcheck/c_api.h"

#ifdef NVDLA_SDP_LENIENT
#define FREE_BYTE 0x55
#define PLUGIN_NAME "nvdla-c-sdp-lenient"
#else
#define FREE_BYTE 0x00
#define PLUGIN_NAME "nvdla-c-sdp"
#endif

typedef struct {
  int per_element;
  uint64_t C, H, W, P, bytes;
  uint64_t epa, bpa, blocks;          /* elements per atom, bytes per atom, channel blocks */
  uint64_t line_stride, surface_stride, size;
} sdp;

static uint64_t param(const lc_case* c, const char* key) {
  const char* v = lc_param(c, key);
  return v ? strtoull(v, NULL, 10) : 0;
}

static lc_status plan(const lc_case* c, sdp* m, char* why, size_t n) {
  const char* use = lc_param(c, "use");
  const char* proc = lc_param(c, "proc");
  int fp16 = strcmp(c->dtype, "fp16") == 0, proc_fp16;
  uint64_t want_p;
  uint32_t d;
  memset(m, 0, sizeof *m);
  if (strcmp(c->layout_name, "nvdla.sdp.channel") == 0) m->per_element = 0;
  else if (strcmp(c->layout_name, "nvdla.sdp.element") == 0) m->per_element = 1;
  else return snprintf(why, n, "%s is not implemented by this plugin", c->layout_name), LC_UNSUPPORTED;
  if (!fp16 && strcmp(c->dtype, "int8") && strcmp(c->dtype, "int16")) {
    return snprintf(why, n, "components are int8, int16 or fp16"), LC_INVALID;
  }
  m->bytes = c->dtype_bits / 8;
  if (!use) return snprintf(why, n, "use is missing"), LC_INVALID;
  if (m->per_element ? (strcmp(use, "bias") && strcmp(use, "ew") && strcmp(use, "ew2"))
                     : (strcmp(use, "bias") && strcmp(use, "prelu") && strcmp(use, "bn"))) {
    return snprintf(why, n, "use=%s is not a use of %s", use, c->layout_name), LC_INVALID;
  }
  want_p = strcmp(use, "bn") == 0 || strcmp(use, "ew2") == 0 ? 2 : 1;
  /* PROC_PRECISION: "same" is the component's own precision. */
  if (!proc || strcmp(proc, "same") == 0) proc = c->dtype;
  proc_fp16 = strcmp(proc, "fp16") == 0;
  if (!proc_fp16 && strcmp(proc, "int8") && strcmp(proc, "int16")) return snprintf(why, n, "proc=%s", proc), LC_INVALID;
  if (fp16 != proc_fp16) return snprintf(why, n, "%s components with %s processing", c->dtype, proc), LC_INVALID;
  m->epa = strcmp(proc, "int8") == 0 ? 32 : 16;
  if (param(c, "addr") % 32) return snprintf(why, n, "start address not 32-byte aligned"), LC_INVALID;
  if (c->rank != (m->per_element ? 4u : 2u)) {
    return snprintf(why, n, m->per_element ? "a (C, H, W, P) cube" : "a (C, P) table"), LC_INVALID;
  }
  for (d = 0; d < c->rank; ++d) {
    if (c->shape[d] <= 0 || c->shape[d] > (1 << 24)) return snprintf(why, n, "extents must be in 1..2^24"), LC_INVALID;
  }
  m->C = (uint64_t)c->shape[0];
  m->P = (uint64_t)c->shape[c->rank - 1];
  if (m->P != want_p) return snprintf(why, n, "use=%s has %llu component(s) per element", use, (unsigned long long)want_p), LC_INVALID;
  m->bpa = m->epa * m->P * m->bytes;
  m->blocks = (m->C + m->epa - 1) / m->epa;
  if (!m->per_element) {
    m->H = m->W = 1;
    m->size = (m->blocks * m->bpa + 31) / 32 * 32;
    return LC_OK;
  }
  m->H = (uint64_t)c->shape[1], m->W = (uint64_t)c->shape[2];
  m->line_stride = param(c, "line_stride");
  if (m->line_stride == 0) m->line_stride = (m->W * m->bpa + 31) / 32 * 32;
  if (m->line_stride % 32 || m->line_stride < m->W * m->bpa) return snprintf(why, n, "bad line stride"), LC_INVALID;
  m->surface_stride = param(c, "surface_stride");
  if (m->surface_stride == 0) m->surface_stride = m->H * m->line_stride;
  if (m->surface_stride % 32 || m->surface_stride < m->H * m->line_stride) return snprintf(why, n, "bad surface stride"), LC_INVALID;
  if (m->surface_stride > ((uint64_t)1 << 40) / m->blocks) return snprintf(why, n, "too large"), LC_INVALID;
  m->size = m->blocks * m->surface_stride;
  return LC_OK;
}

/* Byte offset of component p of channel c at (h, w). */
static uint64_t offset_of(const sdp* m, uint64_t c, uint64_t h, uint64_t w, uint64_t p) {
  uint64_t atom = m->per_element ? (c / m->epa) * m->surface_stride + h * m->line_stride + w * m->bpa
                                 : (c / m->epa) * m->bpa;
  return atom + ((c % m->epa) * m->P + p) * m->bytes;
}

static void coords(const sdp* m, const int64_t* at, uint64_t* c, uint64_t* h, uint64_t* w, uint64_t* p) {
  *c = (uint64_t)at[0];
  if (m->per_element) *h = (uint64_t)at[1], *w = (uint64_t)at[2], *p = (uint64_t)at[3];
  else *h = 0, *w = 0, *p = (uint64_t)at[1];
}

static lc_status sdp_supports(const lc_case* c, char* why, size_t n) {
  sdp m;
  return plan(c, &m, why, n);
}

static lc_status sdp_size(const lc_case* c, uint64_t* bytes) {
  sdp m;
  char why[160];
  lc_status s = plan(c, &m, why, sizeof why);
  if (s == LC_OK) *bytes = m.size;
  return s;
}

static lc_status sdp_offset(const lc_case* c, const int64_t* at, uint64_t* bits) {
  sdp m;
  char why[160];
  uint64_t ch, h, w, p;
  lc_status s = plan(c, &m, why, sizeof why);
  if (s != LC_OK) return s;
  coords(&m, at, &ch, &h, &w, &p);
  *bits = offset_of(&m, ch, h, w, p) * 8;
  return LC_OK;
}

static lc_status walk(const lc_case* c, uint8_t* logical, uint8_t* physical, size_t physical_size, int pack) {
  sdp m;
  char why[160];
  int64_t at[4];
  uint64_t count = 1, i, ch, h, w, p;
  uint32_t d;
  lc_status s = plan(c, &m, why, sizeof why);
  if (s != LC_OK) return s;
  if (physical_size != m.size) return LC_ERROR;
  if (pack) memset(physical, FREE_BYTE, physical_size);
  for (d = 0; d < c->rank; ++d) count *= (uint64_t)c->shape[d];
  for (i = 0; i < count; ++i) {
    uint64_t r = i, off;
    for (d = c->rank; d-- > 0;) at[d] = (int64_t)(r % (uint64_t)c->shape[d]), r /= (uint64_t)c->shape[d];
    coords(&m, at, &ch, &h, &w, &p);
    off = offset_of(&m, ch, h, w, p);
    if (off + m.bytes > physical_size) return LC_ERROR;
    if (pack) memcpy(physical + off, logical + i * m.bytes, m.bytes);
    else memcpy(logical + i * m.bytes, physical + off, m.bytes);
  }
  return LC_OK;
}

static lc_status sdp_pack(const lc_case* c, const void* logical, size_t ls, void* physical, size_t ps) {
  (void)ls;
  return walk(c, (uint8_t*)logical, (uint8_t*)physical, ps, 1);
}

static lc_status sdp_unpack(const lc_case* c, const void* physical, size_t ps, void* logical, size_t ls) {
  (void)ls;
  return walk(c, (uint8_t*)logical, (uint8_t*)physical, ps, 0);
}

static const lc_capability kCapabilities[] = {
    {"nvdla.sdp.channel", "int8 int16 fp16", 0},
    {"nvdla.sdp.element", "int8 int16 fp16", 0},
};

static const lc_plugin kPlugin = {LC_ABI_MAJOR, LC_ABI_MINOR, sizeof(lc_plugin), PLUGIN_NAME,
                                  kCapabilities, sizeof kCapabilities / sizeof kCapabilities[0],
                                  sdp_supports, sdp_size, sdp_offset, sdp_pack, sdp_unpack};

LC_EXPORT const lc_plugin* layoutcheck_plugin_v1(void) { return &kPlugin; }

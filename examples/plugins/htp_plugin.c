/* A layoutcheck plugin in plain C: the Qualcomm HTP chunked layouts.
 *
 * ChunkedMemoryLayout<rank, pairs...>: the (d,0) pairs order the chunks
 * (first slowest); the sized pairs (d,s) shape a chunk, leftmost slowest,
 * and where one dimension has several, the rightmost is its finest digit.
 * Every dimension is padded to its chunk extent with the `pad` value (htp_pad.h). The
 * named layouts are the document's table. The mutants in mutants/ reuse this
 * file with one bug switched on (HTP_MUTANT_*). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layoutcheck/c_api.h"
#include "htp_pad.h"

#define MAX_RANK 8
#define MAX_PAIRS 32

typedef struct {
  uint32_t rank, npairs;
  uint32_t dim[MAX_PAIRS];
  uint64_t size[MAX_PAIRS];
  uint64_t extent[MAX_RANK], padded[MAX_RANK], grid[MAX_RANK], chunk_elements, bytes;
  uint8_t pad[8]; /* the padding element, little-endian */
} chunked;

static const struct { const char* name; const char* pairs; } kNamed[] = {
#ifdef HTP_MUTANT_NCHW_PROSE_ORDER
    {"htp.nchw", "0:0 3:0 1:0 2:0"}, /* the bug: htp.nchw read from the Flat Layout prose (N, C, H, W), not the table */
#else
    {"htp.nchw", "0:0 3:0 2:0 1:0"},
#endif
    {"htp.nchw_prose", "0:0 3:0 1:0 2:0"},
    {"htp.depth32", "0:0 1:0 3:0 2:0 2:4 3:32"},
    {"htp.crouton", "0:0 1:0 2:0 3:0 1:8 2:8 3:32"},
    {"htp.crouton4x1", "0:0 1:0 2:0 3:0 1:8 2:2 3:32 2:4"},
    {"htp.crouton2x2", "0:0 1:0 2:0 3:0 1:4 2:4 3:32 1:2 2:2"},
    {"htp.crouton2", "0:0 1:0 2:0 3:0 1:8 2:2 3:32 2:2"},
    /* The listings of "Details about Tensors", by their declared names. */
    {"htp.channel_major_crouton", "0:0 1:0 2:0 3:0 1:8 2:8 3:32"},
    {"htp.spatial_xy_major", "0:0 1:0 2:0 3:0 1:4 2:4 3:32 1:2 2:2"},
    {"htp.spatial_x_major", "0:0 1:0 2:0 3:0 1:4 2:2 3:32 2:4"},
#ifdef HTP_MUTANT_WEIGHTS_CHUNK_ORDER
    {"htp.weights", "2:0 3:0 0:0 1:0 2:8 3:32 2:4"}, /* the bug: in-chunks slowest instead of out-chunks */
#else
    {"htp.weights", "3:0 2:0 0:0 1:0 2:8 3:32 2:4"},
#endif
};

static lc_status parse_pairs(const char* text, chunked* k, char* why, size_t n) {
  const char* p = text;
  k->npairs = 0;
  while (*p) {
    char* end;
    unsigned long d, s;
    while (*p == ' ' || *p == ',') ++p;
    if (!*p) break;
    d = strtoul(p, &end, 10);
    if (*end != ':' || k->npairs == MAX_PAIRS) return snprintf(why, n, "cannot read pairs '%s'", text), LC_UNSUPPORTED;
    if (end[1] < '0' || end[1] > '9') return snprintf(why, n, "pair %lu: missing size in '%s'", d, text), LC_INVALID;
    s = strtoul(end + 1, &end, 10);
    if (d >= k->rank) return snprintf(why, n, "dimension %lu outside rank %u", d, k->rank), LC_INVALID;
    if (s == 0 && k->npairs > 0 && k->size[k->npairs - 1] != 0)
      return snprintf(why, n, "pair (%lu,0) follows a sized pair: chunk-order pairs come first", d), LC_INVALID;
    k->dim[k->npairs] = (uint32_t)d;
    k->size[k->npairs] = s;
    k->npairs++;
    p = end;
  }
  return LC_OK;
}

static lc_status plan(const lc_case* c, chunked* k, char* why, size_t n) {
  const char* pairs = NULL;
  uint32_t i, d;
  memset(k, 0, sizeof *k);
  if (strncmp(c->layout_name, "htp.", 4) != 0) return snprintf(why, n, "htp layouts only"), LC_UNSUPPORTED;
  if (c->dtype_bits % 8) return snprintf(why, n, "whole-byte elements only"), LC_INVALID;
  /* Elements are logical types (Flat Layout); int8x4, fp32x2 are storage words of another document. */
  if (strchr(c->dtype, 'x')) return snprintf(why, n, "%s is a packed storage type, not an element", c->dtype), LC_INVALID;
  k->rank = c->rank;
  if (k->rank == 0 || k->rank > MAX_RANK) return snprintf(why, n, "rank %u not handled", k->rank), LC_UNSUPPORTED;
  for (i = 0; i < sizeof kNamed / sizeof kNamed[0]; ++i) {
    if (strcmp(c->layout_name, kNamed[i].name) == 0) pairs = kNamed[i].pairs;
  }
  if (strcmp(c->layout_name, "htp.chunked") == 0) {
    const char* rank = lc_param(c, "rank");
    pairs = lc_param(c, "pairs");
    if (rank && strtoul(rank, NULL, 10) != k->rank) {
      return snprintf(why, n, "shape rank %u, layout rank %s", k->rank, rank), LC_INVALID;
    }
  } else if (pairs && k->rank != 4) {
    return snprintf(why, n, "shape rank %u, the layout has rank 4", k->rank), LC_INVALID;
  }
  if (!pairs) return snprintf(why, n, "%s is not implemented by this plugin", c->layout_name), LC_UNSUPPORTED;
  {
    lc_status st = parse_pairs(pairs, k, why, n);
    if (st != LC_OK) return st;
  }
  k->bytes = c->dtype_bits / 8;
  {
    lc_status st = htp_pad_element(c, k->pad, why, n);
    if (st != LC_OK) return st;
  }
#ifdef HTP_MUTANT_PAD_ZERO
  memset(k->pad, 0, sizeof k->pad); /* the bug: the padding value is ignored */
#endif
  k->chunk_elements = 1;
  for (d = 0; d < k->rank; ++d) k->extent[d] = 1;
  for (i = 0; i < k->npairs; ++i) {
    if (k->size[i]) k->extent[k->dim[i]] *= k->size[i], k->chunk_elements *= k->size[i];
  }
  for (d = 0; d < k->rank; ++d) {
    if (c->shape[d] <= 0) return snprintf(why, n, "extents must be positive"), LC_INVALID;
#ifdef HTP_MUTANT_GRID_FLOOR
    /* the bug: whole chunks only, a partial last chunk is not counted (one chunk when under one chunk) */
    k->grid[d] = (uint64_t)c->shape[d] / k->extent[d] + ((uint64_t)c->shape[d] < k->extent[d]);
#else
    k->grid[d] = ((uint64_t)c->shape[d] + k->extent[d] - 1) / k->extent[d];
#endif
    k->padded[d] = k->grid[d] * k->extent[d];
  }
  return LC_OK;
}

static uint64_t total_elements(const chunked* k) {
  uint64_t t = 1;
  uint32_t d;
  for (d = 0; d < k->rank; ++d) t *= k->padded[d];
  return t;
}

static uint64_t element_of(const chunked* k, const int64_t* at) {
  uint64_t chunk = 0, inner = 0, rest[MAX_RANK], digit[MAX_PAIRS];
  uint32_t i, d;
#ifdef HTP_MUTANT_REVERSED_CHUNK_ORDER
  for (i = k->npairs; i-- > 0;) { /* the bug: chunks walked in reverse order of the (d,0) pairs */
#else
  for (i = 0; i < k->npairs; ++i) {
#endif
#ifdef HTP_MUTANT_CHUNK_INDEX_WRAPS_8
    /* the bug: the chunk index along a dimension is kept in a 3-bit field: wrong only past the 8th chunk */
    if (k->size[i] == 0) chunk = chunk * k->grid[k->dim[i]] + ((uint64_t)at[k->dim[i]] / k->extent[k->dim[i]] & 7);
#else
    if (k->size[i] == 0) chunk = chunk * k->grid[k->dim[i]] + (uint64_t)at[k->dim[i]] / k->extent[k->dim[i]];
#endif
  }
  for (d = 0; d < k->rank; ++d) rest[d] = (uint64_t)at[d] % k->extent[d];
#ifdef HTP_MUTANT_FINEST_DIGIT_LEFTMOST
  for (i = 0; i < k->npairs; ++i) { /* the bug: the leftmost sized pair of a dimension taken as its finest digit */
#else
  for (i = k->npairs; i-- > 0;) {  /* the rightmost pair of a dimension is its finest digit */
#endif
    if (k->size[i] == 0) continue;
    digit[i] = rest[k->dim[i]] % k->size[i];
    rest[k->dim[i]] /= k->size[i];
  }
  for (i = 0; i < k->npairs; ++i) {
    if (k->size[i]) inner = inner * k->size[i] + digit[i];
  }
  return chunk * k->chunk_elements + inner;
}

static lc_status htp_supports(const lc_case* c, char* why, size_t n) {
  chunked k;
  return plan(c, &k, why, n);
}

static lc_status htp_size(const lc_case* c, uint64_t* bytes) {
  chunked k;
  char why[128];
  lc_status s = plan(c, &k, why, sizeof why);
  if (s == LC_OK) *bytes = total_elements(&k) * k.bytes;
  return s;
}

static lc_status htp_offset(const lc_case* c, const int64_t* at, uint64_t* bits) {
  chunked k;
  char why[128];
  lc_status s = plan(c, &k, why, sizeof why);
  if (s == LC_OK) *bits = element_of(&k, at) * k.bytes * 8;
  return s;
}

static lc_status walk(const lc_case* c, uint8_t* logical, uint8_t* physical, size_t physical_size, int pack) {
  chunked k;
  char why[128];
  int64_t at[MAX_RANK];
  uint64_t count = 1, i;
  uint32_t d;
  lc_status s = plan(c, &k, why, sizeof why);
  if (s != LC_OK) return s;
  if (physical_size != total_elements(&k) * k.bytes) return LC_ERROR;
  if (pack) htp_pad_fill(physical, physical_size, k.pad, k.bytes);
  for (d = 0; d < k.rank; ++d) count *= (uint64_t)c->shape[d];
  for (i = 0; i < count; ++i) {
    uint64_t r = i;
    uint8_t* p;
    for (d = k.rank; d-- > 0;) at[d] = (int64_t)(r % (uint64_t)c->shape[d]), r /= (uint64_t)c->shape[d];
    p = physical + element_of(&k, at) * k.bytes;
    if (pack) memcpy(p, logical + i * k.bytes, k.bytes);
    else memcpy(logical + i * k.bytes, p, k.bytes);
  }
  return LC_OK;
}

static lc_status htp_pack(const lc_case* c, const void* logical, size_t ls, void* physical, size_t ps) {
  (void)ls;
  return walk(c, (uint8_t*)logical, (uint8_t*)physical, ps, 1);
}

static lc_status htp_unpack(const lc_case* c, const void* physical, size_t ps, void* logical, size_t ls) {
  (void)ls;
  return walk(c, (uint8_t*)logical, (uint8_t*)physical, ps, 0);
}

static const lc_capability kCapabilities[] = {
    {"htp.crouton*", "*", 0}, {"htp.depth32", "*", 0}, {"htp.nchw*", "*", 0}, {"htp.weights", "*", 0},
    {"htp.channel_major_crouton", "*", 0}, {"htp.spatial_*", "*", 0},
};

#ifndef HTP_PLUGIN_NAME
#define HTP_PLUGIN_NAME "htp-c-example"
#endif

static const lc_plugin kPlugin = {LC_ABI_MAJOR, LC_ABI_MINOR, sizeof(lc_plugin), HTP_PLUGIN_NAME,
                                  kCapabilities, sizeof kCapabilities / sizeof kCapabilities[0],
                                  htp_supports, htp_size, htp_offset, htp_pack, htp_unpack};

LC_EXPORT const lc_plugin* layoutcheck_plugin_v1(void) { return &kPlugin; }

/* A layoutcheck plugin in plain C: Qualcomm HTP's general notations,
 * htp.chunked (ChunkedMemoryLayout<rank, pairs...>), htp.flat
 * (FlatMemoryLayout<rank>), for any rank the notation allows, and
 * htp.chunk_table (the same chunks, each at its own start).
 *
 * From qualcomm-htp-memory-layout.txt:
 * - "Flat Layout": FlatMemoryLayout<rank> "can be thought of as
 *   ChunkedMemoryLayout<4, 0,0, 1,0, 2,0, 3,0>": dimension rank-1 fastest, no
 *   padding ("the FlatMemoryLayout is just the special case of
 *   ChunkedMemoryLayout where the Chunk Size is the minimal one").
 * - "Crouton Layout": the pairs are read right-to-left. A sized pair (d,s)
 *   means s contiguous chunks "of everything to the right" in dimension d, so
 *   the sized pairs shape one chunk, the leftmost slowest, and a dimension
 *   named by several sized pairs is split with its rightmost pair as the
 *   finest digit. The (d,0) pairs ("all the rest of dimension d") order the
 *   chunks, the leftmost slowest. Each dimension is padded up to its chunk
 *   extent ("If the dimensions is less than 8 or 32, it is padded").
 * - "Practical tips": "user padding need to be explicitly set to quantized 0
 *   (or other specified value)": padding elements hold the `pad` value
 *   (htp_pad.h).
 *
 * The case's parameters are read as the host gives them: rank=R and
 * pairs="d:s d:s ..." (the notation's pairs in order), pad=value. Nothing is
 * declined; a notation that does not order every dimension exactly once is
 * answered LC_INVALID. The bytes between placed chunks, which no chunk has,
 * are written with the pad value; built with -DHTP_CHUNKED_LENIENT, 0x55 (the
 * document says nothing of them: a lenient but correct implementation, which
 * must pass `check` and fail `check --strict-padding`). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layoutcheck/c_api.h"
#include "htp_pad.h"

#define HTP_MAX_RANK 64
#define HTP_MAX_PAIRS 256
#define HTP_MAX_TABLE 4096
#define HTP_MAX_BYTES ((uint64_t)1 << 60)

typedef struct {
  uint32_t rank, npairs;
  uint32_t pair_dim[HTP_MAX_PAIRS];
  uint64_t pair_size[HTP_MAX_PAIRS];
  uint32_t order[HTP_MAX_RANK];      /* chunk order, slowest first */
  uint64_t chunk[HTP_MAX_RANK];      /* chunk extent per dimension */
  uint64_t grid[HTP_MAX_RANK];       /* chunks per dimension */
  uint64_t chunk_elements, total_elements, bytes;
  uint8_t pad[8]; /* the padding element, little-endian */
  /* htp.chunk_table: chunk k starts at base[k], or at k * stride. */
  int placed, table;
  uint64_t stride, chunk_bytes, size;
  uint64_t base[HTP_MAX_TABLE];
} notation;

static int compare_u64(const void* a, const void* b) {
  const uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
  return x < y ? -1 : x > y;
}

/* "chunks are not consecutive in memory (i.e. there's gap in memory between
 * each chunk)"; "usually use get_raw(first element's idx in chunk) to retrieve
 * the start memory location for such chunk" (Practical tips working with
 * Crouton). A start points at an element; chunks do not share bytes. */
static lc_status place_chunks(const lc_case* c, notation* m, char* why, size_t n) {
  const char* stride_text = lc_param(c, "chunk_stride");
  const char* bases = lc_param(c, "bases");
  const uint64_t chunks = m->total_elements / m->chunk_elements;
  uint64_t sorted[HTP_MAX_TABLE], i, count = 0;
  m->stride = stride_text ? strtoull(stride_text, NULL, 10) : 0;
  m->table = bases && strcmp(bases, "none") != 0;
  if (m->stride && m->table) return snprintf(why, n, "a chunk stride and a table of bases"), LC_INVALID;
  if (m->table) {
    const char* p = bases;
    while (*p) {
      char* end;
      if (*p == ' ') {
        ++p;
        continue;
      }
      if (count == HTP_MAX_TABLE) return snprintf(why, n, "more than %d bases", HTP_MAX_TABLE), LC_INVALID;
      if (*p < '0' || *p > '9') return snprintf(why, n, "bases: expected a number at '%s'", p), LC_INVALID;
      m->base[count] = strtoull(p, &end, 10);
      p = end;
      if (m->base[count] % m->bytes) return snprintf(why, n, "chunk %llu starts between elements", (unsigned long long)count), LC_INVALID;
      if (m->base[count] > HTP_MAX_BYTES - m->chunk_bytes) return snprintf(why, n, "a chunk ends past 2^60"), LC_INVALID;
      sorted[count] = m->base[count];
      ++count;
    }
    if (count != chunks) return snprintf(why, n, "%llu bases for %llu chunks", (unsigned long long)count, (unsigned long long)chunks), LC_INVALID;
    qsort(sorted, count, sizeof sorted[0], compare_u64);
    for (i = 1; i < count; ++i) {
      if (sorted[i] - sorted[i - 1] < m->chunk_bytes) return snprintf(why, n, "two chunks overlap"), LC_INVALID;
    }
    m->placed = 1;
    m->size = sorted[count - 1] + m->chunk_bytes;
  } else if (m->stride) {
    if (m->stride < m->chunk_bytes) return snprintf(why, n, "chunk stride shorter than a chunk"), LC_INVALID;
    if (m->stride % m->bytes) return snprintf(why, n, "chunk stride between elements"), LC_INVALID;
    if (chunks - 1 > (HTP_MAX_BYTES - m->chunk_bytes) / m->stride) return snprintf(why, n, "chunks end past 2^60"), LC_INVALID;
    m->placed = 1;
    m->size = (chunks - 1) * m->stride + m->chunk_bytes;
  }
  return LC_OK;
}

/* The byte of the element-th element of memory in chunk order. */
static uint64_t byte_of(const notation* m, uint64_t element) {
  uint64_t k;
  if (!m->placed) return element * m->bytes;
  k = element / m->chunk_elements;
  return (m->table ? m->base[k] : k * m->stride) + element % m->chunk_elements * m->bytes;
}

static lc_status plan(const lc_case* c, notation* m, char* why, size_t n) {
  const char* rank_text = lc_param(c, "rank");
  unsigned long rank;
  uint32_t i, d, ordered = 0;
  int seen[HTP_MAX_RANK] = {0};
  memset(m, 0, sizeof *m);
  if (strcmp(c->layout_name, "htp.chunked") && strcmp(c->layout_name, "htp.flat") &&
      strcmp(c->layout_name, "htp.chunk_table")) {
    return snprintf(why, n, "%s is not implemented by this plugin", c->layout_name), LC_UNSUPPORTED;
  }
  if (c->dtype_bits == 0 || c->dtype_bits % 8) return snprintf(why, n, "whole-byte elements only"), LC_INVALID;
  /* Elements are logical types (Flat Layout); int8x4, fp32x2 are storage words of another document. */
  if (strchr(c->dtype, 'x')) return snprintf(why, n, "%s is a packed storage type, not an element", c->dtype), LC_INVALID;
  rank = rank_text ? strtoul(rank_text, NULL, 10) : c->rank;
  if (rank < 1 || rank > HTP_MAX_RANK) return snprintf(why, n, "rank %lu outside 1..%d", rank, HTP_MAX_RANK), LC_INVALID;
  if (rank != c->rank) return snprintf(why, n, "rank %lu but a shape of %u extents", rank, c->rank), LC_INVALID;
  m->rank = (uint32_t)rank;
  m->bytes = c->dtype_bits / 8;
  {
    lc_status st = htp_pad_element(c, m->pad, why, n);
    if (st != LC_OK) return st;
  }
  if (strcmp(c->layout_name, "htp.flat") == 0) {
    /* "dimension 3 is the fastest moving dimension, dimension 2 is 2nd fastest, then 1, then 0" */
    for (d = 0; d < m->rank; ++d) m->pair_dim[d] = d, m->pair_size[d] = 0;
    m->npairs = m->rank;
  } else {
    const char* p = lc_param(c, "pairs");
    if (!p) return snprintf(why, n, "htp.chunked without pairs"), LC_INVALID;
    while (*p) {
      char* end;
      unsigned long dim, size;
      if (*p == ' ' || *p == ',') {
        ++p;
        continue;
      }
      dim = strtoul(p, &end, 10);
      if (end == p || *end != ':') return snprintf(why, n, "pairs: expected dim:size at '%s'", p), LC_INVALID;
      p = end + 1;
      size = strtoul(p, &end, 10);
      if (end == p) return snprintf(why, n, "pairs: expected a size at '%s'", p), LC_INVALID;
      p = end;
      if (dim >= m->rank) return snprintf(why, n, "pair (%lu,%lu): dimension outside rank %u", dim, size, m->rank), LC_INVALID;
      if (m->npairs == HTP_MAX_PAIRS) return snprintf(why, n, "more than %d pairs", HTP_MAX_PAIRS), LC_INVALID;
      m->pair_dim[m->npairs] = (uint32_t)dim;
      m->pair_size[m->npairs] = size;
      m->npairs++;
    }
  }
  for (d = 0; d < m->rank; ++d) m->chunk[d] = 1;
  m->chunk_elements = 1;
  for (i = 0; i < m->npairs; ++i) {
    uint32_t dim = m->pair_dim[i];
    if (m->pair_size[i] == 0) {
      if (seen[dim]) return snprintf(why, n, "dimension %u ordered twice", dim), LC_INVALID;
      seen[dim] = 1;
      m->order[ordered++] = dim;
    } else {
      if (m->pair_size[i] > (1u << 20) || m->chunk_elements > ((uint64_t)1 << 40) / m->pair_size[i]) {
        return snprintf(why, n, "chunk too large"), LC_INVALID;
      }
      m->chunk[dim] *= m->pair_size[i];
      m->chunk_elements *= m->pair_size[i];
    }
  }
  if (ordered != m->rank) return snprintf(why, n, "every dimension must be ordered by a (d,0) pair"), LC_INVALID;
  m->total_elements = m->chunk_elements;
  for (d = 0; d < m->rank; ++d) {
    uint64_t e = (uint64_t)c->shape[d];
    if (c->shape[d] <= 0 || e > ((uint64_t)1 << 32)) return snprintf(why, n, "extent %u out of range", d), LC_INVALID;
    m->grid[d] = (e + m->chunk[d] - 1) / m->chunk[d];
    if (m->total_elements > ((uint64_t)1 << 40) / m->grid[d]) return snprintf(why, n, "tensor too large"), LC_INVALID;
    m->total_elements *= m->grid[d];
  }
  if (m->total_elements > ((uint64_t)1 << 40) / m->bytes) return snprintf(why, n, "tensor too large"), LC_INVALID;
  m->chunk_bytes = m->chunk_elements * m->bytes;
  m->size = m->total_elements * m->bytes;
  if (strcmp(c->layout_name, "htp.chunk_table") == 0) return place_chunks(c, m, why, n);
  return LC_OK;
}

/* The element index in memory of a (padded) coordinate. */
static uint64_t element_of(const notation* m, const uint64_t* at) {
  uint64_t chunk_index = 0, inner = 0;
  uint64_t rest[HTP_MAX_RANK];
  uint32_t i, d;
  /* Chunk order: the (d,0) pairs, leftmost slowest. */
  for (i = 0; i < m->rank; ++i) {
    d = m->order[i];
    chunk_index = chunk_index * m->grid[d] + at[d] / m->chunk[d];
  }
  /* Inside a chunk: read right to left, the rightmost pair of a dimension is
   * its finest digit. */
  for (d = 0; d < m->rank; ++d) rest[d] = at[d] % m->chunk[d];
  {
    uint64_t weight = 1;
    for (i = m->npairs; i-- > 0;) {
      uint64_t s = m->pair_size[i];
      if (s == 0) continue;
      d = m->pair_dim[i];
      inner += (rest[d] % s) * weight;
      rest[d] /= s;
      weight *= s;
    }
  }
  return chunk_index * m->chunk_elements + inner;
}

static lc_status htp_supports(const lc_case* c, char* why, size_t n) {
  notation m;
  return plan(c, &m, why, n);
}

static lc_status htp_size(const lc_case* c, uint64_t* bytes) {
  notation m;
  char why[160];
  lc_status s = plan(c, &m, why, sizeof why);
  if (s == LC_OK) *bytes = m.size;
  return s;
}

static lc_status htp_offset(const lc_case* c, const int64_t* at, uint64_t* bits) {
  notation m;
  char why[160];
  uint64_t u[HTP_MAX_RANK];
  uint32_t d;
  lc_status s = plan(c, &m, why, sizeof why);
  if (s != LC_OK) return s;
  for (d = 0; d < m.rank; ++d) u[d] = (uint64_t)at[d];
  *bits = byte_of(&m, element_of(&m, u)) * 8;
  return LC_OK;
}

static lc_status walk(const lc_case* c, uint8_t* logical, uint8_t* physical, size_t physical_size, int pack) {
  notation m;
  char why[160];
  uint64_t at[HTP_MAX_RANK];
  uint64_t count = 1, i;
  uint32_t d;
  lc_status s = plan(c, &m, why, sizeof why);
  if (s != LC_OK) return s;
  if (physical_size != m.size) return LC_ERROR;
  /* Every byte that is not an element's is padding: the pad value. */
  if (pack) htp_pad_fill(physical, physical_size, m.pad, m.bytes);
#ifdef HTP_CHUNKED_LENIENT
  if (pack && m.placed) {
    /* Between placed chunks 0x55, in each chunk its padding elements. */
    const uint64_t chunks = m.total_elements / m.chunk_elements;
    uint64_t k;
    memset(physical, 0x55, physical_size);
    for (k = 0; k < chunks; ++k) htp_pad_fill(physical + byte_of(&m, k * m.chunk_elements), m.chunk_bytes, m.pad, m.bytes);
  }
#endif
  for (d = 0; d < m.rank; ++d) count *= (uint64_t)c->shape[d];
  for (i = 0; i < count; ++i) {
    uint64_t r = i, off;
    for (d = m.rank; d-- > 0;) at[d] = r % (uint64_t)c->shape[d], r /= (uint64_t)c->shape[d];
    off = byte_of(&m, element_of(&m, at));
    if (off + m.bytes > physical_size) return LC_ERROR;
    if (pack) memcpy(physical + off, logical + i * m.bytes, m.bytes);
    else memcpy(logical + i * m.bytes, physical + off, m.bytes);
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
    {"htp.chunked", "*", 0},
    {"htp.flat", "*", 0},
    {"htp.chunk_table", "*", 0},
};

#ifdef HTP_CHUNKED_LENIENT
#define PLUGIN_NAME "htp-c-chunked-lenient"
#else
#define PLUGIN_NAME "htp-c-chunked"
#endif
static const lc_plugin kPlugin = {LC_ABI_MAJOR, LC_ABI_MINOR, sizeof(lc_plugin), PLUGIN_NAME,
                                  kCapabilities, sizeof kCapabilities / sizeof kCapabilities[0],
                                  htp_supports, htp_size, htp_offset, htp_pack, htp_unpack};

LC_EXPORT const lc_plugin* layoutcheck_plugin_v1(void) { return &kPlugin; }

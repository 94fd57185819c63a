/* A layoutcheck plugin in plain C: CATLASS TLA layouts written in the
 * document's notation, tla.layout (shape=..., stride=...) and tla.tile
 * (MakeLayoutTile: shape=..., stride=..., tile=(rows,cols)).
 *
 * From catlass-tla-layouts.txt:
 * - "Layout": a Layout is a Shape and a Stride, two congruent IntTuples;
 *   `_N` is a static integer and maps like N ("Layout 构造").
 * - "Layout 坐标与索引": crd2offset takes one coordinate per mode; a nested
 *   mode splits its coordinate over its extents first-fastest, as in the
 *   example: (1,5) in ((4,2),(4,3)):((4,16),(1,32)) is 1*4 + (5%4)*1 + (5/4)*32 = 37.
 * - "获取 Tilelayout": MakeLayoutTile changes the shape, keeps the strides;
 *   ((4,2),(4,3)) under (4,4) becomes ((4,1),(4,1)).
 * Readings of layoutcheck (oracles/ERRATA.md, CATLASS TLA 4, 6-10): a layout
 * has any number of top-level modes (an integer shape is one) and its logical
 * tensor one dimension per mode, of the mode's size, row-major; a tile's
 * layout has two and its logical tensor is the tile (the origin shape) or the
 * whole tiled layout, the rest being padding of 0; the physical buffer is
 * cosize (largest offset + 1) elements; a layout must be injective; under a
 * tile an integer mode takes the tile extent and a nested mode keeps its
 * extents but the last, which becomes ceil(tile / product of the others);
 * at most 8 levels, 64 integers, each at most 2^48.
 *
 * Nested coordinates ("((1,0),(1,1))") come through offset_bits_tuple (ABI 1.2).
 *
 * Offsets no coordinate maps to hold nothing of the tensor and are free
 * ("Layout提供了多维坐标与内存的映射关系"). Built with -DTLA_LAYOUT_LENIENT the
 * plugin fills them with 0x55 instead of 0: lenient but correct, it must pass
 * `check` and fail `check --strict-padding`. Nothing is declined: int4/uint4
 * have no sizeof(ElemType) and are answered LC_INVALID, as the reading says. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layoutcheck/c_api.h"

#ifdef TLA_LAYOUT_LENIENT
#define FREE_BYTE 0x55
#define PLUGIN_NAME "tla-c-layout-lenient"
#else
#define FREE_BYTE 0x00
#define PLUGIN_NAME "tla-c-layout"
#endif

#define TLA_MAX_LEAVES 64
#define TLA_MAX_DEPTH 8
#define TLA_MAX_VALUE ((uint64_t)1 << 48)

/* An IntTuple flattened: its integers in order, and for each the top-level
 * mode it belongs to (-1 when the whole tuple is one integer). */
typedef struct {
  uint32_t count;
  uint64_t value[TLA_MAX_LEAVES];
  int mode[TLA_MAX_LEAVES];
  int modes;        /* top-level elements */
  char shape[512];  /* the nesting, integers replaced by '#', to compare congruence */
} int_tuple;

typedef struct {
  uint32_t count;
  uint64_t extent[TLA_MAX_LEAVES], stride[TLA_MAX_LEAVES];
  int mode[TLA_MAX_LEAVES];
  int modes;                                           /* top-level modes */
  uint64_t size[TLA_MAX_LEAVES], cosize, bytes;        /* size of each mode */
  uint64_t logical[TLA_MAX_LEAVES];                    /* the logical tensor */
  uint64_t total, elements;                            /* prod(size), prod(logical) */
} layout;

typedef struct {
  const char* p;
  int_tuple* t;
  int depth, top;
  size_t shape_len;
  const char* error;
} parser;

static void put(parser* ps, char ch) {
  if (ps->shape_len + 1 < sizeof ps->t->shape) ps->t->shape[ps->shape_len++] = ch, ps->t->shape[ps->shape_len] = 0;
}

static void skip(parser* ps) {
  while (*ps->p == ' ') ++ps->p;
}

static int parse_item(parser* ps, int mode) {
  skip(ps);
  if (*ps->p == '(') {
    int index = 0;
    if (++ps->depth > TLA_MAX_DEPTH) return ps->error = "nested more than 8 levels", 0;
    ++ps->p;
    put(ps, '(');
    for (;;) {
      if (!parse_item(ps, ps->depth == 1 ? index : mode)) return 0;
      ++index;
      skip(ps);
      if (*ps->p == ',') {
        ++ps->p;
        put(ps, ',');
        continue;
      }
      if (*ps->p == ')') break;
      return ps->error = "expected ',' or ')'", 0;
    }
    ++ps->p;
    put(ps, ')');
    if (ps->depth == 1) ps->top = index;
    --ps->depth;
    return 1;
  } else {
    uint64_t v = 0;
    int digits = 0;
    if (*ps->p == '_') ++ps->p;  /* Int<N>{}: a static integer, same value */
    while (*ps->p >= '0' && *ps->p <= '9') {
      v = v * 10 + (uint64_t)(*ps->p++ - '0');
      if (v > TLA_MAX_VALUE) return ps->error = "an integer above 2^48", 0;
      ++digits;
    }
    if (!digits) return ps->error = "expected an integer", 0;
    if (ps->t->count == TLA_MAX_LEAVES) return ps->error = "more than 64 integers", 0;
    ps->t->value[ps->t->count] = v;
    ps->t->mode[ps->t->count] = mode;
    ps->t->count++;
    put(ps, '#');
    return 1;
  }
}

static const char* parse_tuple(const char* text, int_tuple* t) {
  parser ps;
  memset(t, 0, sizeof *t);
  memset(&ps, 0, sizeof ps);
  ps.p = text, ps.t = t;
  if (!text) return "missing";
  if (!parse_item(&ps, -1)) return ps.error;
  skip(&ps);
  if (*ps.p) return "unexpected text after the tuple";
  t->modes = ps.top;
  if (t->modes == 0) t->modes = 1, t->mode[0] = 0;  /* an integer shape: one mode */
  return NULL;
}

static int compare_u64(const void* a, const void* b) {
  uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
  return x < y ? -1 : x > y;
}

/* Offset (in elements) of a coordinate (one integer per mode): each mode's
 * coordinate is split over its extents, first extent fastest. */
static uint64_t offset_of(const layout* l, const uint64_t* at) {
  uint64_t rest[TLA_MAX_LEAVES], off = 0;
  uint32_t i;
  for (i = 0; i < (uint32_t)l->modes; ++i) rest[i] = at[i];
  for (i = 0; i < l->count; ++i) {
    int m = l->mode[i];
    off += (rest[m] % l->extent[i]) * l->stride[i];
    rest[m] /= l->extent[i];
  }
  return off;
}

static lc_status plan(const lc_case* c, layout* l, char* why, size_t n, int check_injective) {
  int_tuple shape, stride;
  const char* e;
  uint32_t i;
  int tile = 0;
  uint64_t tile_extent[2] = {0, 0};
  memset(l, 0, sizeof *l);
  if (strcmp(c->layout_name, "tla.layout") == 0) tile = 0;
  else if (strcmp(c->layout_name, "tla.tile") == 0) tile = 1;
  else return snprintf(why, n, "%s is not implemented by this plugin", c->layout_name), LC_UNSUPPORTED;
  if (c->dtype_bits == 0 || c->dtype_bits % 8) return snprintf(why, n, "%s has no sizeof(ElemType)", c->dtype), LC_INVALID;
  /* int8x4, fp32x2, ...: packed storage types, not an ElemType of a layout. */
  if (strchr(c->dtype, 'x')) return snprintf(why, n, "%s is a packed storage type", c->dtype), LC_INVALID;
  l->bytes = c->dtype_bits / 8;
  if ((e = parse_tuple(lc_param(c, "shape"), &shape))) return snprintf(why, n, "shape: %s", e), LC_INVALID;
  if ((e = parse_tuple(lc_param(c, "stride"), &stride))) return snprintf(why, n, "stride: %s", e), LC_INVALID;
  if (strcmp(shape.shape, stride.shape)) return snprintf(why, n, "shape and stride are not congruent"), LC_INVALID;
  if (tile && shape.modes != 2) return snprintf(why, n, "a tile (rows,cols) needs a layout of two modes"), LC_INVALID;
  l->modes = shape.modes;
  l->count = shape.count;
  for (i = 0; i < l->count; ++i) {
    if (shape.value[i] == 0) return snprintf(why, n, "shape extents must be positive"), LC_INVALID;
    l->extent[i] = shape.value[i], l->stride[i] = stride.value[i], l->mode[i] = shape.mode[i];
  }
  if (tile) {
    int_tuple t;
    int m;
    if ((e = parse_tuple(lc_param(c, "tile"), &t))) return snprintf(why, n, "tile: %s", e), LC_INVALID;
    if (t.modes != 2 || t.count != 2 || strcmp(t.shape, "(#,#)")) return snprintf(why, n, "tile is (rows,cols)"), LC_INVALID;
    for (m = 0; m < 2; ++m) {
      uint64_t want = t.value[m], others = 1;
      int last = -1;
      if (want == 0) return snprintf(why, n, "tile extents must be positive"), LC_INVALID;
      tile_extent[m] = want;
      for (i = 0; i < l->count; ++i) {
        if (l->mode[i] == m) last = (int)i;
      }
      for (i = 0; i < l->count; ++i) {
        if (l->mode[i] == m && (int)i != last) others *= l->extent[i];
      }
      /* "MakeLayoutTile接口改变了原本layout的shape,不改变stride" */
      l->extent[last] = (want + others - 1) / others;
    }
  }
  /* Logical size per mode, cosize = largest offset + 1, both overflow-checked. */
  for (i = 0; i < (uint32_t)l->modes; ++i) l->size[i] = 1;
  l->cosize = 1;
  for (i = 0; i < l->count; ++i) {
    uint64_t x = l->extent[i] - 1;
    int m = l->mode[i];
    if (l->size[m] > ((uint64_t)1 << 62) / l->extent[i]) return snprintf(why, n, "the layout is too large"), LC_INVALID;
    l->size[m] *= l->extent[i];
    if (x && l->stride[i] > (((uint64_t)1 << 62) - l->cosize) / x) return snprintf(why, n, "cosize too large"), LC_INVALID;
    l->cosize += x * l->stride[i];
  }
  l->total = 1;
  for (i = 0; i < (uint32_t)l->modes; ++i) {
    if (l->total > ((uint64_t)1 << 62) / l->size[i]) return snprintf(why, n, "the layout is too large"), LC_INVALID;
    l->total *= l->size[i];
  }
  if (l->cosize > ((uint64_t)1 << 60) / l->bytes) return snprintf(why, n, "the layout is too large"), LC_INVALID;
  /* The logical tensor: the size of each mode, or under a tile the tile itself. */
  if (c->rank != (uint32_t)l->modes) {
    return snprintf(why, n, "the shape needs %d dimensions, one per mode", l->modes), LC_INVALID;
  }
  {
    int whole = 1, origin = tile;
    for (i = 0; i < c->rank; ++i) {
      if (c->shape[i] <= 0) return snprintf(why, n, "extents must be positive"), LC_INVALID;
      if ((uint64_t)c->shape[i] != l->size[i]) whole = 0;
      if (tile && (uint64_t)c->shape[i] != tile_extent[i]) origin = 0;
      l->logical[i] = (uint64_t)c->shape[i];
    }
    if (!whole && !origin) return snprintf(why, n, "the shape is not the layout's tensor nor the tile"), LC_INVALID;
  }
  l->elements = 1;
  for (i = 0; i < c->rank; ++i) l->elements *= l->logical[i];
  if (check_injective) {
    uint64_t total = l->total;
    if (total <= ((uint64_t)1 << 20)) {
      /* Coordinate by coordinate: no two may share an offset. */
      uint64_t* all = (uint64_t*)malloc(total * sizeof *all), k;
      if (!all) return snprintf(why, n, "out of memory"), LC_ERROR;
      for (k = 0; k < total; ++k) {
        uint64_t at[TLA_MAX_LEAVES], rest = k;
        int d;
        for (d = l->modes - 1; d >= 0; --d) at[d] = rest % l->size[d], rest /= l->size[d];
        all[k] = offset_of(l, at);
      }
      qsort(all, total, sizeof *all, compare_u64);
      for (k = 1; k < total; ++k) {
        if (all[k] == all[k - 1]) {
          uint64_t shared = all[k];
          free(all);
          return snprintf(why, n, "not injective: two coordinates share offset %llu", (unsigned long long)shared),
                 LC_INVALID;
        }
      }
      free(all);
    } else {
      /* Larger: the strides must not interleave (sorted by stride, each
       * reaches past the span of the smaller ones). */
      uint64_t s[TLA_MAX_LEAVES], x[TLA_MAX_LEAVES], span = 0;
      uint32_t k = 0, a, b;
      for (i = 0; i < l->count; ++i) {
        if (l->extent[i] > 1) s[k] = l->stride[i], x[k++] = l->extent[i];
      }
      for (a = 1; a < k; ++a) {
        for (b = a; b > 0 && s[b] < s[b - 1]; --b) {
          uint64_t t = s[b];
          s[b] = s[b - 1], s[b - 1] = t, t = x[b], x[b] = x[b - 1], x[b - 1] = t;
        }
      }
      for (a = 0; a < k; ++a) {
        if (s[a] <= span) return snprintf(why, n, "not established injective"), LC_INVALID;
        span += (x[a] - 1) * s[a];
      }
    }
  }
  return LC_OK;
}

static lc_status tla_supports(const lc_case* c, char* why, size_t n) {
  layout l;
  return plan(c, &l, why, n, 1);
}

static lc_status tla_size(const lc_case* c, uint64_t* bytes) {
  layout l;
  char why[160];
  lc_status s = plan(c, &l, why, sizeof why, 1);
  if (s == LC_OK) *bytes = l.cosize * l.bytes;
  return s;
}

static lc_status tla_offset(const lc_case* c, const int64_t* at, uint64_t* bits) {
  layout l;
  char why[160];
  lc_status s = plan(c, &l, why, sizeof why, 0);
  uint64_t u[TLA_MAX_LEAVES];
  int d;
  if (s != LC_OK) return s;
  for (d = 0; d < l.modes; ++d) {
    if (at[d] < 0 || (uint64_t)at[d] >= l.logical[d]) return LC_INVALID;
    u[d] = (uint64_t)at[d];
  }
  *bits = offset_of(&l, u) * l.bytes * 8;
  return s;
}

/* ABI 1.2: a nested coordinate, "((1,0),(1,1))". Walks the coordinate text
 * and the shape text together: an integer against a mode counts within the
 * whole mode; a tuple against a tuple of the same rank counts its parts first
 * fastest, each in units of the sizes before it. The extents are the plan's
 * (a tile changes the values, not the nesting). */
typedef struct {
  const char* c;      /* coordinate text */
  const char* s;      /* shape text */
  const layout* l;
  uint32_t leaf;      /* next integer of the shape */
  int bad;
} walker;

static void skip_spaces(const char** p) {
  while (**p == ' ') ++*p;
}

/* Skips one element of the shape text, returning the product of its extents. */
static uint64_t skip_shape(walker* w) {
  uint64_t size = 1;
  skip_spaces(&w->s);
  if (*w->s == '(') {
    ++w->s;
    for (;;) {
      size *= skip_shape(w);
      skip_spaces(&w->s);
      if (*w->s == ',') { ++w->s; continue; }
      if (*w->s == ')') { ++w->s; break; }
      w->bad = 1;
      return 1;
    }
    return size;
  }
  if (*w->s == '_') ++w->s;
  while (*w->s >= '0' && *w->s <= '9') ++w->s;
  if (w->leaf >= w->l->count) return w->bad = 1, 1;
  return w->l->extent[w->leaf++];
}

static uint64_t read_int(const char** p, int* bad) {
  uint64_t v = 0;
  int digits = 0;
  while (**p >= '0' && **p <= '9' && digits < 19) v = v * 10 + (uint64_t)(*(*p)++ - '0'), ++digits;
  if (!digits) *bad = 1;
  return v;
}

/* The index of the coordinate element at w->c in the shape element at w->s. */
static uint64_t index_in(walker* w, uint64_t* size) {
  skip_spaces(&w->c);
  skip_spaces(&w->s);
  if (*w->c != '(') {
    uint64_t v = read_int(&w->c, &w->bad);
    *size = skip_shape(w);
    if (v >= *size) w->bad = 1;
    return v;
  }
  if (*w->s != '(') return w->bad = 1, 0;
  ++w->c, ++w->s;
  {
    uint64_t index = 0, below = 1;
    for (;;) {
      uint64_t part_size = 1, part = index_in(w, &part_size);
      if (w->bad) return 0;
#ifdef TLA_LAYOUT_MUTANT_NESTED_UNWEIGHTED
      /* The bug: a sub-coordinate counts 1, not the size of the sub-modes before it. */
      index += part;
#else
      index += part * below;
#endif
      below *= part_size;
      skip_spaces(&w->c);
      skip_spaces(&w->s);
      if (*w->c == ',' && *w->s == ',') { ++w->c, ++w->s; continue; }
      if (*w->c == ')' && *w->s == ')') { ++w->c, ++w->s; break; }
      return w->bad = 1, 0;
    }
    *size = below;
    return index;
  }
}

static lc_status tla_offset_tuple(const lc_case* c, const char* coord, uint64_t* bits) {
  layout l;
  char why[160];
  lc_status s = plan(c, &l, why, sizeof why, 0);
  uint64_t at[TLA_MAX_LEAVES];
  walker w;
  int m;
  if (s != LC_OK) return s;
  memset(&w, 0, sizeof w);
  w.c = coord, w.s = lc_param(c, "shape"), w.l = &l;
  skip_spaces(&w.c);
  skip_spaces(&w.s);
  if (*w.s != '(') {  /* an integer shape: one mode */
    uint64_t size;
    at[0] = index_in(&w, &size);
  } else {
    if (*w.c != '(') return LC_INVALID;
    ++w.c, ++w.s;
    for (m = 0; m < l.modes; ++m) {
      uint64_t size;
      at[m] = index_in(&w, &size);
      skip_spaces(&w.c);
      skip_spaces(&w.s);
      if (w.bad || *w.c != *w.s || (*w.c != ',' && *w.c != ')')) return LC_INVALID;
      ++w.c, ++w.s;
    }
  }
  skip_spaces(&w.c);
  if (w.bad || *w.c) return LC_INVALID;
  for (m = 0; m < l.modes; ++m) {
    if (at[m] >= l.logical[m]) return LC_INVALID;  /* padding of a tile */
  }
  *bits = offset_of(&l, at) * l.bytes * 8;
  return LC_OK;
}

static lc_status walk(const lc_case* c, uint8_t* logical, uint8_t* physical, size_t physical_size, int pack) {
  layout l;
  char why[160];
  uint64_t k, index;
  lc_status s = plan(c, &l, why, sizeof why, 1);
  if (s != LC_OK) return s;
  if (physical_size != l.cosize * l.bytes) return LC_ERROR;
  if (pack) memset(physical, FREE_BYTE, physical_size);
  /* Every coordinate of the layout: an element inside the logical tensor
   * (row-major index), else the padding of a tile, 0. */
  for (k = 0; k < l.total; ++k) {
    uint64_t at[TLA_MAX_LEAVES], rest = k;
    int d, inside = 1;
    uint8_t* p;
    for (d = l.modes - 1; d >= 0; --d) at[d] = rest % l.size[d], rest /= l.size[d];
    index = 0;
    for (d = 0; d < l.modes; ++d) {
      if (at[d] >= l.logical[d]) inside = 0;
      index = index * l.logical[d] + at[d];
    }
    p = physical + offset_of(&l, at) * l.bytes;
    if (!inside) {
      if (pack) memset(p, 0, l.bytes);
      continue;
    }
    if (pack) memcpy(p, logical + index * l.bytes, l.bytes);
    else memcpy(logical + index * l.bytes, p, l.bytes);
  }
  return LC_OK;
}

static lc_status tla_pack(const lc_case* c, const void* logical, size_t ls, void* physical, size_t ps) {
  (void)ls;
  return walk(c, (uint8_t*)logical, (uint8_t*)physical, ps, 1);
}

static lc_status tla_unpack(const lc_case* c, const void* physical, size_t ps, void* logical, size_t ls) {
  (void)ls;
  return walk(c, (uint8_t*)logical, (uint8_t*)physical, ps, 0);
}

static const lc_capability kCapabilities[] = {
    {"tla.layout", "*", 0},
    {"tla.tile", "*", 0},
};

static const lc_plugin kPlugin = {LC_ABI_MAJOR, LC_ABI_MINOR, sizeof(lc_plugin), PLUGIN_NAME,
                                  kCapabilities, sizeof kCapabilities / sizeof kCapabilities[0],
                                  tla_supports, tla_size, tla_offset, tla_pack, tla_unpack,
                                  NULL, NULL, NULL, NULL, NULL, tla_offset_tuple};

LC_EXPORT const lc_plugin* layoutcheck_plugin_v1(void) { return &kPlugin; }

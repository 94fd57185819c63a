/* Where a compiler places the three surfaces of NVDLA sparse-compressed weight,
 * as a library for `layoutcheck sparse --lib libsparse_surfaces_example.so`: the
 * function of layoutcheck/nvdla_surface.h, written from the document's prose.
 *
 *   "Store WGS, WMB and compressed weight into three separated memory surfaces."
 *   Requirements of alignment: WMB, WGS and (un)compressed weight start at
 *   256-byte aligned addresses and hold a data size that is a multiple of 128.
 *
 * Built with a define, the same file is a realistic mistake the check must catch:
 *   SURFACE_MUTANT_START_128        start addresses aligned to 128 bytes, like the data size
 *   SURFACE_MUTANT_SIZE_ROUNDED     sizes rounded up to 128 instead of checked
 *   SURFACE_MUTANT_FORGET_WMB       the WMB surface is not checked at all
 *   SURFACE_MUTANT_WRAPPING_END     end = address + size computed modulo 2^64
 *   SURFACE_MUTANT_EMPTY_OVERLAPS   an empty surface at another's address overlaps it
 *   SURFACE_MUTANT_READ_PAST        reads one struct past its argument
 *   SURFACE_MUTANT_BAD_RULE         names its rule by a pointer to nowhere
 *   SURFACE_MUTANT_HANG             never returns
 */
#include <stdint.h>

#include "layoutcheck/nvdla_surface.h"

#define EXPORT __attribute__((visibility("default")))

struct surface {
  uint64_t address, size;
  const char* start_rule;
  const char* size_rule;
};

/* Whether two surfaces share a byte: each starts at or before the other's last
 * byte (address + size - 1, an address once the end is checked; address + size
 * itself is 2^64 for a surface that ends the address space). */
static int overlap(const struct surface* x, const struct surface* y) {
#ifdef SURFACE_MUTANT_EMPTY_OVERLAPS
  if (x->address == y->address) return 1;
#else
  if (x->size == 0 || y->size == 0) return 0;
#endif
  return x->address <= y->address + (y->size - 1) && y->address <= x->address + (x->size - 1);
}

EXPORT int nvdla_sparse_surfaces_valid(const struct nvdla_sparse_surfaces* s, const char** rule) {
#ifdef SURFACE_MUTANT_HANG
  for (volatile int spin = 1; spin;) {
  }
#endif
#ifdef SURFACE_MUTANT_READ_PAST
  if (s[1].wgs_size == 12345) return 0;
#endif
#ifdef SURFACE_MUTANT_BAD_RULE
  if (s->wgs_address % 256 != 0) {
    *rule = (const char*)16;
    return 0;
  }
#endif
#ifdef SURFACE_MUTANT_START_128
  const uint64_t start_align = 128;
#else
  const uint64_t start_align = 256;
#endif
  struct surface surfaces[3] = {
      {s->wgs_address, s->wgs_size, "nvdla.sparse/wgs-start-address-align-256", "nvdla.sparse/wgs-size-align-128"},
      {s->wmb_address, s->wmb_size, "nvdla.sparse/wmb-start-address-align-256", "nvdla.sparse/wmb-size-align-128"},
      {s->data_address, s->data_size, "nvdla.weight/start-address-align-256", "nvdla.sparse/data-size-align-128"},
  };
  int i, j;
  for (i = 0; i < 3; ++i) {
    struct surface* x = &surfaces[i];
#ifdef SURFACE_MUTANT_FORGET_WMB
    if (i == 1) continue;
#endif
    if (x->address % start_align != 0) {
      *rule = x->start_rule;
      return 0;
    }
#ifdef SURFACE_MUTANT_SIZE_ROUNDED
    x->size = (x->size + 127) / 128 * 128;
#else
    if (x->size % 128 != 0) {
      *rule = x->size_rule;
      return 0;
    }
#endif
#ifndef SURFACE_MUTANT_WRAPPING_END
    /* The last byte, address + size - 1, must be an address. */
    if (x->size != 0 && x->size - 1 > UINT64_MAX - x->address) {
      *rule = "nvdla.sparse/address-overflow";
      return 0;
    }
#endif
  }
  for (i = 0; i < 3; ++i) {
    for (j = i + 1; j < 3; ++j) {
      if (overlap(&surfaces[i], &surfaces[j])) {
        *rule = "nvdla.sparse/surfaces-overlap";
        return 0;
      }
    }
  }
  return 1;
}

/* Shared by the lenient example plugins: after an exact pack, overwrite every
 * byte that holds no element with a non-zero value.
 *
 * The documents leave some bytes free: NVDLA feature data's channel padding
 * ("The attached data can be any value except NaN when it's fp16") and the gaps
 * at line and surface boundaries, the TPU's empty blocks. A conforming
 * implementation may leave anything there, and `layoutcheck check` must accept
 * it; `layoutcheck describe` lists a case's free bytes. Bytes the document
 * fixes (the TPU's dummy elements of the storage modes) keep their value. */
#ifndef LAYOUTCHECK_EXAMPLE_LENIENT_FILL_H_
#define LAYOUTCHECK_EXAMPLE_LENIENT_FILL_H_

#include <stdlib.h>
#include <string.h>

#include "layoutcheck/c_api.h"

/* 0x55 in every byte: as fp16, 0x5555 is 85.3, not a NaN. */
#define LENIENT_FILL 0x55

/* Marks the bytes of every element of the case (base->offset_bits) and, with
 * `lanes` > 1, the dummy lanes after the last element of N of a packed storage
 * mode; every other byte becomes LENIENT_FILL. */
static lc_status lenient_fill(const lc_plugin* base, const lc_case* c, uint8_t* physical, size_t physical_size,
                              uint64_t lanes) {
  uint64_t count = 1, i, b, bits, bytes = c->dtype_bits / 8;
  int64_t at[8];
  uint32_t d;
  uint8_t* owned;
  lc_status s;
  if (c->rank > 8 || bytes == 0) return LC_UNSUPPORTED;
  owned = (uint8_t*)calloc(physical_size ? physical_size : 1, 1);
  if (!owned) return LC_ERROR;
  for (d = 0; d < c->rank; ++d) count *= (uint64_t)c->shape[d];
  for (i = 0; i < count; ++i) {
    uint64_t rest = i, span = bytes;
    for (d = c->rank; d-- > 0;) at[d] = (int64_t)(rest % (uint64_t)c->shape[d]), rest /= (uint64_t)c->shape[d];
    s = base->offset_bits(c, at, &bits);
    if (s != LC_OK) return free(owned), s;
    /* The last element of N in a packed group is followed by its dummy lanes. */
    if (lanes > 1 && at[0] == c->shape[0] - 1) span = bytes * (lanes - (uint64_t)at[0] % lanes);
    for (b = bits / 8; b < bits / 8 + span && b < physical_size; ++b) owned[b] = 1;
  }
  for (b = 0; b < physical_size; ++b) {
    if (!owned[b]) physical[b] = LENIENT_FILL;
  }
  free(owned);
  return LC_OK;
}

#endif

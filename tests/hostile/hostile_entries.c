/* Hostile plugins for the ABI 1.1 members (c_api.h): one misbehaviour each,
 * switched on by HOSTILE_ENTRY_<KIND>. The host must name it and survive
 * (hostile_entries_test.sh). HOSTILE_ENTRY_ABI_1_0 is a plugin built against
 * ABI 1.0: its table ends at unpack, and what follows it in memory is not a
 * member (a non-NULL pointer the host must never read as one). */
#include <stdint.h>
#include <string.h>

#include "layoutcheck/c_api.h"

static lc_status h_supports(const lc_case* c, char* why, size_t n) {
  (void)c;
  if (n) strncpy(why, "no layouts", n - 1);
  return LC_UNSUPPORTED;
}
static lc_status h_size(const lc_case* c, uint64_t* bytes) {
  (void)c, (void)bytes;
  return LC_UNSUPPORTED;
}
static lc_status h_pack(const lc_case* c, const void* a, size_t as, void* b, size_t bs) {
  (void)c, (void)a, (void)as, (void)b, (void)bs;
  return LC_UNSUPPORTED;
}

static lc_status h_convert(const lc_convert_case* c, const void* src, size_t src_bytes, void* dst, size_t dst_bytes) {
  (void)c, (void)src, (void)src_bytes;
  memset(dst, 0, dst_bytes);
#if defined(HOSTILE_ENTRY_CONVERT_SEGFAULT)
  *(volatile int*)(uintptr_t)8 = 1;
#elif defined(HOSTILE_ENTRY_CONVERT_LOOP)
  for (volatile int spin = 1; spin;) {
  }
#elif defined(HOSTILE_ENTRY_CONVERT_WRITE_PAST_END)
  ((volatile uint8_t*)dst)[dst_bytes + 100] = 1;
#elif defined(HOSTILE_ENTRY_CONVERT_BAD_STATUS)
  return (lc_status)7;
#endif
  return LC_OK;
}

static lc_status h_compress(const lc_case* c, const void* packed, size_t packed_size, const lc_sparse_surfaces* out,
                            uint64_t* data_size) {
  (void)c, (void)packed, (void)packed_size;
  memset(out->wgs, 0, out->wgs_size);
  memset(out->wmb, 0, out->wmb_size);
  *data_size = 0;
#if defined(HOSTILE_ENTRY_SPARSE_WRITE_BEFORE)
  ((volatile uint8_t*)out->wgs)[-1] = 1;
#elif defined(HOSTILE_ENTRY_SPARSE_LYING_SIZE)
  *data_size = out->data_size + 1000;
#endif
  return LC_OK;
}

static lc_status h_decompress(const lc_case* c, const lc_sparse_surfaces* in, void* packed, size_t packed_size) {
  (void)c, (void)in;
  memset(packed, 0, packed_size);
  return LC_OK;
}

static lc_status h_winograd(const lc_winograd_case* c, const void* src, size_t src_bytes, void* dst, size_t dst_bytes) {
  static uint8_t calls;
  (void)c, (void)src, (void)src_bytes;
  memset(dst, 0, dst_bytes);
#if defined(HOSTILE_ENTRY_WINOGRAD_NONDETERMINISTIC)
  if (dst_bytes) ((uint8_t*)dst)[0] = ++calls;
#else
  (void)calls;
#endif
  return LC_OK;
}

static const lc_capability kCaps[] = {
    {"convert.ieee", "fp32>fp16 fp16>fp32", 0},
    {"nvdla.sparse", "int8", 0},
    {"nvdla.winograd.phase1", "int8", 0},
};

#if defined(HOSTILE_ENTRY_ABI_1_0)
/* The 1.0 table, then a word that is no member. */
static const struct {
  uint32_t abi_major, abi_minor, struct_size;
  const char* name;
  const lc_capability* capabilities;
  uint32_t capability_count;
  void* functions[5];
  void* not_a_member[5];
} kOld = {1, 0, (uint32_t)LC_PLUGIN_SIZE_1_0, "abi-1.0", kCaps, 3,
          {(void*)h_supports, (void*)h_size, NULL, (void*)h_pack, (void*)h_pack},
          {(void*)1, (void*)1, (void*)1, (void*)1, (void*)1}};
LC_EXPORT const lc_plugin* layoutcheck_plugin_v1(void) { return (const lc_plugin*)(const void*)&kOld; }
#else
static const lc_plugin kPlugin = {LC_ABI_MAJOR, LC_ABI_MINOR, sizeof(lc_plugin), "hostile-entries",
                                  kCaps, 3, h_supports, h_size, NULL, h_pack, h_pack,
                                  h_convert, h_compress, h_decompress, h_winograd, h_winograd};
LC_EXPORT const lc_plugin* layoutcheck_plugin_v1(void) { return &kPlugin; }
#endif

/* A lenient but correct TPU plugin: tpu_plugin.c, except that pack leaves 0x55
 * in every byte of the local-memory image that holds no element (the empty
 * blocks: "there are X - 2 empty blocks storing nothing about this tensor",
 * padding after each channel, other NPUs' space), which the document leaves
 * free. The dummy elements of the storage modes stay 0. It must pass
 *   layoutcheck check --impl ./libtpu_lenient_plugin.so --layout 'tpu*'
 * and fail the same check with --strict-padding. */
#define layoutcheck_plugin_v1 tpu_exact_plugin_v1
#define TPU_PLUGIN_NAME "tpu-c-exact"
#include "tpu_plugin.c"
#undef layoutcheck_plugin_v1

#include "lenient_fill.h"

static lc_status lenient_pack(const lc_case* c, const void* logical, size_t ls, void* physical, size_t ps) {
  const char* mode = lc_param(c, "mode");
  uint64_t lanes = 1;
  lc_status s = tpu_pack(c, logical, ls, physical, ps);
  if (s != LC_OK) return s;
  if (mode && strcmp(mode, "4n") == 0) lanes = 4;
  if (mode && (strcmp(mode, "2n") == 0 || strcmp(mode, "2ic") == 0)) lanes = 2;
  return lenient_fill(&kPlugin, c, (uint8_t*)physical, ps, lanes);
}

static const lc_plugin kLenientPlugin = {LC_ABI_MAJOR, LC_ABI_MINOR, sizeof(lc_plugin), "tpu-c-lenient",
                                         kCapabilities, sizeof kCapabilities / sizeof kCapabilities[0],
                                         tpu_supports, tpu_size, tpu_offset, lenient_pack, tpu_unpack};

LC_EXPORT const lc_plugin* layoutcheck_plugin_v1(void) { return &kLenientPlugin; }

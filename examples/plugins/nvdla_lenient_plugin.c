/* A lenient but correct NVDLA plugin: nvdla_plugin.c, except that pack leaves
 * 0x55 in every byte of feature data that holds no element (the channel
 * padding of the last surface's atoms and the gaps at line and surface
 * boundaries), which the document leaves free. It must pass
 *   layoutcheck check --impl ./libnvdla_lenient_plugin.so --layout 'nvdla.feature'
 * and fail the same check with --strict-padding. DC weights keep the 0s the
 * document appends ("Append 0s at end of all mapped weight"). */
#define layoutcheck_plugin_v1 nvdla_exact_plugin_v1
#define NVDLA_PLUGIN_NAME "nvdla-c-exact"
#include "nvdla_plugin.c"
#undef layoutcheck_plugin_v1

#include "lenient_fill.h"

static lc_status lenient_pack(const lc_case* c, const void* logical, size_t ls, void* physical, size_t ps) {
  lc_status s = nv_pack(c, logical, ls, physical, ps);
  if (s != LC_OK || strcmp(c->layout_name, "nvdla.feature") != 0) return s;
  return lenient_fill(&kPlugin, c, (uint8_t*)physical, ps, 1);
}

static const lc_plugin kLenientPlugin = {LC_ABI_MAJOR, LC_ABI_MINOR, sizeof(lc_plugin), "nvdla-c-lenient",
                                         kCapabilities, sizeof kCapabilities / sizeof kCapabilities[0],
                                         nv_supports, nv_size, nv_offset, lenient_pack, nv_unpack};

LC_EXPORT const lc_plugin* layoutcheck_plugin_v1(void) { return &kLenientPlugin; }

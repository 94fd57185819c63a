/* A correct plugin without the optional offset_bits: the TPU example plugin's
 * table with offset_bits NULL and only the compact and aligned layouts
 * claimed. The oracle run must find its offsets through pack and skip the
 * TPU layouts it does not claim. */
#define layoutcheck_plugin_v1 tpu_example_plugin_v1
#include "../../examples/plugins/tpu_plugin.c"
#undef layoutcheck_plugin_v1

static const lc_capability kNoOffsetCapabilities[] = {
    {"tpu.compact", "*", 0},
    {"tpu.aligned", "*", 0},
};

LC_EXPORT const lc_plugin* layoutcheck_plugin_v1(void) {
  static lc_plugin table;
  table = *tpu_example_plugin_v1();
  table.name = "tpu-no-offset";
  table.capabilities = kNoOffsetCapabilities;
  table.capability_count = sizeof kNoOffsetCapabilities / sizeof kNoOffsetCapabilities[0];
  table.offset_bits = NULL;
  return &table;
}

/* The README's quick start: mge.nhwc (logical N,C,H,W stored N,H,W,C) for fp32 and int8.
 *   cc -shared -fPIC -I include -o libnhwc.so examples/plugins/quickstart.c
 *   build/bin/layoutcheck check --impl ./libnhwc.so --layout mge.nhwc --cases 100 */
#include <string.h>
#include "layoutcheck/c_api.h"

static lc_status supports(const lc_case* c, char* why, size_t n) {
  (void)why, (void)n;
  if (strcmp(c->layout_name, "mge.nhwc") != 0 || c->dtype_bits % 8 != 0) return LC_UNSUPPORTED;
  return c->rank == 4 ? LC_OK : LC_INVALID; /* logical N, C, H, W */
}
static lc_status size_bytes(const lc_case* c, uint64_t* bytes) {
  *bytes = (uint64_t)c->shape[0] * c->shape[1] * c->shape[2] * c->shape[3] * (c->dtype_bits / 8);
  return LC_OK;
}
static void copy(const lc_case* c, const char* src, char* dst, int pack) {
  const int64_t N = c->shape[0], C = c->shape[1], H = c->shape[2], W = c->shape[3];
  const size_t e = c->dtype_bits / 8;
  for (int64_t n = 0; n < N; ++n)
    for (int64_t ch = 0; ch < C; ++ch)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t w = 0; w < W; ++w) {
          size_t l = (size_t)(((n * C + ch) * H + h) * W + w), p = (size_t)(((n * H + h) * W + w) * C + ch);
          memcpy(dst + (pack ? p : l) * e, src + (pack ? l : p) * e, e);
        }
}
static lc_status pack(const lc_case* c, const void* l, size_t ls, void* p, size_t ps) {
  (void)ls, (void)ps;
  copy(c, l, p, 1);
  return LC_OK;
}
static lc_status unpack(const lc_case* c, const void* p, size_t ps, void* l, size_t ls) {
  (void)ls, (void)ps;
  copy(c, p, l, 0);
  return LC_OK;
}
static const lc_capability kCaps[] = {{"mge.nhwc", "fp32 int8", 0}};
static const lc_plugin kPlugin = {LC_ABI_MAJOR, LC_ABI_MINOR, sizeof(lc_plugin), "nhwc", kCaps, 1,
                                  supports, size_bytes, NULL, pack, unpack};
LC_EXPORT const lc_plugin* layoutcheck_plugin_v1(void) { return &kPlugin; }

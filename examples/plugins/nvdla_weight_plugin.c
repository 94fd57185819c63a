/* A layoutcheck plugin in plain C: NVDLA image-input weights
 * (nvdla.weight.image, with channel post-extension), converted Winograd
 * weights (nvdla.weight.winograd) and deconvolution weights
 * (nvdla.weight.deconv), all (K, C, H, W) kernels.
 *
 * From nvdla-in-memory-data-formats.txt:
 * - "Basic Weight for Direct Convolution": groups of 16 kernels (int16, fp16)
 *   or 32 (int8), the last one smaller; each kernel divided into 1x1x64-element
 *   cubes, the last one narrower ("Do not append 0"); cubes scanned
 *   C' -> K -> W -> H -> C in a group and mapped compactly, groups one after
 *   another; "Append 0s at end of all mapped weight for 128-byte alignment".
 * - "Basic Weight for image input": channel pre-extension "turn[s] all weights
 *   in same line to a single channel", then the direct-convolution mapping.
 *   As layoutcheck reads it (oracles/ERRATA.md, NVDLA 12): weight (c, h, w) is
 *   channel w*C + c of line h, an H x 1 x (W*C) kernel.
 * - "Channel Post-extension for image input": neighbour lines are combined,
 *   parameter 1, 2 or 4; "two-line (C<=32) or four-line (C<=16)"; "If weight
 *   height is not divisible by 2 (2-lines) or 4 (4-lines), do NOT append 0s."
 *   Read (ERRATA NVDLA 13) as: lines e*j .. e*j+e-1 become line j, channel
 *   (h mod e)*W*C + w*C + c; the limits apply to W*C; the last line may be
 *   narrower. A post-extended line then fits one 64-element cube.
 * - "Basic Weight for Winograd Convolution", phase 2: the converted 4x4 kernels
 *   with C padded with 0s to 32 bytes, grouped as above, divided into 4x4x4
 *   element cubes scanned K -> C in a group, mapped closely, groups one by one.
 *   Inside a cube the 4 channels are fastest, then W, then H (ERRATA NVDLA 20).
 *   The layout holds converted kernels (H = W = 4): phase 1 (G W G^T) changes
 *   values and is not a layout (ERRATA NVDLA 18).
 * - Table "Weight formats and options": no post-extension for Winograd or
 *   deconvolution weights.
 * - "Set split for deconvolution", as layoutcheck reads it (ERRATA NVDLA 22):
 *   set (p, q) of stride (sx, sy) holds taps (i*sy + p, j*sx + q), a
 *   ceil(H/sy) x ceil(W/sx) kernel mapped as direct-convolution weight, taps
 *   past the kernel 0; set p*sx + q starts at that index times the set's size
 *   rounded up to 256 bytes.
 * - "Alignment of Start Address and Stride": weights start 256-byte aligned.
 *
 * No byte of the image and Winograd formats is free (the appended 0s are
 * fixed); the gaps between deconvolution sets are, and are written 0 here
 * (0x55 built with -DNVDLA_WEIGHT_LENIENT: a lenient but correct
 * implementation, which must pass `check` and fail `check --strict-padding`).
 * Nothing is declined. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layoutcheck/c_api.h"

typedef struct {
  int winograd, deconv;
  uint64_t sx, sy, hs, ws, set_stride;  /* deconvolution: strides, set kernel, set stride */
  uint64_t K, C, H, W, bytes, group;
  uint64_t e;                 /* post-extension lines (image) */
  uint64_t lines, line_ch;    /* image: extended lines, channels of a full line */
  uint64_t per_kernel;        /* elements of one mapped kernel */
  uint64_t padded_c;          /* Winograd: channels padded to 32 bytes */
  uint64_t size;
} weights;

static lc_status plan(const lc_case* c, weights* m, char* why, size_t n) {
  const char* addr = lc_param(c, "addr");
  uint32_t d;
  memset(m, 0, sizeof *m);
  if (strcmp(c->layout_name, "nvdla.weight.image") == 0) m->winograd = 0;
  else if (strcmp(c->layout_name, "nvdla.weight.winograd") == 0) m->winograd = 1;
  else if (strcmp(c->layout_name, "nvdla.weight.deconv") == 0) m->deconv = 1;
  else return snprintf(why, n, "%s is not implemented by this plugin", c->layout_name), LC_UNSUPPORTED;
  if (strcmp(c->dtype, "int8") && strcmp(c->dtype, "int16") && strcmp(c->dtype, "fp16")) {
    return snprintf(why, n, "weights are int8, int16 or fp16"), LC_INVALID;
  }
  if (c->rank != 4) return snprintf(why, n, "kernels are (K, C, H, W)"), LC_INVALID;
  for (d = 0; d < 4; ++d) {
    if (c->shape[d] <= 0 || c->shape[d] > (1 << 20)) return snprintf(why, n, "extents must be in 1..2^20"), LC_INVALID;
  }
  if (addr && strtoull(addr, NULL, 10) % 256) return snprintf(why, n, "start address not 256-byte aligned"), LC_INVALID;
  m->K = (uint64_t)c->shape[0], m->C = (uint64_t)c->shape[1], m->H = (uint64_t)c->shape[2], m->W = (uint64_t)c->shape[3];
  m->bytes = c->dtype_bits / 8;
  m->group = m->bytes == 1 ? 32 : 16;
  if (m->winograd || m->deconv) {
    const char* post = lc_param(c, "post_extension");
    if (post && strtoull(post, NULL, 10) > 1) return snprintf(why, n, "no post-extension for this weight"), LC_INVALID;
  }
  if (m->deconv) {
    const char* sx = lc_param(c, "stride_x");
    const char* sy = lc_param(c, "stride_y");
    uint64_t set_bytes;
    m->sx = sx ? strtoull(sx, NULL, 10) : 1;
    m->sy = sy ? strtoull(sy, NULL, 10) : 1;
    if (m->sx < 1 || m->sx > 32 || m->sy < 1 || m->sy > 32) return snprintf(why, n, "strides are 1..32"), LC_INVALID;
    m->hs = (m->H + m->sy - 1) / m->sy, m->ws = (m->W + m->sx - 1) / m->sx;
    m->per_kernel = m->C * m->hs * m->ws;
    if (m->K > ((uint64_t)1 << 40) / m->per_kernel / m->bytes / (m->sx * m->sy)) return snprintf(why, n, "too large"), LC_INVALID;
    set_bytes = (m->K * m->per_kernel * m->bytes + 127) / 128 * 128;
    m->set_stride = (set_bytes + 255) / 256 * 256;
    m->size = (m->sx * m->sy - 1) * m->set_stride + set_bytes;
    return LC_OK;
  }
  if (m->winograd) {
    if (m->H != 4 || m->W != 4) return snprintf(why, n, "converted Winograd kernels are 4x4"), LC_INVALID;
    m->padded_c = (m->C * m->bytes + 31) / 32 * 32 / m->bytes;
    m->per_kernel = m->padded_c * 16;
  } else {
    const char* post = lc_param(c, "post_extension");
    m->e = post ? strtoull(post, NULL, 10) : 1;
    if (m->e == 0) m->e = 1;
    if (m->e != 1 && m->e != 2 && m->e != 4) return snprintf(why, n, "post-extension is 1, 2 or 4"), LC_INVALID;
    if ((m->e == 2 && m->W * m->C > 32) || (m->e == 4 && m->W * m->C > 16)) {
      return snprintf(why, n, "post-extension %llu needs W*C <= %d", (unsigned long long)m->e, m->e == 2 ? 32 : 16),
             LC_INVALID;
    }
    m->line_ch = m->e * m->W * m->C;
    m->lines = (m->H + m->e - 1) / m->e;
    m->per_kernel = m->C * m->H * m->W;
  }
  if (m->K > ((uint64_t)1 << 40) / m->per_kernel / m->bytes) return snprintf(why, n, "too large"), LC_INVALID;
  m->size = (m->K * m->per_kernel * m->bytes + 127) / 128 * 128;
  return LC_OK;
}

/* Element index of weight (k, c, h, w) in the mapped buffer. */
static uint64_t element_of(const weights* m, uint64_t k, uint64_t c, uint64_t h, uint64_t w) {
  uint64_t g = k / m->group, kk = k % m->group;
  uint64_t in_group = m->K - g * m->group < m->group ? m->K - g * m->group : m->group;
  uint64_t base = g * m->group * m->per_kernel;
  if (m->deconv) {
    /* Set p*sx + q; inside it, direct-convolution weight of the set kernel:
       position (h/sy, w/sx), cubes of 64 channels. Returns a byte-unit element
       index of the whole buffer (set strides are multiples of 256 bytes). */
    uint64_t set = (h % m->sy) * m->sx + w % m->sx, pos = (h / m->sy) * m->ws + w / m->sx, hw = m->hs * m->ws;
    uint64_t c0 = c / 64 * 64, width = m->C - c0 < 64 ? m->C - c0 : 64;
    return set * m->set_stride / m->bytes + base + c0 * hw * in_group + (pos * in_group + kk) * width + (c - c0);
  }
  if (m->winograd) {
    uint64_t cube = c / 4, inner = (h * 4 + w) * 4 + c % 4;
    return base + (cube * in_group + kk) * 64 + inner;
  }
  if (m->e == 1) {
    /* Pre-extended kernel: H lines of W*C channels, width 1, in 64-element cubes. */
    uint64_t ch = w * m->C + c, width_all = m->W * m->C;
    uint64_t c0 = ch / 64 * 64, width = width_all - c0 < 64 ? width_all - c0 : 64;
    return base + c0 * m->H * in_group + (h * in_group + kk) * width + (ch - c0);
  } else {
    /* Post-extended: line j = h / e holds one cube of (lines in it) * W*C channels. */
    uint64_t j = h / m->e, ch = (h % m->e) * m->W * m->C + w * m->C + c;
    uint64_t last_lines = m->H - (m->lines - 1) * m->e;
    uint64_t width = j == m->lines - 1 ? last_lines * m->W * m->C : m->line_ch;
    return base + j * in_group * m->line_ch + kk * width + ch;
  }
}

static lc_status wt_supports(const lc_case* c, char* why, size_t n) {
  weights m;
  return plan(c, &m, why, n);
}

static lc_status wt_size(const lc_case* c, uint64_t* bytes) {
  weights m;
  char why[160];
  lc_status s = plan(c, &m, why, sizeof why);
  if (s == LC_OK) *bytes = m.size;
  return s;
}

static lc_status wt_offset(const lc_case* c, const int64_t* at, uint64_t* bits) {
  weights m;
  char why[160];
  lc_status s = plan(c, &m, why, sizeof why);
  if (s == LC_OK) *bits = element_of(&m, (uint64_t)at[0], (uint64_t)at[1], (uint64_t)at[2], (uint64_t)at[3]) * m.bytes * 8;
  return s;
}

static lc_status walk(const lc_case* c, uint8_t* logical, uint8_t* physical, size_t physical_size, int pack) {
  weights m;
  char why[160];
  uint64_t k, ch, h, w, i = 0;
  lc_status s = plan(c, &m, why, sizeof why);
  if (s != LC_OK) return s;
  if (physical_size != m.size) return LC_ERROR;
  /* Padded channels and the end alignment are 0s. */
  if (pack) memset(physical, 0, physical_size);
#ifdef NVDLA_WEIGHT_LENIENT
  if (pack && m.deconv) {
    /* The gap from a set's 128-byte aligned end to the next set's 256-byte
     * aligned start is free: 0x55 there. */
    const uint64_t sets = m.sx * m.sy, set_bytes = m.size - (sets - 1) * m.set_stride;
    uint64_t set;
    for (set = 0; set + 1 < sets; ++set) {
      memset(physical + set * m.set_stride + set_bytes, 0x55, (size_t)(m.set_stride - set_bytes));
    }
  }
#endif
  for (k = 0; k < m.K; ++k) {
    for (ch = 0; ch < m.C; ++ch) {
      for (h = 0; h < m.H; ++h) {
        for (w = 0; w < m.W; ++w, ++i) {
          uint64_t off = element_of(&m, k, ch, h, w) * m.bytes;
          if (off + m.bytes > physical_size) return LC_ERROR;
          if (pack) memcpy(physical + off, logical + i * m.bytes, m.bytes);
          else memcpy(logical + i * m.bytes, physical + off, m.bytes);
        }
      }
    }
  }
  return LC_OK;
}

static lc_status wt_pack(const lc_case* c, const void* logical, size_t ls, void* physical, size_t ps) {
  (void)ls;
  return walk(c, (uint8_t*)logical, (uint8_t*)physical, ps, 1);
}

static lc_status wt_unpack(const lc_case* c, const void* physical, size_t ps, void* logical, size_t ls) {
  (void)ls;
  return walk(c, (uint8_t*)logical, (uint8_t*)physical, ps, 0);
}

static const lc_capability kCapabilities[] = {
    {"nvdla.weight.image", "int8 int16 fp16", 0},
    {"nvdla.weight.winograd", "int8 int16 fp16", 0},
    {"nvdla.weight.deconv", "int8 int16 fp16", 0},
};

#ifdef NVDLA_WEIGHT_LENIENT
#define PLUGIN_NAME "nvdla-c-weight-lenient"
#else
#define PLUGIN_NAME "nvdla-c-weight"
#endif
static const lc_plugin kPlugin = {LC_ABI_MAJOR, LC_ABI_MINOR, sizeof(lc_plugin), PLUGIN_NAME,
                                  kCapabilities, sizeof kCapabilities / sizeof kCapabilities[0],
                                  wt_supports, wt_size, wt_offset, wt_pack, wt_unpack};

LC_EXPORT const lc_plugin* layoutcheck_plugin_v1(void) { return &kPlugin; }

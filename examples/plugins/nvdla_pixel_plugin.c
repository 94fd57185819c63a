/* A layoutcheck plugin in plain C: NVDLA pixel data, nvdla.pixel(format=...,
 * x_offset=..., line_stride=..., uv_line_stride=..., uv_offset=..., addr=...),
 * an (H, W, C) image in any format of the table, all 36 of them.
 *
 * From nvdla-in-memory-data-formats.txt, "Pixel Format":
 * - the table "Pixel formats and valid setting" gives per format the planes,
 *   the channel size, the input precision and the X offset range;
 * - "Both start address and line stride of pitch linear shall aligned to 32
 *   bytes"; "It may have redundant data between 32-byte aligned address and
 *   first element. NVDLA use x offset to indicate how many redundant data
 *   are. The unit of offset is pixel."
 * Readings of layoutcheck followed here (oracles/ERRATA.md, NVDLA 15-17):
 * - a format name lists the components of one little-endian word from its most
 *   significant bits down; "___" separates the Y plane from the chroma plane;
 *   the logical C index is the component's place in the name;
 * - 8- and 16-bit components are bytes of the word; the 10-bit packed formats
 *   (four fields filling 32 bits: A2B10G10R10, ...) are bit fields whose
 *   values must fit (pack answers LC_INVALID otherwise) and are zero-extended
 *   by unpack; other 10- and 12-bit components are the low 10 or 12 bits of
 *   16-bit containers (NVDLA 25): pack rejects a wider value, unpack keeps
 *   the low bits;
 * - int8 formats take int8 or uint8 data, int16 ones int16 or uint16, the
 *   fp16 ones fp16; the X offset range is 32 bytes of Y pixels (0 to
 *   32 / pixel bytes - 1);
 * - the default line stride is (x_offset + W) pixels rounded up to 32 bytes,
 *   the same for the chroma plane, which starts uv_offset bytes after the Y
 *   plane (default H x line stride, a multiple of 32).
 *
 * The x-offset bytes, the rest of each line and the space between the planes
 * are free. Built with -DNVDLA_PIXEL_LENIENT the plugin fills them with 0x55
 * instead of 0: lenient but correct, it must pass `check` and fail
 * `check --strict-padding`. Nothing is declined. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layoutcheck/c_api.h"

#ifdef NVDLA_PIXEL_LENIENT
#define FREE_BYTE 0x55
#define PLUGIN_NAME "nvdla-c-pixel-lenient"
#else
#define FREE_BYTE 0x00
#define PLUGIN_NAME "nvdla-c-pixel"
#endif

/* The table: name, input precision. Planes, channels and X offset ranges follow
 * from the name (and are the table's). */
static const struct {
  const char* name;
  const char* precision;
} kFormats[] = {
    {"T_R8", "int8"},
    {"T_R10", "int16"},
    {"T_R12", "int16"},
    {"T_R16", "int16"},
    {"T_R16_I", "int16"},
    {"T_R16_F", "int16"},
    {"T_A16B16G16R16", "int16"},
    {"T_X16B16G16R16", "int16"},
    {"T_A16B16G16R16_F", "fp16"},
    {"T_A16Y16U16V16", "int16"},
    {"T_V16U16Y16A16", "int16"},
    {"T_A16Y16U16V16_F", "fp16"},
    {"T_A8B8G8R8", "int8"},
    {"T_A8R8G8B8", "int8"},
    {"T_B8G8R8A8", "int8"},
    {"T_R8G8B8A8", "int8"},
    {"T_X8B8G8R8", "int8"},
    {"T_X8R8G8B8", "int8"},
    {"T_B8G8R8X8", "int8"},
    {"T_R8G8B8X8", "int8"},
    {"T_A2B10G10R10", "int16"},
    {"T_A2R10G10B10", "int16"},
    {"T_B10G10R10A2", "int16"},
    {"T_R10G10B10A2", "int16"},
    {"T_A2Y10U10V10", "int16"},
    {"T_V10U10Y10A2", "int16"},
    {"T_A8Y8U8V8", "int8"},
    {"T_V8U8Y8A8", "int8"},
    {"T_Y8___U8V8_N444", "int8"},
    {"T_Y8___V8U8_N444", "int8"},
    {"T_Y10___U10V10_N444", "int16"},
    {"T_Y10___V10U10_N444", "int16"},
    {"T_Y12___U12V12_N444", "int16"},
    {"T_Y12___V12U12_N444", "int16"},
    {"T_Y16___U16V16_N444", "int16"},
    {"T_Y16___V16U16_N444", "int16"},
};

#define MAX_COMPONENTS 4

typedef struct {
  uint32_t planes, channels;
  uint32_t plane_of[MAX_COMPONENTS];
  uint32_t low_bit[MAX_COMPONENTS];  /* in the pixel's word */
  uint32_t width[MAX_COMPONENTS];    /* field bits (8, 16, or a packed 2/10) */
  uint32_t value_bits;               /* 10/12-bit values in 16-bit containers; 0: the whole field */
  uint64_t pixel_bytes[2];
  int bit_fields;                    /* 10-bit packed formats */
  uint64_t H, W, bytes, x_offset;
  uint64_t line_stride[2], plane_offset[2], size;
} pixel;

/* Reads one plane's components "A8B8G8R8" (most significant first). */
static int parse_plane(const char* p, size_t len, pixel* m, uint32_t plane) {
  uint32_t first = m->channels, bits = 0, i, any_odd = 0;
  size_t k = 0;
  while (k < len) {
    uint32_t w = 0;
    if (!(p[k] >= 'A' && p[k] <= 'Z') || m->channels == MAX_COMPONENTS) return 0;
    ++k;
    while (k < len && p[k] >= '0' && p[k] <= '9') w = w * 10 + (uint32_t)(p[k++] - '0');
    if (w == 0) return 0;
    m->plane_of[m->channels] = plane;
    m->width[m->channels] = w;
    m->channels++;
    bits += w;
    if (w % 8) any_odd = 1;
  }
  if (any_odd && bits == 32 && m->channels - first == 4) {
    m->bit_fields = 1;  /* one 32-bit word of bit fields */
  } else if (any_odd) {
    m->value_bits = m->width[first];
    for (i = first; i < m->channels; ++i) m->width[i] = 16;  /* 16-bit containers */
    bits = 16 * (m->channels - first);
  }
  /* Low bit of each component: the widths of the components after it. */
  {
    uint32_t low = 0;
    for (i = m->channels; i-- > first;) m->low_bit[i] = low, low += m->width[i];
  }
  m->pixel_bytes[plane] = bits / 8;
  return 1;
}

static uint64_t param(const lc_case* c, const char* key) {
  const char* v = lc_param(c, key);
  return v ? strtoull(v, NULL, 10) : 0;
}

static lc_status plan(const lc_case* c, pixel* m, char* why, size_t n) {
  const char* format = lc_param(c, "format");
  const char* precision = NULL;
  char body[64];
  char* sep;
  size_t i, len;
  uint64_t xmax, need;
  memset(m, 0, sizeof *m);
  if (strcmp(c->layout_name, "nvdla.pixel") != 0) {
    return snprintf(why, n, "%s is not implemented by this plugin", c->layout_name), LC_UNSUPPORTED;
  }
  for (i = 0; format && i < sizeof kFormats / sizeof kFormats[0]; ++i) {
    if (strcmp(format, kFormats[i].name) == 0) precision = kFormats[i].precision;
  }
  if (!precision) return snprintf(why, n, "format %s is not in the table", format ? format : "(none)"), LC_INVALID;
  /* The name without "T_" and the _F / _I / _N444 suffixes. */
  len = strlen(format + 2);
  if (len >= sizeof body) return LC_INVALID;
  memcpy(body, format + 2, len + 1);
  if ((sep = strstr(body, "_N444")) || (sep = strstr(body, "_F")) || (sep = strstr(body, "_I"))) *sep = 0;
  if ((sep = strstr(body, "___"))) {
    m->planes = 2;
    if (!parse_plane(body, (size_t)(sep - body), m, 0) || !parse_plane(sep + 3, strlen(sep + 3), m, 1)) return LC_INVALID;
  } else {
    m->planes = 1;
    if (!parse_plane(body, strlen(body), m, 0)) return LC_INVALID;
  }
  if (strcmp(precision, "int8") == 0 ? strcmp(c->dtype, "int8") && strcmp(c->dtype, "uint8")
      : strcmp(precision, "int16") == 0 ? strcmp(c->dtype, "int16") && strcmp(c->dtype, "uint16")
                                        : strcmp(c->dtype, "fp16")) {
    return snprintf(why, n, "%s has input precision %s, not %s", format, precision, c->dtype), LC_INVALID;
  }
  m->bytes = c->dtype_bits / 8;
  if (c->rank != 3) return snprintf(why, n, "an (H, W, C) image"), LC_INVALID;
  if (c->shape[0] <= 0 || c->shape[1] <= 0 || c->shape[0] > (1 << 20) || c->shape[1] > (1 << 20)) {
    return snprintf(why, n, "H and W must be in 1..2^20"), LC_INVALID;
  }
  if ((uint64_t)c->shape[2] != m->channels) return snprintf(why, n, "%s has %u channels", format, m->channels), LC_INVALID;
  m->H = (uint64_t)c->shape[0], m->W = (uint64_t)c->shape[1];
  m->x_offset = param(c, "x_offset");
  xmax = 32 / m->pixel_bytes[0] - 1;
  if (m->x_offset > xmax) {
    return snprintf(why, n, "x offset %llu is outside 0~%llu", (unsigned long long)m->x_offset, (unsigned long long)xmax),
           LC_INVALID;
  }
  if (param(c, "addr") % 32) return snprintf(why, n, "start address not 32-byte aligned"), LC_INVALID;
  need = (m->x_offset + m->W) * m->pixel_bytes[0];
  m->line_stride[0] = param(c, "line_stride");
  if (m->line_stride[0] == 0) m->line_stride[0] = (need + 31) / 32 * 32;
  if (m->line_stride[0] % 32 || m->line_stride[0] < need) return snprintf(why, n, "bad line stride"), LC_INVALID;
  m->size = m->H * m->line_stride[0];
  if (m->planes == 2) {
    need = (m->x_offset + m->W) * m->pixel_bytes[1];
    m->line_stride[1] = param(c, "uv_line_stride");
    if (m->line_stride[1] == 0) m->line_stride[1] = (need + 31) / 32 * 32;
    if (m->line_stride[1] % 32 || m->line_stride[1] < need) return snprintf(why, n, "bad UV line stride"), LC_INVALID;
    m->plane_offset[1] = param(c, "uv_offset");
    if (m->plane_offset[1] == 0) m->plane_offset[1] = m->size;
    if (m->plane_offset[1] % 32 || m->plane_offset[1] < m->size) return snprintf(why, n, "bad UV offset"), LC_INVALID;
    if (m->plane_offset[1] > ((uint64_t)1 << 40)) return snprintf(why, n, "too large"), LC_INVALID;
    m->size = m->plane_offset[1] + m->H * m->line_stride[1];
  } else if (param(c, "uv_line_stride") || param(c, "uv_offset")) {
    return snprintf(why, n, "%s has one plane: no UV line stride or offset", format), LC_INVALID;
  }
  return LC_OK;
}

static uint64_t offset_bits_of(const pixel* m, uint64_t h, uint64_t w, uint64_t ch) {
  uint32_t p = m->plane_of[ch];
  uint64_t word = m->plane_offset[p] + h * m->line_stride[p] + (m->x_offset + w) * m->pixel_bytes[p];
  return word * 8 + m->low_bit[ch];
}

static lc_status px_supports(const lc_case* c, char* why, size_t n) {
  pixel m;
  return plan(c, &m, why, n);
}

static lc_status px_size(const lc_case* c, uint64_t* bytes) {
  pixel m;
  char why[160];
  lc_status s = plan(c, &m, why, sizeof why);
  if (s == LC_OK) *bytes = m.size;
  return s;
}

static lc_status px_offset(const lc_case* c, const int64_t* at, uint64_t* bits) {
  pixel m;
  char why[160];
  lc_status s = plan(c, &m, why, sizeof why);
  if (s == LC_OK) *bits = offset_bits_of(&m, (uint64_t)at[0], (uint64_t)at[1], (uint64_t)at[2]);
  return s;
}

static lc_status walk(const lc_case* c, uint8_t* logical, uint8_t* physical, size_t physical_size, int pack) {
  pixel m;
  char why[160];
  uint64_t h, w, ch, i = 0;
  lc_status s = plan(c, &m, why, sizeof why);
  if (s != LC_OK) return s;
  if (physical_size != m.size) return LC_ERROR;
  if (pack) memset(physical, FREE_BYTE, physical_size);
  if (pack && m.bit_fields) {
    /* Each pixel's word is made of its fields only: clear it first. */
    for (h = 0; h < m.H; ++h) {
      for (w = 0; w < m.W; ++w) memset(physical + offset_bits_of(&m, h, w, 3) / 8, 0, 4);
    }
  }
  for (h = 0; h < m.H; ++h) {
    for (w = 0; w < m.W; ++w) {
      for (ch = 0; ch < m.channels; ++ch, ++i) {
        uint64_t bit = offset_bits_of(&m, h, w, ch);
        uint8_t* l = logical + i * m.bytes;
        if (bit / 8 + (m.width[ch] + 7) / 8 > physical_size) return LC_ERROR;
        if (!m.bit_fields) {
          /* A whole byte or a 16-bit container: the element itself, a 10- or
             12-bit value in its low bits. */
          if (pack && m.value_bits && ((uint32_t)l[0] | (uint32_t)l[1] << 8) >> m.value_bits) return LC_INVALID;
          if (pack) memcpy(physical + bit / 8, l, m.bytes);
          else memcpy(l, physical + bit / 8, m.bytes);
          if (!pack && m.value_bits) l[1] = (uint8_t)(l[1] & ((1u << (m.value_bits - 8)) - 1));
        } else {
          uint32_t wordv, mask = (1u << m.width[ch]) - 1, value;
          uint8_t* q = physical + (bit - m.low_bit[ch]) / 8;
          wordv = (uint32_t)q[0] | (uint32_t)q[1] << 8 | (uint32_t)q[2] << 16 | (uint32_t)q[3] << 24;
          if (pack) {
            value = (uint32_t)l[0] | (uint32_t)l[1] << 8;
            if (value > mask) return LC_INVALID; /* does not fit the field (a negative int16 included) */
            wordv = (wordv & ~(mask << m.low_bit[ch])) | value << m.low_bit[ch];
            q[0] = (uint8_t)wordv, q[1] = (uint8_t)(wordv >> 8), q[2] = (uint8_t)(wordv >> 16), q[3] = (uint8_t)(wordv >> 24);
          } else {
            value = (wordv >> m.low_bit[ch]) & mask; /* zero-extended */
            l[0] = (uint8_t)value, l[1] = (uint8_t)(value >> 8);
          }
        }
      }
    }
  }
  return LC_OK;
}

static lc_status px_pack(const lc_case* c, const void* logical, size_t ls, void* physical, size_t ps) {
  (void)ls;
  return walk(c, (uint8_t*)logical, (uint8_t*)physical, ps, 1);
}

static lc_status px_unpack(const lc_case* c, const void* physical, size_t ps, void* logical, size_t ls) {
  (void)ls;
  return walk(c, (uint8_t*)logical, (uint8_t*)physical, ps, 0);
}

static const lc_capability kCapabilities[] = {
    {"nvdla.pixel", "int8 uint8 int16 uint16 fp16", 0},
};

static const lc_plugin kPlugin = {LC_ABI_MAJOR, LC_ABI_MINOR, sizeof(lc_plugin), PLUGIN_NAME,
                                  kCapabilities, sizeof kCapabilities / sizeof kCapabilities[0],
                                  px_supports, px_size, px_offset, px_pack, px_unpack};

LC_EXPORT const lc_plugin* layoutcheck_plugin_v1(void) { return &kPlugin; }

/* A layoutcheck plugin in plain C: the CATLASS TLA matrix formats
 * (tla.rowmajor, tla.colmajor, tla.zN, tla.nZ, tla.zZ, tla.nN).
 *
 * A fractal is 16 x C0 (z inside: filled row by row) or C0 x 16 (n inside:
 * column by column), C0 = 32 bytes / element size; the upper-case letter is
 * the order of the fractals (Z: along the rows, N: down the columns). The
 * matrix is padded with 0 to whole fractals. The mutants in mutants/ reuse
 * this file with one bug switched on (TLA_MUTANT_*). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "layoutcheck/c_api.h"

typedef struct {
  int fractal;                 /* 0: row-/column-major */
  int col_major, z_inside, z_outside;
  uint64_t rows, cols, bytes;
  uint64_t fh, fw, R, C;       /* fractal height/width, fractal rows/columns */
} format;

static lc_status plan(const lc_case* c, format* f, char* why, size_t n) {
  const char* name = c->layout_name;
  memset(f, 0, sizeof *f);
  if (strncmp(name, "tla.", 4) != 0) return snprintf(why, n, "this plugin implements tla formats only"), LC_UNSUPPORTED;
  name += 4;
  /* The notation layouts (any number of modes) are tla_layout_plugin.c's. */
  if (strcmp(name, "layout") == 0 || strcmp(name, "tile") == 0) {
    return snprintf(why, n, "%s is not implemented by this plugin", c->layout_name), LC_UNSUPPORTED;
  }
  if (c->rank != 2 || c->shape[0] <= 0 || c->shape[1] <= 0) return snprintf(why, n, "a rows x cols matrix"), LC_INVALID;
  if (c->dtype_bits % 8) return snprintf(why, n, "whole-byte elements only"), LC_INVALID;
  /* int8x4, fp32x2, ...: packed storage types, not an ElemType of a layout. */
  if (strchr(c->dtype, 'x')) return snprintf(why, n, "%s is a packed storage type", c->dtype), LC_INVALID;
  f->rows = (uint64_t)c->shape[0], f->cols = (uint64_t)c->shape[1], f->bytes = c->dtype_bits / 8;
  if (strcmp(name, "rowmajor") == 0) return LC_OK;
  if (strcmp(name, "colmajor") == 0) return f->col_major = 1, LC_OK;
  if (strcmp(name, "zN") && strcmp(name, "nZ") && strcmp(name, "zZ") && strcmp(name, "nN")) {
    return snprintf(why, n, "%s is not implemented by this plugin", c->layout_name), LC_UNSUPPORTED;
  }
  {
    const char* c0_text = lc_param(c, "c0");
    const char* per_text = lc_param(c, "c0_per_fractal");
    uint64_t c0 = c0_text ? strtoull(c0_text, NULL, 10) : 0, per = per_text ? strtoull(per_text, NULL, 10) : 16;
#ifdef TLA_MUTANT_IGNORE_C0_PER_FRACTAL
    per = 16; /* the bug: the fractal is always 16 C0 rows/columns, the c0_per_fractal parameter is ignored */
    (void)per_text;
#endif
#ifdef TLA_MUTANT_C0_16_BYTES
    if (c0 == 0) c0 = 16 / f->bytes; /* the bug: a 16-byte C0 */
#else
    if (c0 == 0) c0 = 32 / f->bytes;
#endif
    if (c0 == 0) c0 = 1;
    f->fractal = 1;
    f->z_inside = name[0] == 'z';
    f->z_outside = name[1] == 'Z';
#ifdef TLA_MUTANT_ZN_AS_NZ
    if (strcmp(name, "zN") == 0) f->z_inside = 0, f->z_outside = 1; /* the bug: zN read as nZ */
#endif
    f->fh = f->z_inside ? per : c0;
    f->fw = f->z_inside ? c0 : per;
#ifdef TLA_MUTANT_FLOOR_BLOCKS
    f->R = f->rows / f->fh + (f->rows < f->fh); /* the bug: floor instead of ceil for the fractal count */
    f->C = f->cols / f->fw + (f->cols < f->fw);
#else
    f->R = (f->rows + f->fh - 1) / f->fh;
    f->C = (f->cols + f->fw - 1) / f->fw;
#endif
  }
  return LC_OK;
}

static uint64_t elements(const format* f) {
  return f->fractal ? f->fh * f->fw * f->R * f->C : f->rows * f->cols;
}

static uint64_t element_of(const format* f, uint64_t r, uint64_t c) {
  uint64_t fr, fc, ir, ic, inner, outer;
#ifdef TLA_MUTANT_COLMAJOR_ROW_STRIDE
  if (!f->fractal) return f->col_major ? c * f->cols + r : r * f->cols + c; /* the bug: column-major leading dimension = cols */
#else
  if (!f->fractal) return f->col_major ? c * f->rows + r : r * f->cols + c;
#endif
  fr = r / f->fh, ir = r % f->fh, fc = c / f->fw, ic = c % f->fw;
#ifdef TLA_MUTANT_N_INSIDE_ROW_STRIDE
  inner = f->z_inside ? ir * f->fw + ic : ic * f->fw + ir; /* the bug: n inside steps columns by the fractal width */
#else
  inner = f->z_inside ? ir * f->fw + ic : ic * f->fh + ir;
#endif
#ifdef TLA_MUTANT_FRACTAL_COLUMN_STRIDE_8
  /* the bug: down the columns (N outside), the stride between fractal columns is
   * taken from an L0 tile of at most 8 fractals: wrong only past the 8th fractal row */
  outer = f->z_outside ? fr * f->C + fc : fc * (f->R < 8 ? f->R : 8) + fr;
#else
  outer = f->z_outside ? fr * f->C + fc : fc * f->R + fr;
#endif
  return outer * f->fh * f->fw + inner;
}

static lc_status tla_supports(const lc_case* c, char* why, size_t n) {
  format f;
  return plan(c, &f, why, n);
}

static lc_status tla_size(const lc_case* c, uint64_t* bytes) {
  format f;
  char why[128];
  lc_status s = plan(c, &f, why, sizeof why);
  if (s == LC_OK) *bytes = elements(&f) * f.bytes;
  return s;
}

static lc_status tla_offset(const lc_case* c, const int64_t* at, uint64_t* bits) {
  format f;
  char why[128];
  lc_status s = plan(c, &f, why, sizeof why);
  if (s == LC_OK) *bits = element_of(&f, (uint64_t)at[0], (uint64_t)at[1]) * f.bytes * 8;
  return s;
}

static lc_status walk(const lc_case* c, uint8_t* logical, uint8_t* physical, size_t physical_size, int pack) {
  format f;
  char why[128];
  uint64_t r, col;
  lc_status s = plan(c, &f, why, sizeof why);
  if (s != LC_OK) return s;
  if (physical_size != elements(&f) * f.bytes) return LC_ERROR;
#ifndef TLA_MUTANT_PADDING_NOT_ZEROED /* the bug: the fractal padding is left as it was */
  if (pack) memset(physical, 0, physical_size);
#endif
  for (r = 0; r < f.rows; ++r) {
    for (col = 0; col < f.cols; ++col) {
      uint8_t* p = physical + element_of(&f, r, col) * f.bytes;
      uint8_t* l = logical + (r * f.cols + col) * f.bytes;
      if (pack) memcpy(p, l, f.bytes);
      else memcpy(l, p, f.bytes);
    }
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
    {"tla.rowmajor", "*", 0}, {"tla.colmajor", "*", 0}, {"tla.zN", "*", 0},
    {"tla.nZ", "*", 0},       {"tla.zZ", "*", 0},       {"tla.nN", "*", 0},
};

#ifndef TLA_PLUGIN_NAME
#define TLA_PLUGIN_NAME "tla-c-example"
#endif

static const lc_plugin kPlugin = {LC_ABI_MAJOR, LC_ABI_MINOR, sizeof(lc_plugin), TLA_PLUGIN_NAME,
                                  kCapabilities, sizeof kCapabilities / sizeof kCapabilities[0],
                                  tla_supports, tla_size, tla_offset, tla_pack, tla_unpack};

LC_EXPORT const lc_plugin* layoutcheck_plugin_v1(void) { return &kPlugin; }

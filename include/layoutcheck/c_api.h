/* layoutcheck/c_api.h — the plugin ABI: bring your own layout implementation.
 *
 * A plugin is a shared library exporting one function,
 *
 *     const lc_plugin* layoutcheck_plugin_v1(void);
 *
 * that returns a static table: ABI version, its own size, a name, the
 * capabilities it claims, and function pointers. layoutcheck loads it with
 * dlopen and checks it against the reference:
 *
 *     layoutcheck check --impl ./libmine.so --layout 'tpu*' --seconds 30
 *
 * Every call receives an lc_case: the canonical layout text, the layout name
 * and its resolved parameters (defaults filled in), the logical dtype and the
 * logical shape. Logical buffers are dense row-major over the shape,
 * little-endian elements; physical buffers are size_bytes long. pack writes
 * every element byte and every byte the document fixes (padding values it
 * states); bytes the document leaves free may hold anything their constraint
 * allows (`layoutcheck describe` lists them; include/layoutcheck/byte_rules.h).
 *
 * Pure C, no exceptions, no allocation across the boundary. A missing optional
 * function (offset_bits, and every member ABI 1.1 added) is NULL; the host
 * treats it as unsupported.
 *
 * ABI 1.1 appends optional members after `unpack` (see "ABI 1.1" below):
 * precision conversions, NVDLA sparse weight compression and NVDLA Winograd
 * weight conversion, phase 1. A 1.0 plugin (struct_size ends at `unpack`)
 * still loads and runs: the host reads a member only when struct_size covers
 * it. A plugin claims them with capabilities named
 *
 *     convert.ieee  convert.nvdla  convert.nvdla-int  convert.nvdla-float
 *                                                      dtypes: "fp32>fp16 fp16>fp32" (from>to pairs)
 *     nvdla.sparse                                     dtypes: weight dtypes ("int8 fp16")
 *     nvdla.winograd.phase1                            dtypes: weight dtypes ("int8 int16 fp16")
 *
 * and `layoutcheck check --impl ./libmine.so --layout 'convert.*'` (or
 * 'nvdla.sparse', 'nvdla.winograd.phase1') checks them against the reference.
 *
 * ABI 1.2 appends one more optional member, offset_bits_tuple: the offset of
 * a nested coordinate of a CATLASS TLA layout, given as IntTuple text in the
 * document's notation ("((1,0),(1,1))" for the coordinate (1,5) of
 * ((4,2),(4,3)):((4,16),(1,32))). `layoutcheck offset --at '((1,0),(1,1))'`
 * and the oracle lines `offset ((1,0),(1,1)) = N` (`layoutcheck oracle`) call it;
 * a plugin without it answers nested coordinates LC_UNSUPPORTED.
 * Minimal plugin:
 *
 *     static lc_status my_supports(const lc_case* c, char* why, size_t n) {
 *       if (strcmp(c->layout_name, "tpu.continuous") != 0) {
 *         snprintf(why, n, "only tpu.continuous");
 *         return LC_UNSUPPORTED;
 *       }
 *       return LC_OK;
 *     }
 *     ...
 *     static const lc_plugin kPlugin = {LC_ABI_MAJOR, LC_ABI_MINOR, sizeof(lc_plugin), "mine",
 *                                       kCaps, 1, my_supports, my_size, NULL, my_pack, my_unpack};
 *     LC_EXPORT const lc_plugin* layoutcheck_plugin_v1(void) { return &kPlugin; }
 */
#ifndef LAYOUTCHECK_C_API_H_
#define LAYOUTCHECK_C_API_H_

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define LC_ABI_MAJOR 1u
#define LC_ABI_MINOR 2u
#define LC_PLUGIN_ENTRY "layoutcheck_plugin_v1"

#if defined(__GNUC__)
#define LC_EXPORT __attribute__((visibility("default")))
#else
#define LC_EXPORT
#endif

typedef enum lc_status {
  LC_OK = 0,
  LC_INVALID = 1,      /* the case breaks a rule of the document */
  LC_UNSUPPORTED = 2,  /* a valid case this plugin does not implement */
  LC_ERROR = 3         /* anything else (a bug, a resource) */
} lc_status;

typedef struct lc_case {
  const char* layout;             /* canonical text, e.g. "tpu.aligned(npus=4,lmem=1024)" */
  const char* layout_name;        /* "tpu.aligned" */
  uint32_t param_count;           /* every declared parameter, defaults filled in */
  const char* const* param_keys;  /* "npus", "lmem", ... */
  const char* const* param_values;/* "4", "1024", ... (integers in decimal) */
  const char* dtype;              /* "fp32" */
  uint32_t dtype_bits;            /* 32 */
  uint32_t rank;
  const int64_t* shape;           /* logical extents, outermost first */
} lc_case;

/* What the plugin claims to implement. The run fails when a claimed case is
 * answered LC_UNSUPPORTED, and reports what was exercised. */
typedef struct lc_capability {
  const char* layout_glob;  /* "tpu.*", "htp.crouton" (* and ? wildcards) */
  const char* dtypes;       /* space-separated, or "*" */
  int64_t max_extent;       /* largest logical extent claimed, 0 = any */
} lc_capability;

/* ---- ABI 1.1 ------------------------------------------------------------
 * One precision conversion (include/layoutcheck/precision.h): src holds
 * src_bytes / sizeof(from) little-endian values, dst the same count of `to`
 * values. Fields a rule does not use hold their defaults (unit "conv",
 * flush_nan 0, offset 0, scale 1, truncate "nearest-even"). */
typedef struct lc_convert_case {
  const char* rule;      /* "ieee" | "nvdla" | "nvdla-int" | "nvdla-float" */
  const char* from;      /* dtype names as the CLI spells them: "fp32", "fp16", "int8", ... */
  const char* to;
  const char* unit;      /* nvdla: "conv", "conv-winograd", "sdp", "cdp", "pdp", "pdp-minmax"; nvdla-float: "conv", "sdp" */
  int32_t flush_nan;     /* nvdla, nvdla-float: 1 = input NaNs are +0 */
  int32_t offset;        /* nvdla-int, nvdla-float: offset register */
  float scale;           /* nvdla-int, nvdla-float: scaling factor */
  const char* truncate;  /* nvdla-int, nvdla-float: "nearest-away" | "nearest-even" | "toward-zero" */
} lc_convert_case;

/* NVDLA sparse compression ("Sparse Compression option") of the packed weight
 * buffer of an nvdla.weight.* case (the lc_case, physical layout as pack
 * writes it) into three surfaces (include/layoutcheck/nvdla.h):
 *   wgs   one 32-bit little-endian word per kernel group (16 kernels for
 *         int16/fp16, 32 for int8): that group's compressed bytes; 0s to 128 bytes
 *   wmb   one bit per weight element, bit i = bit (i % 8) of byte i / 8; 0s to 128 bytes
 *   data  the non-zero elements packed compactly; 0s to 128 bytes
 * The host passes wgs and wmb buffers of exactly their size and a data buffer
 * of data_capacity bytes (enough for every element); compress stores the size
 * of the data surface it wrote (128-byte aligned) in *data_size. */
typedef struct lc_sparse_surfaces {
  void* wgs;
  size_t wgs_size;
  void* wmb;
  size_t wmb_size;
  void* data;
  size_t data_size;      /* compress: the capacity; decompress: the surface's size */
} lc_sparse_surfaces;

/* NVDLA Winograd weight conversion, phase 1 ("Basic Weight for Winograd
 * Convolution"): dense row-major (K, C, R, S) kernels of `dtype`. */
typedef struct lc_winograd_case {
  const char* dtype;     /* "int8" | "int16" | "fp16" */
  uint32_t dtype_bits;
  int64_t shape[4];      /* K, C, R, S */
  int64_t stride;        /* extend: the convolution stride; transform: 1 */
} lc_winograd_case;

typedef struct lc_plugin {
  uint32_t abi_major;       /* LC_ABI_MAJOR the plugin was built against */
  uint32_t abi_minor;
  uint32_t struct_size;     /* sizeof(lc_plugin) as the plugin compiled it */
  const char* name;
  const lc_capability* capabilities;
  uint32_t capability_count;
  lc_status (*supports)(const lc_case* c, char* reason, size_t reason_size);
  lc_status (*size_bytes)(const lc_case* c, uint64_t* bytes);
  lc_status (*offset_bits)(const lc_case* c, const int64_t* coord, uint64_t* bits); /* optional */
  lc_status (*pack)(const lc_case* c, const void* logical, size_t logical_size, void* physical,
                    size_t physical_size);
  lc_status (*unpack)(const lc_case* c, const void* physical, size_t physical_size, void* logical,
                      size_t logical_size);
  /* ---- ABI 1.1: optional (NULL), read only when struct_size covers them ---- */
  lc_status (*convert)(const lc_convert_case* c, const void* src, size_t src_bytes,
                       void* dst, size_t dst_bytes);
  /* packed -> surfaces; *data_size = bytes of the data surface written */
  lc_status (*sparse_compress)(const lc_case* weights, const void* packed, size_t packed_size,
                               const lc_sparse_surfaces* out, uint64_t* data_size);
  /* surfaces -> packed (every byte of the packed buffer written) */
  lc_status (*sparse_decompress)(const lc_case* weights, const lc_sparse_surfaces* in,
                                 void* packed, size_t packed_size);
  /* channel extension: (K, C, R, S) with stride s -> (K, s*s*C, 3, 3) */
  lc_status (*winograd_extend)(const lc_winograd_case* c, const void* src, size_t src_bytes,
                               void* dst, size_t dst_bytes);
  /* U = G W G^T: (K, C, 3, 3) -> (K, C, 4, 4) */
  lc_status (*winograd_transform)(const lc_winograd_case* c, const void* src, size_t src_bytes,
                                  void* dst, size_t dst_bytes);
  /* ---- ABI 1.2: optional (NULL), read only when struct_size covers it ---- */
  /* Offset in bits of a nested coordinate: `coord` is IntTuple text, one part
   * per top-level mode of the layout, each an integer or a tuple congruent
   * with its mode (catlass-tla-layouts.txt, "Layout 坐标与索引"). */
  lc_status (*offset_bits_tuple)(const lc_case* c, const char* coord, uint64_t* bits);
} lc_plugin;

/* struct_size of a plugin built against ABI 1.0 (the table ends at unpack). */
#define LC_PLUGIN_SIZE_1_0 (offsetof(lc_plugin, unpack) + sizeof(void (*)(void)))
/* struct_size of a plugin built against ABI 1.1 (the table ends at winograd_transform). */
#define LC_PLUGIN_SIZE_1_1 (offsetof(lc_plugin, winograd_transform) + sizeof(void (*)(void)))

typedef const lc_plugin* (*lc_plugin_entry_fn)(void);

/* Reads parameter `key` of a case; NULL if the layout has no such parameter. */
static inline const char* lc_param(const lc_case* c, const char* key) {
  uint32_t i;
  for (i = 0; i < c->param_count; ++i) {
    const char* a = c->param_keys[i];
    const char* b = key;
    while (*a && *a == *b) ++a, ++b;
    if (*a == 0 && *b == 0) return c->param_values[i];
  }
  return 0;
}

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif  /* LAYOUTCHECK_C_API_H_ */

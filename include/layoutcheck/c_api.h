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
 * function (offset_bits) is NULL; the host treats it as unsupported.
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
#define LC_ABI_MINOR 0u
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
} lc_plugin;

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

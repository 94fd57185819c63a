/* A compiler's NVDLA precision tables and SDP layer rules as a library, for
 * `layoutcheck precision nvdla --lib libprecision_tables_example.so`: the two
 * functions of layoutcheck/nvdla_precision_compat.h, written the way a compiler
 * would hold them: a table per layer of the conversions it allows, and the
 * layer check as the prose of "Precision Conversion", "Batch Normalization Data
 * Format" and "Element-Wise Data Format" reads, on top of those tables.
 *
 * Built with a define, the same file is a realistic mistake the check must catch:
 *   PRECISION_MUTANT_SDP_INT8_FP16   the SDP converts int8 feature data to fp16 (an Invalid case)
 *   PRECISION_MUTANT_SDP_PIPELINE    the SDP computes fp16 input in fp16, not fp32
 *   PRECISION_MUTANT_IMAGE_FP16      fp16 images convert to int8/int16 like integer images
 *   LAYER_MUTANT_ON_FLYING_ANY_DEPTH on-flying, the SDP converts across bit depths (int8 -> int16)
 *   LAYER_MUTANT_BN_KEEPS_INT16      BN data stays INT16 when the layer converts INT16 -> INT8
 *   LAYER_MUTANT_EW_KEEPS_INT16      element-wise data stays INT16 when the layer converts INT16 -> INT8
 *   LAYER_TABLES_ONLY                exports nvdla_precision_supported alone
 * or a library that breaks the function's contract:
 *   LAYER_HOSTILE_CRASH              dereferences NULL on a Winograd on-flying layer
 *   LAYER_HOSTILE_BAD_RULE           sets *rule to an address that cannot be read
 *   LAYER_HOSTILE_SEVEN              returns 7 for an invalid layer
 *   LAYER_HOSTILE_HANG               never returns on an on-flying layer
 */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "layoutcheck/nvdla_precision_compat.h"

#define EXPORT __attribute__((visibility("default")))

struct conversion {
  const char* layer;
  const char* input;   /* "image" stands for image-uint8, image-int16 and image-uint16 */
  const char* output;
  const char* pipeline;
};

static const struct conversion kAllowed[] = {
    {"conv", "image", "int8", "int8"},   {"conv", "image", "int16", "int16"}, {"conv", "image", "fp16", "fp16"},
    {"conv", "image-fp16", "fp16", "fp16"},
#ifdef PRECISION_MUTANT_IMAGE_FP16
    {"conv", "image-fp16", "int8", "int8"}, {"conv", "image-fp16", "int16", "int16"},
#endif
    {"conv", "int8", "int8", "int8"},    {"conv", "int16", "int16", "int16"}, {"conv", "fp16", "fp16", "fp16"},
    {"sdp", "int8", "int8", "int32"},    {"sdp", "int8", "int16", "int32"},
#ifdef PRECISION_MUTANT_SDP_INT8_FP16
    {"sdp", "int8", "fp16", "int32"},
#endif
    {"sdp", "int16", "int8", "int32"},   {"sdp", "int16", "int16", "int32"}, {"sdp", "int16", "fp16", "int32"},
#ifdef PRECISION_MUTANT_SDP_PIPELINE
    {"sdp", "fp16", "int16", "fp16"},    {"sdp", "fp16", "fp16", "fp16"},
#else
    {"sdp", "fp16", "int16", "fp32"},    {"sdp", "fp16", "fp16", "fp32"},
#endif
    {"lrn", "int8", "int8", "int8"},     {"lrn", "int16", "int16", "int16"},  {"lrn", "fp16", "fp16", "fp16"},
    {"pdp", "int8", "int8", "int8"},     {"pdp", "int16", "int16", "int16"},  {"pdp", "fp16", "fp16", "fp16"},
};

EXPORT int nvdla_precision_supported(const char* layer, const char* input, const char* output, const char** pipeline) {
  size_t i;
  const int image = strncmp(input, "image-", 6) == 0;
  const char* key = image && strcmp(input, "image-fp16") != 0 ? "image" : input;
  /* Image input is a mode of the convolution pipeline only. */
  if (image && strcmp(layer, "conv") != 0) return -1;
  for (i = 0; i < sizeof kAllowed / sizeof kAllowed[0]; ++i) {
    const struct conversion* c = &kAllowed[i];
    if (strcmp(c->layer, layer) == 0 && strcmp(c->input, key) == 0 && strcmp(c->output, output) == 0) {
      *pipeline = c->pipeline;
      return 1;
    }
  }
  return 0;
}

#ifndef LAYER_TABLES_ONLY
/* ---- the SDP layer ------------------------------------------------------------ */

static int bit_depth(const char* precision) { return strcmp(precision, "int8") == 0 ? 8 : 16; }
static int is_image(const char* format) { return strncmp(format, "image-", 6) == 0; }
static int same(const char* a, const char* b) { return strcmp(a, b) == 0; }

static int broken(const char** rule, const char* id) {
#ifdef LAYER_HOSTILE_BAD_RULE
  (void)id;
  *rule = (const char*)(uintptr_t)0x10;
  return 0;
#elif defined(LAYER_HOSTILE_SEVEN)
  *rule = id;
  return 7;
#else
  *rule = id;
  return 0;
#endif
}

/* Whether the data surface's PROC_PRECISION is one the layer processes at. */
static int processed_at_layer_precision(const struct nvdla_layer* l, const struct nvdla_sdp_surface* s) {
  const int converts_8_16 = bit_depth(l->input) != bit_depth(l->output);
#ifdef LAYER_MUTANT_BN_KEEPS_INT16
  if (same(s->layout, "nvdla.sdp.channel") && same(s->use, "bn") && same(l->input, "int16") && same(s->proc, "int16")) return 1;
#endif
#ifdef LAYER_MUTANT_EW_KEEPS_INT16
  if (same(s->layout, "nvdla.sdp.element") && (same(s->use, "ew") || same(s->use, "ew2")) && same(l->input, "int16") &&
      same(s->proc, "int16")) {
    return 1;
  }
#endif
  /* "when the layer is running from INT16 to INT8 or INT8 to INT16 precision conversion, ...
   * data need set to processing precision which is always INT8" */
  if (converts_8_16) return same(s->proc, "int8");
  /* No conversion: the layer's precision; int16 <-> fp16 the document leaves open: either. */
  return same(s->proc, l->input) || same(s->proc, l->output);
}

EXPORT int nvdla_layer_supported(const struct nvdla_layer* l, const char** rule) {
  const char* pipeline = NULL;
  unsigned i;
  /* The SDP reads feature data; image input is a convolution pipeline mode. */
  if (is_image(l->input)) return broken(rule, "nvdla.precision/sdp-feature-input");
  if (!l->on_flying) {
    /* Offline, the SDP table decides. */
    if (nvdla_precision_supported("sdp", l->input, l->output, &pipeline) != 1) {
      return broken(rule, "nvdla.precision/sdp-offline-table");
    }
  } else {
#ifdef LAYER_HOSTILE_CRASH
    if (same(l->conv_mode, "winograd")) *(volatile int*)NULL = 1;
#endif
#ifdef LAYER_HOSTILE_HANG
    for (volatile int spin = 1; spin;) {
    }
#endif
    /* An image convolution takes an image, the others feature data. */
    if (is_image(l->conv_input) != same(l->conv_mode, "image")) return broken(rule, "nvdla.precision/conv-mode-input");
    if (nvdla_precision_supported("conv", l->conv_input, l->conv_output, &pipeline) != 1) {
      return broken(rule, "nvdla.precision/conv-table");
    }
    /* "The CDMA and SDP convert precision individually": the SDP takes what the
     * convolution pipeline puts out ... */
    if (!same(l->input, l->conv_output)) return broken(rule, "nvdla.precision/convert-individually");
    /* ... "but the input precision and output precision should have the same bit-depth" */
#ifndef LAYER_MUTANT_ON_FLYING_ANY_DEPTH
    if (bit_depth(l->input) != bit_depth(l->output)) return broken(rule, "nvdla.precision/on-flying-same-bit-depth");
#endif
    /* "free conversion of int16 <-> fp16 and int8 <-> int16 for DC mode only" */
    if (!same(l->input, l->output) && !same(l->conv_mode, "dc")) return broken(rule, "nvdla.precision/sdp-convert-dc-only");
  }
  for (i = 0; i < l->surface_count; ++i) {
    const struct nvdla_sdp_surface* s = &l->surfaces[i];
    if (!same(s->layout, "nvdla.sdp.channel") && !same(s->layout, "nvdla.sdp.element")) {
      return broken(rule, "nvdla.precision/sdp-data-layout");
    }
    if (!processed_at_layer_precision(l, s)) return broken(rule, "nvdla.precision/sdp-data-processing-precision");
  }
  return 1;
}
#endif

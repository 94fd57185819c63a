/* A compiler's NVDLA precision tables as a library, for
 * `layoutcheck precision nvdla --lib libprecision_tables_example.so`: the
 * function of layoutcheck/nvdla_precision_compat.h, written the way a compiler
 * would hold it, as a table per layer of the conversions it allows.
 *
 * Built with a define, the same file is a realistic mistake the check must catch:
 *   PRECISION_MUTANT_SDP_INT8_FP16   the SDP converts int8 feature data to fp16 (an Invalid case)
 *   PRECISION_MUTANT_SDP_PIPELINE    the SDP computes fp16 input in fp16, not fp32
 *   PRECISION_MUTANT_IMAGE_FP16      fp16 images convert to int8/int16 like integer images
 */
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

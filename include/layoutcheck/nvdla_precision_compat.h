/* layoutcheck/nvdla_precision_compat.h — a compiler's own NVDLA precision tables,
 * checked against the document's ("Precision Conversion") by
 *
 *     layoutcheck precision nvdla --lib ./libmine.so
 *
 * The library exports, with C linkage, the function below. layoutcheck calls it
 * in a child process on every (layer, input, output) of the four tables, and
 * on the image inputs of the three tables that have none, and compares each
 * answer with the reference's row (examples/plugins/precision_tables_example.c).
 *
 *   layer   "conv" | "sdp" | "lrn" | "pdp"
 *   input   "image-uint8" | "image-int16" | "image-uint16" | "image-fp16" | "int8" | "int16" | "fp16"
 *   output  "int8" | "int16" | "fp16"
 *
 * Returns 1 when the layer converts `input` to `output`, and then sets *pipeline
 * to the table's "real precision in pipeline" ("int8", "int16", "fp16", "int32",
 * "fp32"; a static string); 0 for an "Invalid case"; -1 when the layer's table
 * has no such input (image input is a convolution pipeline mode). For example
 *
 *     nvdla_precision_supported("sdp", "fp16", "int16", &p) == 1, p = "fp32"
 *     nvdla_precision_supported("conv", "image-fp16", "int8", &p) == 0
 *     nvdla_precision_supported("pdp", "image-uint8", "int8", &p) == -1
 */
#ifndef LAYOUTCHECK_NVDLA_PRECISION_COMPAT_H_
#define LAYOUTCHECK_NVDLA_PRECISION_COMPAT_H_

#ifdef __cplusplus
extern "C" {
#endif

typedef int (*nvdla_precision_supported_fn)(const char* layer, const char* input, const char* output,
                                            const char** pipeline);
#define NVDLA_PRECISION_SUPPORTED_SYMBOL "nvdla_precision_supported"

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif  /* LAYOUTCHECK_NVDLA_PRECISION_COMPAT_H_ */

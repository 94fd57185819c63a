/* layoutcheck/nvdla_precision_compat.h — a compiler's own NVDLA precision tables
 * and SDP layer rules, checked against the document's ("Precision Conversion") by
 *
 *     layoutcheck precision nvdla --lib ./libmine.so
 *
 * The library exports, with C linkage, one or both of the functions below.
 * layoutcheck calls the first in a child process on every (layer, input,
 * output) of the four tables, and on the image inputs of the three tables that
 * have none, and compares each answer with the reference's row
 * (examples/plugins/precision_tables_example.c).
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
 *
 * A second, optional function decides whether an SDP layer is valid: its
 * precisions offline or on-flying behind a convolution ("Precision Conversion")
 * and the processing precision of the SDP data it reads ("Batch Normalization
 * Data Format", "Element-Wise Data Format"). When the library exports it,
 * `precision nvdla --lib` asks it every layer of the space below and compares
 * each answer, and the rule it names, with the reference's
 * (nvdla_layer_supported in examples/plugins/precision_tables_example.c):
 *
 *   on_flying    0 offline (the SDP reads feature data from memory), 1 on-flying
 *   input        the SDP's input precision; "int8" | "int16" | "fp16", or one of the
 *                image inputs above (which the SDP never takes)
 *   output       the SDP's output precision: "int8" | "int16" | "fp16"
 *   conv_mode    on-flying: the convolution in front, "dc" | "winograd" | "image";
 *   conv_input   its input format (the names of input), and
 *   conv_output  its output precision ("int8" | "int16" | "fp16"); all three NULL offline
 *   surfaces     the SDP data the layer reads, surface_count of them (0, 1 or 2 asked):
 *     layout     "nvdla.sdp.channel" (bias, PReLU, BN data), "nvdla.sdp.element"
 *                (per-element bias, element-wise data), or another layout's name
 *                such as "nvdla.feature" for data that is not SDP data
 *     use        nvdla.sdp.channel: "bias" | "prelu" | "bn"; nvdla.sdp.element:
 *                "bias" | "ew" | "ew2"; "" for another layout
 *     dtype      the component type: "int8" | "int16" | "fp16"
 *     proc       the precision it is processed at (PROC_PRECISION): "int8" | "int16" |
 *                "fp16"; asked only with a dtype the SDP data layouts accept with it
 *                (fp16 components go with fp16 processing and only with it)
 *
 * Returns 1 when the layer is valid; 0 when it is not, and then sets *rule to the
 * id (a static string) of the first rule it breaks, in this order:
 *
 *   nvdla.precision/sdp-feature-input          the SDP's input is an image format
 *   offline:
 *   nvdla.precision/sdp-offline-table          (input, output) is an Invalid case of the SDP table
 *   on-flying:
 *   nvdla.precision/conv-mode-input            image input without image mode, or image mode without it
 *   nvdla.precision/conv-table                 (conv_input, conv_output) is an Invalid case of the
 *                                              convolution table
 *   nvdla.precision/convert-individually       input is not conv_output ("The CDMA and SDP convert
 *                                              precision individually")
 *   nvdla.precision/on-flying-same-bit-depth   input and output differ in bit depth
 *   nvdla.precision/sdp-convert-dc-only        input is not output behind a Winograd or image convolution
 *   then each surface in turn:
 *   nvdla.precision/sdp-data-layout            the surface is not SDP data
 *   nvdla.precision/sdp-data-processing-precision
 *                                              proc is not the layer's processing precision: the
 *                                              layer's precision when it does not convert, INT8 when
 *                                              it converts between INT16 and INT8, input or output
 *                                              between INT16 and FP16
 *
 * For example, with no surfaces,
 *
 *     {on_flying 1, input "int8", output "int16", conv "dc"/"int8"/"int8"}  -> 0,
 *         *rule = "nvdla.precision/on-flying-same-bit-depth"
 *     {on_flying 0, input "int16", output "int8", one surface
 *         {"nvdla.sdp.channel", "bn", "int16", "int16"}}                      -> 0,
 *         *rule = "nvdla.precision/sdp-data-processing-precision"
 *     the same with proc "int8"                                               -> 1
 *
 * A disagreement prints the layer and a command that asks the library that layer
 * alone: layoutcheck precision nvdla --lib PATH.so --mode ... --input ... --output ...
 */
#ifndef LAYOUTCHECK_NVDLA_PRECISION_COMPAT_H_
#define LAYOUTCHECK_NVDLA_PRECISION_COMPAT_H_

#ifdef __cplusplus
extern "C" {
#endif

typedef int (*nvdla_precision_supported_fn)(const char* layer, const char* input, const char* output,
                                            const char** pipeline);
#define NVDLA_PRECISION_SUPPORTED_SYMBOL "nvdla_precision_supported"

struct nvdla_sdp_surface {
  const char* layout;  /* "nvdla.sdp.channel" | "nvdla.sdp.element" | another layout's name */
  const char* use;     /* "bias" | "prelu" | "bn" | "ew" | "ew2" | "" */
  const char* dtype;   /* component type: "int8" | "int16" | "fp16" */
  const char* proc;    /* PROC_PRECISION: "int8" | "int16" | "fp16" */
};

struct nvdla_layer {
  int on_flying;            /* 0 offline, 1 on-flying */
  const char* input;        /* the SDP's input precision (or an image format) */
  const char* output;       /* the SDP's output precision */
  const char* conv_mode;    /* on-flying: "dc" | "winograd" | "image"; NULL offline */
  const char* conv_input;   /* on-flying: the convolution's input format; NULL offline */
  const char* conv_output;  /* on-flying: the convolution's output precision; NULL offline */
  unsigned surface_count;
  const struct nvdla_sdp_surface* surfaces;  /* surface_count of them */
};

/* Optional. 1 valid; 0 invalid with *rule = the id of the first rule broken. */
typedef int (*nvdla_layer_supported_fn)(const struct nvdla_layer* layer, const char** rule);
#define NVDLA_LAYER_SUPPORTED_SYMBOL "nvdla_layer_supported"

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif  /* LAYOUTCHECK_NVDLA_PRECISION_COMPAT_H_ */

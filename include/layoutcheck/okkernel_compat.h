// layoutcheck/okkernel_compat.h — the OKKernel helper names of the Sophgo TPU document.
//
// For code being ported from OKKernel: the document's helpers, spelled as the
// document spells them (okk_channle_num_per_npu included), over a dim4 of
// element strides. The NPU count and EU size are those of the chip the code
// targets; by default bm1684 (64 NPUs, 128-byte EU).
//
//   okk_compat_config cfg = okk_compat_bm1684();
//   cfg.npu_num = 4;                                   // the document's illustrations
//   dim4 shape = {2, 3, 4, 5}, stride;
//   okk_128_byte_aligned_stride_for_32bit(&stride, 2, &shape, &cfg);
//   // stride = {64, 32, 5, 1}: N stride 32 * ceil((2 + 3) / 4), C stride 32
#pragma once

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
  int n, c, h, w;
} dim4;

typedef struct {
  int npu_num;   // X
  int eu_bytes;  // bytes of one EU (128 on bm1684, 64 on bm1684x)
} okk_compat_config;

static inline okk_compat_config okk_compat_bm1684(void) {
  okk_compat_config c = {64, 128};
  return c;
}
static inline okk_compat_config okk_compat_bm1684x(void) {
  okk_compat_config c = {64, 64};
  return c;
}

// Channels per NPU of a tensor starting at NPU start_idx: ceil((start_idx + C) / X).
static inline int okk_channle_num_per_npu(int start_idx, int num_channels, const okk_compat_config* cfg) {
  return (start_idx + num_channels + cfg->npu_num - 1) / cfg->npu_num;
}

static inline void okk_compat_aligned_stride(dim4* stride, int start_idx, const dim4* shape, int elem_bytes,
                                             const okk_compat_config* cfg) {
  int per_eu = cfg->eu_bytes / elem_bytes;
  stride->w = 1;
  stride->h = shape->w;
  stride->c = (shape->h * shape->w + per_eu - 1) / per_eu * per_eu;
  stride->n = stride->c * okk_channle_num_per_npu(start_idx, shape->c, cfg);
}

static inline void okk_128_byte_aligned_stride_for_32bit(dim4* stride, int start_idx, const dim4* shape,
                                                         const okk_compat_config* cfg) {
  okk_compat_aligned_stride(stride, start_idx, shape, 4, cfg);
}
static inline void okk_128_byte_aligned_stride_for_16bit(dim4* stride, int start_idx, const dim4* shape,
                                                         const okk_compat_config* cfg) {
  okk_compat_aligned_stride(stride, start_idx, shape, 2, cfg);
}
static inline void okk_128_byte_aligned_stride_for_8bit(dim4* stride, int start_idx, const dim4* shape,
                                                        const okk_compat_config* cfg) {
  okk_compat_aligned_stride(stride, start_idx, shape, 1, cfg);
}

static inline void okk_compact_stride(dim4* stride, int start_idx, const dim4* shape, const okk_compat_config* cfg) {
  stride->w = 1;
  stride->h = shape->w;
  stride->c = shape->h * shape->w;
  stride->n = stride->c * okk_channle_num_per_npu(start_idx, shape->c, cfg);
}

static inline void okk_continuous_stride(dim4* stride, const dim4* shape) {
  stride->w = 1;
  stride->h = shape->w;
  stride->c = shape->h * shape->w;
  stride->n = shape->c * shape->h * shape->w;
}

#ifdef __cplusplus
}  // extern "C"
#endif

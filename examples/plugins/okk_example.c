/* The okk_* functions of the Sophgo TPU document as a library, for
 * `layoutcheck okk --lib libokk_example.so`: each function exported with C
 * linkage and the signature of layoutcheck/okkernel_compat.h, here by wrapping
 * that header's inline functions (renamed while it is included).
 *
 * Built with a define, the same file is a realistic mistake that the check
 * must catch, or a library it must report clearly:
 *   OKK_MUTANT_COMPACT_FLOOR  okk_compact_stride: channels per NPU (start + C) / X, without the ceil
 *   OKK_MUTANT_ALIGNED_BYTES  aligned strides: H*W rounded up to the EU in bytes, not in elements
 *   OKK_MUTANT_IGNORE_START   okk_channle_num_per_npu: ceil(C / X), as if every tensor started at NPU 0
 *   OKK_PARTIAL               exports only okk_channle_num_per_npu and okk_continuous_stride
 *   OKK_CRASH                 okk_compact_stride writes a second dim4 past its output
 *   OKK_HANG                  okk_continuous_stride never returns
 */
#define okk_channle_num_per_npu compat_channle_num_per_npu
#define okk_continuous_stride compat_continuous_stride
#define okk_128_byte_aligned_stride_for_32bit compat_aligned_stride_for_32bit
#define okk_128_byte_aligned_stride_for_16bit compat_aligned_stride_for_16bit
#define okk_128_byte_aligned_stride_for_8bit compat_aligned_stride_for_8bit
#define okk_compact_stride compat_compact_stride
#include "layoutcheck/okkernel_compat.h"
#undef okk_channle_num_per_npu
#undef okk_continuous_stride
#undef okk_128_byte_aligned_stride_for_32bit
#undef okk_128_byte_aligned_stride_for_16bit
#undef okk_128_byte_aligned_stride_for_8bit
#undef okk_compact_stride

#define OKK_EXPORT __attribute__((visibility("default")))

OKK_EXPORT int okk_channle_num_per_npu(int start_idx, int num_channels, const okk_compat_config* cfg) {
#ifdef OKK_MUTANT_IGNORE_START
  (void)start_idx;
  return (num_channels + cfg->npu_num - 1) / cfg->npu_num;
#else
  return compat_channle_num_per_npu(start_idx, num_channels, cfg);
#endif
}

OKK_EXPORT void okk_continuous_stride(dim4* stride, const dim4* shape) {
#ifdef OKK_HANG
  volatile int spin = 1;
  while (spin) {
  }
#endif
  compat_continuous_stride(stride, shape);
}

#ifndef OKK_PARTIAL
#ifdef OKK_MUTANT_ALIGNED_BYTES
static void round_to_eu_bytes(dim4* stride, int start_idx, const dim4* shape, const okk_compat_config* cfg) {
  stride->c = (shape->h * shape->w + cfg->eu_bytes - 1) / cfg->eu_bytes * cfg->eu_bytes;
  stride->n = stride->c * compat_channle_num_per_npu(start_idx, shape->c, cfg);
}
#define OKK_ALIGNED_MUTATION(stride, start_idx, shape, cfg) round_to_eu_bytes(stride, start_idx, shape, cfg)
#else
#define OKK_ALIGNED_MUTATION(stride, start_idx, shape, cfg) (void)0
#endif

OKK_EXPORT void okk_128_byte_aligned_stride_for_32bit(dim4* stride, int start_idx, const dim4* shape,
                                                      const okk_compat_config* cfg) {
  compat_aligned_stride_for_32bit(stride, start_idx, shape, cfg);
  OKK_ALIGNED_MUTATION(stride, start_idx, shape, cfg);
}

OKK_EXPORT void okk_128_byte_aligned_stride_for_16bit(dim4* stride, int start_idx, const dim4* shape,
                                                      const okk_compat_config* cfg) {
  compat_aligned_stride_for_16bit(stride, start_idx, shape, cfg);
  OKK_ALIGNED_MUTATION(stride, start_idx, shape, cfg);
}

OKK_EXPORT void okk_128_byte_aligned_stride_for_8bit(dim4* stride, int start_idx, const dim4* shape,
                                                     const okk_compat_config* cfg) {
  compat_aligned_stride_for_8bit(stride, start_idx, shape, cfg);
  OKK_ALIGNED_MUTATION(stride, start_idx, shape, cfg);
}

OKK_EXPORT void okk_compact_stride(dim4* stride, int start_idx, const dim4* shape, const okk_compat_config* cfg) {
  compat_compact_stride(stride, start_idx, shape, cfg);
#ifdef OKK_MUTANT_COMPACT_FLOOR
  stride->n = stride->c * ((start_idx + shape->c) / cfg->npu_num);
#endif
#ifdef OKK_CRASH
  {
    volatile int past = 1;
    stride[past] = *stride;
  }
#endif
}
#endif

/* layoutcheck/nvdla_surface.h — a compiler's or runtime's own check of where the
 * three surfaces of NVDLA sparse-compressed weight live, checked against the
 * reference by
 *
 *     layoutcheck sparse --lib ./libmine.so [--seed N] [--cases N] [--json]
 *
 * nvdla-in-memory-data-formats.txt: "Store WGS, WMB and compressed weight into
 * three separated memory surfaces" (Sparse Compression option), and the table
 * "Requirements of alignment" (Alignment of Start Address and Stride): WGS, WMB
 * and the (compressed) weight start at 256-byte aligned addresses and their data
 * sizes are multiples of 128 bytes. The library exports, with C linkage,
 *
 *   int nvdla_sparse_surfaces_valid(const struct nvdla_sparse_surfaces* s, const char** rule);
 *
 * It returns 1 when the placement is valid (and leaves *rule alone), 0 when it
 * is not, and then sets *rule to the id of a rule the placement breaks (a static
 * string; when it breaks several, any of them):
 *
 *   nvdla.sparse/wgs-start-address-align-256   WGS start address % 256 != 0
 *   nvdla.sparse/wmb-start-address-align-256   WMB start address % 256 != 0
 *   nvdla.weight/start-address-align-256       compressed weight start address % 256 != 0
 *   nvdla.sparse/wgs-size-align-128            WGS size % 128 != 0
 *   nvdla.sparse/wmb-size-align-128            WMB size % 128 != 0
 *   nvdla.sparse/data-size-align-128           compressed weight size % 128 != 0
 *   nvdla.sparse/address-overflow              a surface ends past 2^64 (address + size > 2^64)
 *   nvdla.sparse/surfaces-overlap              two surfaces share a byte ("three separated
 *                                              memory surfaces"; a surface of size 0 holds none)
 *
 * Sizes are in bytes and may be 0 (the compressed weight of all-zero kernels).
 * Addresses and sizes are any 64-bit values: address + size can overflow. For
 * example
 *
 *   {wgs 128 at 0x0, wmb 128 at 0x100, data 256 at 0x200}      -> 1
 *   {wgs 128 at 0x0, wmb 128 at 0x180, data 256 at 0x200}      -> 0, nvdla.sparse/wmb-start-address-align-256
 *   {wgs 512 at 0x0, wmb 128 at 0x100, data 256 at 0x400}      -> 0, nvdla.sparse/surfaces-overlap
 *   {wgs 128 at 0x0, wmb 128 at 0x100, data 384 at 2^64 - 256} -> 0, nvdla.sparse/address-overflow
 *
 * layoutcheck calls it in a child process, the struct alone on its page (reading
 * past it faults and is reported), on boundary placements and on random ones.
 * examples/plugins/sparse_surfaces_example.c is a complete library.
 */
#ifndef LAYOUTCHECK_NVDLA_SURFACE_H_
#define LAYOUTCHECK_NVDLA_SURFACE_H_

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct nvdla_sparse_surfaces {
  uint64_t wgs_address, wgs_size;    /* weight group sizes: one 32-bit WGS per kernel group */
  uint64_t wmb_address, wmb_size;    /* weight mask bits: one bit per weight element */
  uint64_t data_address, data_size;  /* the compressed weight: the non-zero elements */
};

typedef int (*nvdla_sparse_surfaces_valid_fn)(const struct nvdla_sparse_surfaces* s, const char** rule);
#define NVDLA_SPARSE_SURFACES_VALID_SYMBOL "nvdla_sparse_surfaces_valid"

#ifdef __cplusplus
}  /* extern "C" */
#endif

#endif /* LAYOUTCHECK_NVDLA_SURFACE_H_ */

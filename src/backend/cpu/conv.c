/* conv.c — the CPU's convolution entries (Note [Kernel entries]): the three
 * linear maps of one conv geometry (forward, transpose, weight gradient;
 * Note [Conv geometry]) through the im2col + GEMM kernels of conv_gemm.c,
 * the integer kernels of conv_int.c, and the bias gradient. */
#include "conv_internal.h"
#include "cpu_kernels.h"

cg_status cg_cpu_conv(cg_conv_kind kind, const cg_conv_geom *g, cg_tensor *out, const cg_tensor *a, const cg_tensor *b,
                      const cg_tensor *bias) {
    cg_dtype cdt = out->dtype, adt = a->dtype, bdt = b->dtype;
    const void *bp = bias ? cg_tensor_ptr(bias) : NULL;
    if (cdt == CG_DTYPE_I64) { /* Note [Integer conv] */
        cg_conv_cpu_int(kind, g, (const int64_t *)cg_tensor_ptr(a), (const int64_t *)cg_tensor_ptr(b),
                        (const int64_t *)bp, (int64_t *)cg_tensor_ptr(out));
        return CG_OK;
    }
    if (g->channels_last) /* Note [Channels-last conv] */
        return cg_conv_cpu_nhwc(kind, cdt, adt, bdt, g, cg_tensor_ptr(a), cg_tensor_ptr(b), bp, cg_tensor_ptr(out));
    if (kind == CG_CONV_FORWARD)
        return cg_conv_cpu_forward(cdt, adt, g, cg_tensor_ptr(a), cg_tensor_ptr(b), bp, cg_tensor_ptr(out));
    if (kind == CG_CONV_TRANSPOSE)
        return cg_conv_cpu_transpose(cdt, adt, g, cg_tensor_ptr(a), cg_tensor_ptr(b), bp, cg_tensor_ptr(out));
    return cg_conv_cpu_weight_grad(cdt, adt, bdt, g, cg_tensor_ptr(a), cg_tensor_ptr(b), cg_tensor_ptr(out));
}

cg_status cg_cpu_conv_bias_grad(cg_tensor *out, const cg_tensor *g) {
    int64_t C = g->shape[1], L = 1;
    for (int d = 2; d < g->ndim; d++) L *= g->shape[d];
    if (!cg_tensor_is_contiguous(g)) /* channels-last: (N*L, C) in memory */
        return cg_conv_cpu_bias_grad_nhwc(g->dtype, g->shape[0] * L, C, cg_tensor_ptr(g), cg_tensor_ptr(out));
    cg_conv_cpu_bias_grad(g->dtype, g->shape[0], C, L, cg_tensor_ptr(g), cg_tensor_ptr(out));
    return CG_OK;
}

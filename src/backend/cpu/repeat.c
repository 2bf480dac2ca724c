/* repeat.c — the CPU's tril_triu entry (Note [Kernel entries]; the ops:
 * src/ops/repeat.c): the rows of the (batch * R) rows split across threads,
 * each row's kept band copied and the rest zeroed. */
#include "cpu_kernels.h"

#include <string.h>

typedef struct tri_job {
    const cg_tensor *x; /* (..., R, C), any strides */
    cg_tensor *out;     /* (..., R, C), contiguous */
    int64_t diag;
    bool upper;
} tri_job;

/* rows [begin, end) of the (batch * R) rows */
static void tri_rows(int64_t begin, int64_t end, void *ctx) {
    const tri_job *j = ctx;
    const cg_tensor *x = j->x;
    int nd = x->ndim;
    int64_t R = x->shape[nd - 2], C = x->shape[nd - 1];
    int64_t rs = x->strides[nd - 2], cs = x->strides[nd - 1];
    size_t isz = cg_dtype_size(x->dtype);
    const char *xb = cg_tensor_ptr(x);
    char *ob = cg_tensor_ptr(j->out);
    for (int64_t r = begin; r < end; r++) {
        int64_t b = r / R, i = r % R, xoff = i * rs;
        for (int d = nd - 3; d >= 0; d--) { /* batch coordinates of b */
            xoff += (b % x->shape[d]) * x->strides[d];
            b /= x->shape[d];
        }
        /* kept columns [lo, hi): tril j <= i + diag, triu j >= i + diag */
        int64_t lo = 0, hi = C;
        if (j->upper) lo = i + j->diag < 0 ? 0 : i + j->diag > C ? C : i + j->diag;
        else hi = i + j->diag + 1 < 0 ? 0 : i + j->diag + 1 > C ? C : i + j->diag + 1;
        char *o = ob + r * C * (int64_t)isz;
        const char *s = xb + xoff * (int64_t)isz;
        memset(o, 0, (size_t)lo * isz);
        if (cs == 1) {
            if (hi > lo) memcpy(o + lo * (int64_t)isz, s + lo * (int64_t)isz, (size_t)(hi - lo) * isz);
        } else {
            for (int64_t c = lo; c < hi; c++) cg_copy_item(o + c * (int64_t)isz, s + c * cs * (int64_t)isz, isz);
        }
        if (C > hi) memset(o + hi * (int64_t)isz, 0, (size_t)(C - hi) * isz);
    }
}

cg_status cg_cpu_tril_triu(cg_tensor *out, const cg_tensor *t, int64_t diagonal, bool upper) {
    if (cg_tensor_numel(out) == 0) return CG_OK;
    int64_t rows = cg_tensor_numel(t) / (t->shape[t->ndim - 1] ? t->shape[t->ndim - 1] : 1);
    int64_t R = t->shape[t->ndim - 2], C = t->shape[t->ndim - 1];
    /* clamp so i + diag cannot overflow; the kept range is unchanged */
    int64_t diag = diagonal < -R - 1 ? -R - 1 : diagonal > C + 1 ? C + 1 : diagonal;
    tri_job job = {t, out, diag, upper};
    cg_parallel_for(rows, CG_GRAIN / C + 1, tri_rows, &job);
    return CG_OK;
}

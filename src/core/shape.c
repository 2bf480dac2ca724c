/* shape.c — shape validation with overflow checks, strides, broadcasting and
 * dim wrapping. */
#include "core_internal.h"

#include <string.h>

const char *cg_shape_str(char *buf, int ndim, const int64_t *shape) {
    int n = snprintf(buf, CG_SHAPE_STR, "(");
    for (int i = 0; i < ndim && n < CG_SHAPE_STR - 24; i++)
        n += snprintf(buf + n, (size_t)(CG_SHAPE_STR - n), i ? ",%lld" : "%lld", (long long)shape[i]);
    snprintf(buf + n, (size_t)(CG_SHAPE_STR - n), ndim == 1 ? ",)" : ")");
    return buf;
}

cg_status cg_shape_check(const char *op, int ndim, const int64_t *shape, size_t itemsize, int64_t *numel) {
    char b[CG_SHAPE_STR];
    if (ndim < 0 || ndim > CG_MAX_DIMS)
        return cg_set_error(CG_ERR_SHAPE, "[%s] rank %d is not supported (maximum %d dims)", op, ndim, CG_MAX_DIMS);
    int64_t n = 1;
    bool overflow = false;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0)
            return cg_set_error(CG_ERR_SHAPE, "[%s] negative size %lld in shape %s", op,
                                (long long)shape[i], cg_shape_str(b, ndim, shape));
        if (!overflow && __builtin_mul_overflow(n, shape[i], &n)) overflow = true;
    }
    int64_t bytes;
    bool has_zero = false;
    for (int i = 0; i < ndim; i++) has_zero |= shape[i] == 0;
    if (has_zero) n = 0, overflow = false;
    if (overflow || __builtin_mul_overflow(n, (int64_t)itemsize, &bytes))
        return cg_set_error(CG_ERR_SHAPE, "[%s] shape %s has too many elements (element count or byte size overflows int64)",
                            op, cg_shape_str(b, ndim, shape));
    if (numel) *numel = n;
    return CG_OK;
}

int64_t cg_shape_numel(int ndim, const int64_t *shape) {
    int64_t n = 1;
    for (int i = 0; i < ndim; i++) n *= shape[i];
    return n;
}

void cg_contiguous_strides(int ndim, const int64_t *shape, int64_t *strides) {
    int64_t s = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        strides[i] = s;
        s *= shape[i] > 1 ? shape[i] : 1;
    }
}

/* PyTorch's get_channels_last_strides_2d / _3d: the raw sizes (a 0 size makes the outer strides 0) */
void cg_permuted_strides(int ndim, const int64_t *shape, const int *perm, int64_t *strides) {
    int64_t s = 1;
    for (int i = ndim - 1; i >= 0; i--) {
        strides[perm[i]] = s;
        s *= shape[perm[i]];
    }
}

bool cg_memory_strides(cg_memory_format f, int ndim, const int64_t *shape, int64_t *strides) {
    static const int cl2d[] = {0, 2, 3, 1}, cl3d[] = {0, 2, 3, 4, 1};
    if (f == CG_MEMORY_CONTIGUOUS) {
        cg_contiguous_strides(ndim, shape, strides);
        return true;
    }
    if (f == CG_MEMORY_CHANNELS_LAST && ndim == 4) {
        cg_permuted_strides(ndim, shape, cl2d, strides);
        return true;
    }
    if (f == CG_MEMORY_CHANNELS_LAST_3D && ndim == 5) {
        cg_permuted_strides(ndim, shape, cl3d, strides);
        return true;
    }
    return false;
}

bool cg_shape_eq(int na, const int64_t *a, int nb, const int64_t *b) {
    return na == nb && (na == 0 || memcmp(a, b, (size_t)na * sizeof *a) == 0);
}

cg_status cg_broadcast_shapes(const char *op, int na, const int64_t *a, int nb, const int64_t *b,
                              int *nout, int64_t *out) {
    int n = na > nb ? na : nb;
    int64_t tmp[CG_MAX_DIMS];
    for (int i = 0; i < n; i++) {
        int64_t da = i < n - na ? 1 : a[i - (n - na)];
        int64_t db = i < n - nb ? 1 : b[i - (n - nb)];
        if (da != db && da != 1 && db != 1) {
            char sa[CG_SHAPE_STR], sb[CG_SHAPE_STR];
            return cg_set_error(CG_ERR_SHAPE, "[%s] shapes %s and %s cannot broadcast", op,
                                cg_shape_str(sa, na, a), cg_shape_str(sb, nb, b));
        }
        tmp[i] = da == 1 ? db : da;
    }
    memcpy(out, tmp, (size_t)n * sizeof *out);
    *nout = n;
    return CG_OK;
}

cg_status cg_wrap_dim(const char *op, int64_t dim, int ndim, int64_t *out) {
    int64_t n = ndim > 0 ? ndim : 1;
    if (dim < -n || dim >= n)
        return cg_set_error(CG_ERR_INDEX, "[%s] dimension out of range (expected to be in range of [%lld, %lld], but got %lld)",
                            op, (long long)-n, (long long)(n - 1), (long long)dim);
    *out = dim < 0 ? dim + n : dim;
    return CG_OK;
}

cg_status cg_dims_mask(const char *op, int ndims, const int64_t *dims, int ndim, uint32_t *mask) {
    if (!dims || ndims == 0) {
        *mask = ndim >= 32 ? 0xffffffffu : ((1u << ndim) - 1);
        return CG_OK;
    }
    uint32_t m = 0;
    for (int i = 0; i < ndims; i++) {
        int64_t d = 0;
        if (cg_wrap_dim(op, dims[i], ndim, &d)) return cg_last_error();
        if (ndim == 0) continue;
        if (m & (1u << d))
            return cg_set_error(CG_ERR_VALUE, "[%s] dim %lld appears multiple times in the list of dims", op, (long long)d);
        m |= 1u << d;
    }
    *mask = m;
    return CG_OK;
}

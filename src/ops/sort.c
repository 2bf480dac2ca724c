/* sort.c — sorting along one dim: sort (values + int64 indices), argsort and
 * topk. Every line is sorted with a stable bottom-up merge sort on (key,
 * index) pairs, so ties keep their input order in both directions and the
 * `stable` flag is always honoured. NaN sorts as the largest value (PyTorch).
 * Keys are exact: floating dtypes compare as double, integers and bool as
 * int64. Backward of the values scatters the gradient into zeros at the
 * indices with scatter_add, so it differentiates to any order. */
#include "scan_internal.h"
#include "../dispatch/dispatch_internal.h"
#include "../backend/cpu/loops.h"

#include <string.h>

static const cg_op_schema k_sort = {"sort", "SortBackward0", 1, CG_AMP_KEEP, false, false, false};
static const cg_op_schema k_topk = {"topk", "TopkBackward0", 1, CG_AMP_KEEP, false, false, false};

/* ---------------------------------------------------------------- merge sort */

#define LT_F(a, b) (!isnan(a) && (isnan(b) || (a) < (b))) /* NaN is the largest */
#define LT_I(a, b) ((a) < (b))

/* Sort n (key, idx) pairs; tk / ti are scratch of n entries. Stable: an
 * element moves before an earlier one only when strictly ordered before it. */
#define MERGE_SORT(name, K, LT)                                                                   \
    static void name(K *key, int64_t *idx, K *tk, int64_t *ti, int64_t n, bool desc) {           \
        K *ka = key, *kb = tk;                                                                    \
        int64_t *ia = idx, *ib = ti;                                                              \
        for (int64_t w = 1; w < n; w *= 2) {                                                      \
            for (int64_t lo = 0; lo < n; lo += 2 * w) {                                           \
                int64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;      \
                int64_t i = lo, j = mid, o = lo;                                                  \
                while (i < mid && j < hi) {                                                       \
                    bool right = desc ? LT(ka[i], ka[j]) : LT(ka[j], ka[i]);                      \
                    if (right) kb[o] = ka[j], ib[o++] = ia[j++];                                  \
                    else kb[o] = ka[i], ib[o++] = ia[i++];                                        \
                }                                                                                 \
                while (i < mid) kb[o] = ka[i], ib[o++] = ia[i++];                                 \
                while (j < hi) kb[o] = ka[j], ib[o++] = ia[j++];                                  \
            }                                                                                     \
            K *tk_ = ka; ka = kb; kb = tk_;                                                       \
            int64_t *ti_ = ia; ia = ib; ib = ti_;                                                 \
        }                                                                                         \
        if (ka != key) {                                                                          \
            memcpy(key, ka, (size_t)n * sizeof(K));                                               \
            memcpy(idx, ia, (size_t)n * sizeof(int64_t));                                         \
        }                                                                                         \
    }
MERGE_SORT(msort_f, double, LT_F)
MERGE_SORT(msort_i, int64_t, LT_I)

/* Load one line of n elements (byte stride s) as keys (double or int64). */
typedef void (*load_keys_fn)(const char *p, int64_t s, int64_t n, void *keys);
#define LOAD_KEYS(name, T, K, LOAD)                                                \
    static void name(const char *p, int64_t s, int64_t n, void *keys) {            \
        K *k = keys;                                                               \
        for (int64_t i = 0; i < n; i++) k[i] = (K)LOAD(*(const T *)(p + i * s));   \
    }
LOAD_KEYS(keys_b, uint8_t, int64_t, CG_LD_BOOL)
LOAD_KEYS(keys_u8, uint8_t, int64_t, CG_ID)
LOAD_KEYS(keys_i8, int8_t, int64_t, CG_ID)
LOAD_KEYS(keys_i16, int16_t, int64_t, CG_ID)
LOAD_KEYS(keys_i32, int32_t, int64_t, CG_ID)
LOAD_KEYS(keys_i64, int64_t, int64_t, CG_ID)
LOAD_KEYS(keys_f16, cg_f16, double, CG_LD_F16)
LOAD_KEYS(keys_bf16, cg_bf16, double, CG_LD_BF16)
LOAD_KEYS(keys_f32, float, double, CG_ID)
LOAD_KEYS(keys_f64, double, double, CG_ID)
LOAD_KEYS(keys_u16, uint16_t, int64_t, CG_ID)
LOAD_KEYS(keys_u32, uint32_t, int64_t, CG_ID)
/* uint64 keys with the top bit flipped: the int64 order of the results is the unsigned order */
#define FLIP_TOP(x) ((int64_t)((x) ^ UINT64_C(0x8000000000000000)))
LOAD_KEYS(keys_u64, uint64_t, int64_t, FLIP_TOP)
static const load_keys_fn k_load_keys[CG_DTYPE_COUNT] = {CG_ALL_TABLE(keys), CG_UINT_TABLE(keys)};

typedef struct sort_job {
    cg_lines L;          /* args: values, indices, x */
    load_keys_fn load;
    bool floating, desc, want_values;
    int64_t k;           /* the first k of each sorted line are written */
    size_t isz;
    atomic_bool oom;
} sort_job;

static void sort_range(int64_t b, int64_t e, void *p) {
    sort_job *j = p;
    int64_t n = j->L.len[2];
    /* keys are 8 bytes either way; sort_body checked that 4 * n of them fit */
    int64_t *key = malloc((size_t)(n > 0 ? n : 1) * 4 * sizeof(int64_t));
    if (!key) {
        atomic_store(&j->oom, true);
        return;
    }
    int64_t *idx = key + n, *tk = idx + n, *ti = tk + n;
    char *ptr[3];
    for (int64_t line = b; line < e; line++) {
        cg_lines_ptrs(&j->L, line, ptr);
        j->load(ptr[2], j->L.step[2], n, key);
        for (int64_t i = 0; i < n; i++) idx[i] = i;
        if (j->floating) msort_f((double *)(void *)key, idx, (double *)(void *)tk, ti, n, j->desc);
        else msort_i(key, idx, tk, ti, n, j->desc);
        for (int64_t i = 0; i < j->k; i++) {
            *(int64_t *)(ptr[1] + i * j->L.step[1]) = idx[i];
            if (j->want_values) memcpy(ptr[0] + i * j->L.step[0], ptr[2] + idx[i] * j->L.step[2], j->isz);
        }
    }
    free(key);
}

/* gx = scatter_add(zeros(x), dim, indices, g): indices are distinct per line */
static cg_status sort_backward(cg_node *node, cg_tensor *const *g, cg_tensor **gin) {
    const cg_tensor_meta *m = &node->input_meta[0];
    cg_tensor *idx = cg_node_saved(node, 0);
    if (!idx) return cg_last_error();
    cg_tensor *z = cg_zeros(m->ndim, m->shape, g[0]->dtype, g[0]->device);
    gin[0] = z ? cg_scatter_add(z, node->iattr[0], idx, g[0]) : NULL;
    cg_tensor_release(z);
    cg_tensor_release(idx);
    return gin[0] ? CG_OK : cg_last_error();
}

/* Sort every line of x along dim and keep the first k: values (when wanted)
 * and indices of shape x with size k along dim. */
static cg_status sort_body(const cg_op_schema *s, cg_tensor *x, int64_t dim, int64_t k, bool k_given, bool desc,
                           cg_tensor **values, cg_tensor **indices) {
    const char *op = s->name;
    CG_CHECK_S(indices, CG_ERR_VALUE, "[%s] output pointer is NULL", op);
    if (values) *values = NULL;
    *indices = NULL;
    CG_CHECK_S(x, CG_ERR_VALUE, "[%s] argument is NULL", op);
    int64_t d;
    if (cg_wrap_dim(op, dim, x->ndim, &d)) return cg_last_error();
    cg_tensor *o;
    bool owned;
    if (cg_schema_guard(s, 1, &x, &o, &owned)) return cg_last_error();
    if (owned) cg_tensor_release(o); /* AMP_KEEP: never casts */
    if (k_given && cg_dtype_is_barebones(x->dtype)) return cg_dtype_unsupported(op, x->dtype); /* topk, as PyTorch */
    int64_t n = x->ndim ? x->shape[d] : 1;
    if (!k_given) k = n;
    CG_CHECK_S(k >= 0 && k <= n, CG_ERR_INDEX, "[%s] selected index k out of range (k = %lld, size %lld along dim %lld)",
               op, (long long)k, (long long)n, (long long)d);
    int64_t shape[CG_MAX_DIMS];
    for (int i = 0; i < x->ndim; i++) shape[i] = i == d ? k : x->shape[i];
    cg_tensor *v = values ? cg_new_output(op, x->ndim, shape, x->dtype, x->device) : NULL;
    cg_tensor *ix = (v || !values) ? cg_new_output(op, x->ndim, shape, CG_DTYPE_I64, x->device) : NULL;
    if (!ix) {
        cg_tensor_release(v);
        return cg_last_error();
    }
    size_t scratch;
    if (!cg_is_meta(x) && cg_tensor_numel(ix) && !cg_bytes_ok(n, 4 * sizeof(int64_t), &scratch)) {
        cg_tensor_release(v);
        cg_tensor_release(ix);
        return cg_set_error(CG_ERR_OOM, "[%s] sort buffers for a line of %lld elements are too large", op, (long long)n);
    }
    if (!cg_is_meta(x) && cg_tensor_numel(ix)) {
        sort_job job = {.load = k_load_keys[x->dtype], .floating = cg_dtype_is_floating(x->dtype), .desc = desc,
                        .want_values = v != NULL, .k = k, .isz = cg_dtype_size(x->dtype)};
        atomic_init(&job.oom, false);
        cg_tensor *args[3] = {v ? v : ix, ix, x};
        cg_lines_init(&job.L, 3, args, d);
        cg_parallel_for(job.L.count, cg_lines_grain(n), sort_range, &job);
        if (atomic_load(&job.oom)) {
            cg_tensor_release(v);
            cg_tensor_release(ix);
            return cg_set_error(CG_ERR_OOM, "[%s] out of memory for the sort buffers of %lld elements", op, (long long)n);
        }
    }
    bool failed = false;
    cg_node *node = v ? cg_wire_unary_output(s->node_name, sort_backward, s, 1, &x, v, 1, &failed) : NULL;
    if (!failed && node) {
        node->iattr[0] = d;
        failed = cg_node_save(node, 0, ix, false, 0) != CG_OK;
    }
    if (failed) {
        cg_tensor_release(v);
        cg_tensor_release(ix);
        return cg_last_error();
    }
    if (values) *values = v;
    *indices = ix;
    return CG_OK;
}

/* the call recorded as a profiler event (off the hot path) */
static CG_PROF_COLD cg_status sort_impl_profiled(const cg_op_schema *s, cg_tensor *x, int64_t dim, int64_t k,
                                                 bool k_given, bool desc, cg_tensor **values, cg_tensor **indices) {
    int64_t ev = cg_prof_begin(s->name, CG_PROF_OP, 1, &x);
    cg_status st = sort_body(s, x, dim, k, k_given, desc, values, indices);
    cg_prof_end(ev, indices ? *indices : NULL);
    return st;
}
static cg_status sort_impl(const cg_op_schema *s, cg_tensor *x, int64_t dim, int64_t k, bool k_given, bool desc,
                           cg_tensor **values, cg_tensor **indices) {
    if (cg_prof_active()) return sort_impl_profiled(s, x, dim, k, k_given, desc, values, indices);
    return sort_body(s, x, dim, k, k_given, desc, values, indices);
}

cg_status cg_sort(cg_tensor *x, int64_t dim, bool descending, bool stable, cg_tensor **values, cg_tensor **indices) {
    (void)stable; /* always stable */
    CG_CHECK_S(values, CG_ERR_VALUE, "[sort] output pointer is NULL");
    return sort_impl(&k_sort, x, dim, 0, false, descending, values, indices);
}

cg_tensor *cg_argsort(cg_tensor *x, int64_t dim, bool descending, bool stable) {
    (void)stable;
    cg_tensor *ix = NULL;
    sort_impl(&k_sort, x, dim, 0, false, descending, NULL, &ix);
    return ix;
}

/* sorted = false may return any order; ours is always sorted. */
cg_status cg_topk(cg_tensor *x, int64_t k, int64_t dim, bool largest, bool sorted, cg_tensor **values, cg_tensor **indices) {
    (void)sorted;
    CG_CHECK_S(values, CG_ERR_VALUE, "[topk] output pointer is NULL");
    return sort_impl(&k_topk, x, dim, k, true, largest, values, indices);
}

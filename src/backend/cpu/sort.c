/* sort.c — the CPU's sort entry (Note [Kernel entries]; the op: src/ops/sort.c):
 * every line along dim is sorted with a stable bottom-up merge sort on (key,
 * index) pairs, so ties keep their input order in both directions. NaN sorts
 * as the largest value (PyTorch). Keys are exact: floating dtypes compare as
 * double, integers and bool as int64. Lines run in parallel (lines.h). */
#include "cpu_kernels.h"
#include "lines.h"
#include "loops.h"

#include <stdlib.h>
#include <string.h>

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

cg_status cg_cpu_sort(const char *op, cg_tensor *values, cg_tensor *indices, const cg_tensor *x, int64_t dim,
                      int64_t k, bool desc) {
    if (!cg_tensor_numel(indices)) return CG_OK;
    int64_t n = x->ndim ? x->shape[dim] : 1;
    size_t scratch;
    if (!cg_bytes_ok(n, 4 * sizeof(int64_t), &scratch))
        return cg_set_error(CG_ERR_OOM, "[%s] sort buffers for a line of %lld elements are too large", op, (long long)n);
    sort_job job = {.load = k_load_keys[x->dtype], .floating = cg_dtype_is_floating(x->dtype), .desc = desc,
                    .want_values = values != NULL, .k = k, .isz = cg_dtype_size(x->dtype)};
    atomic_init(&job.oom, false);
    const cg_tensor *args[3] = {values ? values : indices, indices, x};
    cg_lines_init(&job.L, 3, args, dim);
    cg_parallel_for(job.L.count, cg_lines_grain(n), sort_range, &job);
    if (atomic_load(&job.oom))
        return cg_set_error(CG_ERR_OOM, "[%s] out of memory for the sort buffers of %lld elements", op, (long long)n);
    return CG_OK;
}

/* reduce_run.c — the CPU run of a reduction plan (cg_reduce_plan,
 * src/backend/backend.h) with the loops of its kind (reduce_loops.h): one
 * large output through the kind's `full` function or in fixed chunks (Note
 * [Chunked reductions]), otherwise its loop per output (or its column loop,
 * Note [Column reductions]) over the outputs' iterator, split across the
 * thread pool. */
#include "cpu_kernels.h"
#include "reduce_loops.h"

#include <stdlib.h>

/* Note [Chunked reductions]: one large reduction (a single output) of a
 * chunked op is cut into chunks of CG_REDUCE_CHUNK elements whose boundaries
 * depend only on the size; chunks are reduced in parallel into partials of the
 * output dtype, then the partials are reduced in order with the op's loop for
 * that dtype. An op with a `full` function does the same itself (sum, mean,
 * var keep their partials in double). The result is the same for every
 * thread count. */
#define CG_REDUCE_CHUNK 32768

typedef struct chunk_job {
    cg_reduce_loop loop;
    char *partials;
    size_t osize;
    const char *in;
    int64_t n, stride;
    const double *params;
} chunk_job;

static void chunk_range(int64_t begin, int64_t end, void *ctx) {
    const chunk_job *j = ctx;
    for (int64_t c = begin; c < end; c++) {
        int64_t start = c * CG_REDUCE_CHUNK, len = j->n - start < CG_REDUCE_CHUNK ? j->n - start : CG_REDUCE_CHUNK;
        j->loop(j->partials + (size_t)c * j->osize, NULL, j->in + start * j->stride, len, j->stride, j->params);
    }
}

const cg_cpu_reduce_loops *const cg_cpu_reduce_table[CG_REDUCE_COUNT] = {
    [CG_REDUCE_SUM] = &cg_cpu_reduce_sum,
    [CG_REDUCE_MEAN] = &cg_cpu_reduce_mean,
    [CG_REDUCE_PROD] = &cg_cpu_reduce_prod,
    [CG_REDUCE_ANY] = &cg_cpu_reduce_any,
    [CG_REDUCE_ALL] = &cg_cpu_reduce_all,
    [CG_REDUCE_COUNT_NONZERO] = &cg_cpu_reduce_count_nonzero,
    [CG_REDUCE_MAX] = &cg_cpu_reduce_max,
    [CG_REDUCE_MIN] = &cg_cpu_reduce_min,
    [CG_REDUCE_VAR] = &cg_cpu_reduce_var,
    [CG_REDUCE_STD] = &cg_cpu_reduce_std,
    [CG_REDUCE_LOGSUMEXP] = &cg_cpu_reduce_logsumexp,
    [CG_REDUCE_NORM] = &cg_cpu_reduce_norm,
};

/* a plan with its loops: the kind's, for its dtypes */
typedef struct reduce_run {
    const cg_reduce_plan *p;
    cg_reduce_loop loop, combine; /* combine: the loop on the output dtype, NULL unless chunked */
    cg_reduce_cols_loop cols;     /* NULL with indices */
    cg_reduce_full_fn full;
} reduce_run;

/* returns false (and does nothing) when the chunked path does not apply */
static bool reduce_chunked(const reduce_run *r, char *out, const char *in) {
    const cg_reduce_plan *p = r->p;
    if (!r->combine) return false;
    int64_t n = p->n;
    int64_t nchunks = n / CG_REDUCE_CHUNK + (n % CG_REDUCE_CHUNK != 0); /* n + CHUNK - 1 may overflow */
    size_t osize = cg_itemsize(p->out_dtype);
    char *partials = cg_malloc_n("reduce", nchunks, osize);
    if (!partials) return false; /* fall back to the serial loop */
    chunk_job job = {r->loop, partials, osize, in, n, p->stride, p->params};
    cg_parallel_for(nchunks, 1, chunk_range, &job);
    r->combine(out, NULL, partials, nchunks, (int64_t)osize, p->params);
    free(partials);
    return true;
}

static void reduce_trampoline(char **args, const int64_t *steps, int64_t n, const void *ctx) {
    const reduce_run *r = ctx;
    const cg_reduce_plan *p = r->p;
    int in = p->has_idx ? 2 : 1;
    int64_t isize = (int64_t)cg_itemsize(p->in_dtype), osize = (int64_t)cg_itemsize(p->out_dtype);
    if (r->cols && n > 1 && steps[0] == osize && steps[in] == isize && p->stride != isize) {
        r->cols(args[0], args[in], p->n, p->stride, n, p->params);
        return;
    }
    for (int64_t i = 0; i < n; i++)
        r->loop(args[0] + i * steps[0], p->has_idx ? args[1] + i * steps[1] : NULL, args[in] + i * steps[in], p->n,
                p->stride, p->params);
}

cg_reduce_loop cg_cpu_reduce_loop(cg_reduce_kind kind, cg_dtype dt) { return cg_cpu_reduce_table[kind]->loop[dt]; }

void cg_cpu_run_reduce(const cg_reduce_plan *p) {
    const cg_cpu_reduce_loops *L = cg_cpu_reduce_table[p->kind];
    reduce_run r = {p, L->loop[p->in_dtype], p->chunked ? L->loop[p->out_dtype] : NULL,
                    p->has_idx ? NULL : L->cols[p->in_dtype], L->full};
    CG_ASSERT(r.loop); /* the driver checked cg_reduce_dtypes */
    const cg_iter *it = &p->iter;
    if (!p->has_idx && it->numel == 1 && p->n >= 2 * CG_REDUCE_CHUNK) {
        char *out = it->ptr[0];
        const char *in = it->ptr[it->nargs - 1];
        if ((r.full && r.full(p->in_dtype, out, in, p->n, p->stride, p->params)) || reduce_chunked(&r, out, in))
            return;
    }
    int64_t grain = p->n > 0 ? CG_GRAIN / p->n : CG_GRAIN;
    cg_iter_run(it, reduce_trampoline, &r, grain > 0 ? grain : 1);
}

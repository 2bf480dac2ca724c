/* reduce_run.c — the CPU run of a reduction plan (cg_reduce_plan,
 * src/backend/backend.h): one large output through the op's `full` function
 * or in fixed chunks (Note [Chunked reductions]), otherwise the op's loop per
 * output (or its column loop, Note [Column reductions]) over the outputs'
 * iterator, split across the thread pool. */
#include "../backend.h"

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

/* returns false (and does nothing) when the chunked path does not apply */
static bool reduce_chunked(const cg_reduce_plan *p, char *out, const char *in) {
    if (!p->combine) return false;
    int64_t n = p->n;
    int64_t nchunks = n / CG_REDUCE_CHUNK + (n % CG_REDUCE_CHUNK != 0); /* n + CHUNK - 1 may overflow */
    size_t osize = cg_itemsize(p->out_dtype);
    char *partials = cg_malloc_n("reduce", nchunks, osize);
    if (!partials) return false; /* fall back to the serial loop */
    chunk_job job = {p->loop, partials, osize, in, n, p->stride, p->params};
    cg_parallel_for(nchunks, 1, chunk_range, &job);
    p->combine(out, NULL, partials, nchunks, (int64_t)osize, p->params);
    free(partials);
    return true;
}

static void reduce_trampoline(char **args, const int64_t *steps, int64_t n, const void *ctx) {
    const cg_reduce_plan *p = ctx;
    int in = p->has_idx ? 2 : 1;
    int64_t isize = (int64_t)cg_itemsize(p->in_dtype), osize = (int64_t)cg_itemsize(p->out_dtype);
    if (p->cols && n > 1 && steps[0] == osize && steps[in] == isize && p->stride != isize) {
        p->cols(args[0], args[in], p->n, p->stride, n, p->params);
        return;
    }
    for (int64_t i = 0; i < n; i++)
        p->loop(args[0] + i * steps[0], p->has_idx ? args[1] + i * steps[1] : NULL, args[in] + i * steps[in], p->n,
                p->stride, p->params);
}

void cg_cpu_run_reduce(const cg_reduce_plan *p) {
    const cg_iter *it = &p->iter;
    if (!p->has_idx && it->numel == 1 && p->n >= 2 * CG_REDUCE_CHUNK) {
        char *out = it->ptr[0];
        const char *in = it->ptr[it->nargs - 1];
        if ((p->full && p->full(p->in_dtype, out, in, p->n, p->stride, p->params)) || reduce_chunked(p, out, in))
            return;
    }
    int64_t grain = p->n > 0 ? CG_GRAIN / p->n : CG_GRAIN;
    cg_iter_run(it, reduce_trampoline, p, grain > 0 ? grain : 1);
}

/* iter_run.c — the CPU run of an iterator plan (cg_iter, src/backend/backend.h):
 * the 1-D inner loop over the plan's outer coordinates, split across the
 * thread pool above a grain. */
#include "../backend.h"

typedef struct iter_job {
    const cg_iter *it;
    cg_loop_fn fn;
    const void *params;
} iter_job;

static void iter_range(int64_t begin, int64_t end, void *ctx) {
    const iter_job *job = ctx;
    const cg_iter *it = job->it;
    int nargs = it->nargs;
    int64_t coord[CG_MAX_DIMS];
    char *ptr[CG_ITER_MAX_ARGS];
    int64_t steps[CG_ITER_MAX_ARGS];
    if (it->ndim == 1) { /* one run of the inner loop */
        for (int k = 0; k < nargs; k++) {
            steps[k] = it->strides[k][0];
            ptr[k] = it->ptr[k] + begin * steps[k];
        }
        job->fn(ptr, steps, end - begin, job->params);
        return;
    }
    /* coordinates of `begin` */
    int64_t rem = begin;
    for (int d = 0; d < it->ndim; d++) {
        coord[d] = rem % it->shape[d];
        rem /= it->shape[d];
    }
    for (int k = 0; k < nargs; k++) {
        ptr[k] = it->ptr[k];
        steps[k] = it->strides[k][0];
        for (int d = 0; d < it->ndim; d++) ptr[k] += coord[d] * it->strides[k][d];
    }
    int64_t left = end - begin;
    while (left > 0) {
        int64_t cnt = it->shape[0] - coord[0];
        if (cnt > left) cnt = left;
        job->fn(ptr, steps, cnt, job->params);
        left -= cnt;
        if (left <= 0) break;
        /* advance: inner dim wraps, carry outward */
        for (int k = 0; k < nargs; k++) ptr[k] += (cnt - 0) * it->strides[k][0];
        coord[0] += cnt;
        for (int d = 0; d < it->ndim - 1 && coord[d] == it->shape[d]; d++) {
            coord[d] = 0;
            coord[d + 1]++;
            for (int k = 0; k < nargs; k++)
                ptr[k] += it->strides[k][d + 1] - it->shape[d] * it->strides[k][d];
        }
    }
}

void cg_iter_run(const cg_iter *it, cg_loop_fn fn, const void *params, int64_t grain) {
    if (it->numel == 0) return;
    iter_job job = {it, fn, params};
    if (it->numel < grain || it->numel < 2) {
        iter_range(0, it->numel, &job);
        return;
    }
    cg_parallel_for(it->numel, grain, iter_range, &job);
}

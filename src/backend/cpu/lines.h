/* lines.h — internal: the "lines along one dim" walk shared by the CPU's
 * scan entries (scan.c) and sort entry (sort.c). Each line is independent, so
 * lines are split across threads and results never depend on the thread
 * count. */
#ifndef CG_CPU_LINES_H
#define CG_CPU_LINES_H

#include "../backend.h"

#define CG_LINES_MAX_ARGS 4

/* The lines along dim `dim` of tensors sharing every other size (0-d counts
 * as one line of length 1). Strides in bytes. */
typedef struct cg_lines {
    int nargs, nd;                               /* nd: number of non-line dims */
    int64_t count;                               /* number of lines */
    int64_t shape[CG_MAX_DIMS];                  /* sizes of the non-line dims */
    int64_t st[CG_LINES_MAX_ARGS][CG_MAX_DIMS];  /* strides over the non-line dims */
    int64_t len[CG_LINES_MAX_ARGS];              /* line length of each tensor */
    int64_t step[CG_LINES_MAX_ARGS];             /* stride along the line */
    char *base[CG_LINES_MAX_ARGS];
} cg_lines;

static inline void cg_lines_init(cg_lines *L, int nargs, const cg_tensor *const *ts, int64_t dim) {
    L->nargs = nargs;
    L->nd = 0;
    L->count = 1;
    const cg_tensor *t0 = ts[0];
    for (int d = 0; d < t0->ndim; d++) {
        if (d == dim) continue;
        L->shape[L->nd] = t0->shape[d];
        for (int a = 0; a < nargs; a++) L->st[a][L->nd] = ts[a]->strides[d] * (int64_t)cg_dtype_size(ts[a]->dtype);
        L->count *= t0->shape[d];
        L->nd++;
    }
    for (int a = 0; a < nargs; a++) {
        int64_t isz = (int64_t)cg_dtype_size(ts[a]->dtype);
        L->len[a] = ts[a]->ndim ? ts[a]->shape[dim] : 1;
        L->step[a] = ts[a]->ndim ? ts[a]->strides[dim] * isz : isz;
        L->base[a] = cg_tensor_ptr(ts[a]);
    }
}

/* Start pointers of line `i` for every tensor. */
static inline void cg_lines_ptrs(const cg_lines *L, int64_t i, char **p) {
    int64_t off[CG_LINES_MAX_ARGS] = {0};
    for (int d = L->nd - 1; d >= 0; d--) {
        int64_t c = i % L->shape[d];
        i /= L->shape[d];
        for (int a = 0; a < L->nargs; a++) off[a] += c * L->st[a][d];
    }
    for (int a = 0; a < L->nargs; a++) p[a] = L->base[a] + off[a];
}

/* Threads get whole lines; grain keeps small work on one thread. */
static inline int64_t cg_lines_grain(int64_t len) {
    int64_t g = CG_GRAIN / (len > 0 ? len : 1);
    return g > 0 ? g : 1;
}

#endif

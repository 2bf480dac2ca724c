/* opcheck.h — the table-driven checker for elementwise ops (the C side of
 * PyTorch's OpInfo idea): one case describes an op, its float64 reference and
 * input domains; the checker runs forward against the reference in every
 * floating dtype (and integer dtypes when asked) and gradcheck +
 * gradgradcheck in float64 on contiguous, non-contiguous, broadcast, 0-d and
 * empty inputs. */
#ifndef CG_OPCHECK_H
#define CG_OPCHECK_H

#include "test.h"

typedef struct tt_ew_case {
    const char *name;
    int arity;                                      /* 1..4 */
    tt_fn fn;                                       /* applies the op to its inputs */
    void *ctx;
    double (*ref)(const double *x, void *ctx);      /* float64 reference for one element */
    double lo[4], hi[4];                            /* input domain per argument */
    bool differentiable;                            /* run gradcheck / gradgradcheck */
    bool second_order;                              /* also gradgradcheck (default with differentiable) */
    unsigned int_dtypes;                            /* bitmask of extra dtypes (1 << CG_DTYPE_I32 ...) to test forward on */
    unsigned bool_args;                             /* argument i is a bool tensor (where's cond) */
    double rtol32;                                  /* float32 relative tolerance (default 1e-5) */
    double atol32;                                  /* float32 absolute tolerance (default 1e-6) */
    bool no_half;                                   /* skip float16 / bfloat16 forward checks */
} tt_ew_case;

/* Runs the whole check; records failures through CHECK. */
void tt_check_elementwise(const tt_ew_case *c);

#endif

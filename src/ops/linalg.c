/* linalg.c — matrix products: matmul (PyTorch's full rank semantics), mm,
 * bmm, mv, dot, outer, addmm, baddbmm. One op core (Note [Product core])
 * computes every product through the device's gemm entry (Note [Kernel
 * entries]; the CPU's is src/backend/cpu/matmul.c) and records one node whose
 * backward is written with cg ops (matmul, transpose, reduce_to_shape), so
 * every product is differentiable to any order. */
#include "../dispatch/dispatch_internal.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

/* Note [Product core]: out = beta * self + alpha * (a @ b), where
 *   a is (batch_a..., m, k) or 1-D (k)  (a 1-D a is a (1,k) row, its m dim removed from out),
 *   b is (batch_b..., k, n) or 1-D (k)  (a 1-D b is a (k,1) column, its n dim removed),
 *   batch = broadcast(batch_a, batch_b), out is (batch..., [m], [n]),
 *   self (optional, addmm / baddbmm) broadcasts to out; beta == 0 ignores it.
 * Broadcast batch dims are stride-0 pointer arithmetic in the glue, never copies.
 * Backward, with g reshaped back to (batch, m, n) and 1-D operands viewed as matrices:
 *   ga = alpha * g @ b^T, gb = alpha * a^T @ g, gself = beta * g,
 * each reduced to its input's shape (sum over broadcast dims). */

typedef struct prod_geom {
    bool a_vec, b_vec;
    int nbatch;
    int64_t bshape[CG_MAX_DIMS];
    int64_t m, n, k;
    int ondim;
    int64_t oshape[CG_MAX_DIMS];
} prod_geom;

static cg_status prod_geometry(const char *op, const cg_tensor *a, const cg_tensor *b, prod_geom *g) {
    char sa[CG_SHAPE_STR], sb[CG_SHAPE_STR];
    if (a->ndim == 0 || b->ndim == 0)
        return cg_set_error(CG_ERR_SHAPE, "[%s] both arguments need to be at least 1D, but they are %dD and %dD", op,
                            a->ndim, b->ndim);
    g->a_vec = a->ndim == 1;
    g->b_vec = b->ndim == 1;
    g->m = g->a_vec ? 1 : a->shape[a->ndim - 2];
    g->k = a->shape[a->ndim - 1];
    int64_t kb = g->b_vec ? b->shape[0] : b->shape[b->ndim - 2];
    g->n = g->b_vec ? 1 : b->shape[b->ndim - 1];
    if (g->k != kb)
        return cg_set_error(CG_ERR_SHAPE, "[%s] shapes %s and %s cannot be multiplied (%lld != %lld)", op,
                            cg_shape_str(sa, a->ndim, a->shape), cg_shape_str(sb, b->ndim, b->shape),
                            (long long)g->k, (long long)kb);
    int na = a->ndim > 2 ? a->ndim - 2 : 0, nb = b->ndim > 2 ? b->ndim - 2 : 0;
    g->nbatch = na > nb ? na : nb;
    for (int i = 0; i < g->nbatch; i++) {
        int ia = i - (g->nbatch - na), ib = i - (g->nbatch - nb);
        int64_t da = ia >= 0 ? a->shape[ia] : 1, db = ib >= 0 ? b->shape[ib] : 1;
        if (da != db && da != 1 && db != 1)
            return cg_set_error(CG_ERR_SHAPE, "[%s] batch dimensions of shapes %s and %s cannot be broadcast", op,
                                cg_shape_str(sa, a->ndim, a->shape), cg_shape_str(sb, b->ndim, b->shape));
        g->bshape[i] = da == 1 ? db : da;
    }
    g->ondim = 0;
    for (int i = 0; i < g->nbatch; i++) g->oshape[g->ondim++] = g->bshape[i];
    if (!g->a_vec) g->oshape[g->ondim++] = g->m;
    if (!g->b_vec) g->oshape[g->ondim++] = g->n;
    return CG_OK;
}

/* The element strides of operand t's matrices (a: is_a) as the gemm entry
 * reads them: a 1-D a is a (1,k) row (its row stride never used), a 1-D b a
 * (k,1) column. */
static void mat_strides(const cg_tensor *t, bool is_a, int64_t *rs, int64_t *cs) {
    int nd = t->ndim;
    if (nd == 1) {
        *rs = is_a ? 0 : t->strides[0];
        *cs = is_a ? t->strides[0] : 1;
    } else {
        *rs = t->strides[nd - 2];
        *cs = t->strides[nd - 1];
    }
}

/* *ok: can the device's GEMM read t's matrices in place (strides within lim)? */
static cg_status mat_ok(const char *op, const cg_tensor *t, bool is_a, const prod_geom *g, int64_t lim, bool *ok) {
    int64_t rs, cs;
    mat_strides(t, is_a, &rs, &cs);
    *ok = false;
    if (rs > lim || cs > lim) return CG_OK; /* not a BLAS leading dim */
    *ok = true;
    cg_status st;
    if (is_a) CG_RUN_KERNEL(st, op, t->device, gemm_layout, g->m, g->k, rs, cs, ok);
    else CG_RUN_KERNEL(st, op, t->device, gemm_layout, g->k, g->n, rs, cs, ok);
    return st;
}

/* A history-free operand in compute dtype cdt whose matrices the GEMM can read
 * (a contiguous copy of the un-broadcast operand only when they can't). */
static cg_tensor *prepare(const char *op, cg_tensor *t, cg_dtype cdt, bool is_a, const prod_geom *g, int64_t lim) {
    cg_tensor *x = cg_tensor_alias(t);
    if (!x) return NULL;
    if (x->dtype != cdt) {
        cg_tensor *c = cg_to_dtype(x, cdt);
        cg_tensor_release(x);
        if (!(x = c)) return NULL;
    }
    bool ok = true;
    if (cg_dtype_is_floating(cdt) && g->m && g->n && g->k) {
        if (mat_ok(op, x, is_a, g, lim, &ok)) {
            cg_tensor_release(x);
            return NULL;
        }
    }
    if (!ok) {
        cg_tensor *c = cg_contiguous(x);
        cg_tensor_release(x);
        x = c;
    }
    return x;
}

/* Run the product into `out` (allocated, contiguous). */
static cg_status prod_compute(const char *op, cg_tensor *out, cg_tensor *self, cg_tensor *a, cg_tensor *b,
                              double beta, double alpha, const prod_geom *g) {
    cg_dtype dt = out->dtype;
    cg_dtype cdt = (dt == CG_DTYPE_F16 || dt == CG_DTYPE_BF16) ? CG_DTYPE_F32 : dt;
    int64_t lim = INT64_MAX;
    cg_status st;
    CG_RUN_KERNEL(st, op, out->device, gemm_max_dim, &lim);
    if (st) return st;
    if (cg_dtype_is_floating(cdt) && (g->m > lim || g->n > lim || g->k > lim))
        return cg_set_error(CG_ERR_NOT_IMPLEMENTED, "[%s] matrix dimension exceeds the BLAS index range", op);
    bool half = cdt != dt; /* half operands go to the entry as they are (Note [Half GEMM]) */
    bool prev = cg_set_grad_enabled(false);
    cg_tensor *aw = half ? cg_tensor_alias(a) : prepare(op, a, cdt, true, g, lim);
    cg_tensor *bw = !aw ? NULL : half ? cg_tensor_alias(b) : prepare(op, b, cdt, false, g, lim);
    cg_tensor *cw = NULL;
    if (!aw || !bw) goto fail;
    if (cdt == dt) {
        cg_tensor_retain(out);
        cw = out;
    } else if (!(cw = cg_tensor_new(op, out->ndim, out->shape, cdt, out->device))) {
        goto fail;
    }
    if (self && beta != 0 && cg_copy_(cw, self)) goto fail;
    CG_RUN_KERNEL(st, op, cw->device, gemm, cw, aw, bw, alpha, self ? beta : 0.0);
    if (st) goto fail;
    if (cw != out && cg_copy_(out, cw)) goto fail;
    st = CG_OK;
    goto done;
fail:
    st = cg_last_error();
done:
    cg_tensor_release(aw);
    cg_tensor_release(bw);
    cg_tensor_release(cw);
    cg_set_grad_enabled(prev);
    return st;
}

/* ---------------------------------------------------------------- backward */

static cg_tensor *scaled(cg_tensor *t, double s) {
    if (s == 1.0) {
        cg_tensor_retain(t);
        return t;
    }
    cg_tensor *c = cg_scalar_on(s, t->dtype, t->device);
    if (!c) return NULL;
    cg_tensor *r = cg_mul(t, c);
    cg_tensor_release(c);
    return r;
}

/* grad (batch..., rows, cols) reduced to the shape of the matrix view of an
 * operand, then reshaped to the operand's own shape. */
static cg_tensor *reduce_operand(cg_tensor *grad, const cg_tensor *mat, const cg_tensor_meta *m) {
    cg_tensor *r = cg_reduce_to_shape(grad, mat->ndim, mat->shape);
    if (!r || mat->ndim == m->ndim) return r;
    cg_tensor *v = cg_reshape(r, m->ndim, m->shape);
    cg_tensor_release(r);
    return v;
}

static cg_status prod_backward(cg_node *node, cg_tensor *const *gout, cg_tensor **gin) {
    int off = (int)node->iattr[0]; /* 1 when input 0 is self */
    double beta = node->dattr[0], alpha = node->dattr[1];
    cg_tensor *a = NULL, *b = NULL, *am = NULL, *bm = NULL, *g1 = NULL, *g2 = NULL, *t = NULL, *p = NULL;
    cg_status st = CG_OK;
    if (off && cg_node_needs_grad(node, 0)) {
        cg_tensor *s = scaled(gout[0], beta);
        gin[0] = s ? cg_reduce_to_shape(s, node->input_meta[0].ndim, node->input_meta[0].shape) : NULL;
        cg_tensor_release(s);
        if (!gin[0]) return cg_last_error();
    }
    bool need_a = cg_node_needs_grad(node, off), need_b = cg_node_needs_grad(node, off + 1);
    if (!need_a && !need_b) return CG_OK;
    if (!(a = cg_node_saved(node, 0)) || !(b = cg_node_saved(node, 1))) goto fail;
    bool a_vec = a->ndim == 1, b_vec = b->ndim == 1;
    /* matrix views: a (k) -> (1,k), b (k) -> (k,1); g gets the removed dims back */
    if (!(am = a_vec ? cg_unsqueeze(a, 0) : (cg_tensor_retain(a), a))) goto fail;
    if (!(bm = b_vec ? cg_unsqueeze(b, 1) : (cg_tensor_retain(b), b))) goto fail;
    g1 = a_vec ? cg_unsqueeze(gout[0], gout[0]->ndim - (b_vec ? 0 : 1)) : (cg_tensor_retain(gout[0]), gout[0]);
    if (!g1) goto fail;
    g2 = b_vec ? cg_unsqueeze(g1, g1->ndim) : (cg_tensor_retain(g1), g1);
    if (!g2) goto fail;
    cg_tensor_release(g1);
    if (!(g1 = scaled(g2, alpha))) goto fail;
    if (need_a) {
        if (!(t = cg_transpose(bm, -1, -2)) || !(p = cg_matmul(g1, t))) goto fail;
        if (!(gin[off] = reduce_operand(p, am, &node->input_meta[off]))) goto fail;
        cg_tensor_release(t);
        cg_tensor_release(p);
        t = p = NULL;
    }
    if (need_b) {
        if (!(t = cg_transpose(am, -1, -2)) || !(p = cg_matmul(t, g1))) goto fail;
        if (!(gin[off + 1] = reduce_operand(p, bm, &node->input_meta[off + 1]))) goto fail;
    }
    goto done;
fail:
    st = cg_last_error();
done:;
    cg_tensor *all[] = {a, b, am, bm, g1, g2, t, p};
    for (int i = 0; i < 8; i++) cg_tensor_release(all[i]);
    return st;
}

/* ---------------------------------------------------------------- the op core */

typedef struct prod_op {
    cg_op_schema schema;
} prod_op;

/* AMP: PyTorch's CPU autocast lowers matmul, mm, bmm, addmm and baddbmm; mv and dot keep their dtype. */
#define PROD_OP(var, name, node, amp)                                                             \
    static const prod_op var = {.schema = {name, node, 1, amp, false, true, false}}
PROD_OP(k_matmul, "matmul", "MatmulBackward0", CG_AMP_LOWER);
PROD_OP(k_mm, "mm", "MmBackward0", CG_AMP_LOWER);
PROD_OP(k_bmm, "bmm", "BmmBackward0", CG_AMP_LOWER);
PROD_OP(k_mv, "mv", "MvBackward0", CG_AMP_KEEP);
PROD_OP(k_dot, "dot", "DotBackward0", CG_AMP_KEEP);
PROD_OP(k_addmm, "addmm", "AddmmBackward0", CG_AMP_LOWER);
PROD_OP(k_baddbmm, "baddbmm", "BaddbmmBackward0", CG_AMP_LOWER);

static cg_tensor *prod_forward_body(const prod_op *op, cg_tensor *self, cg_tensor *a, cg_tensor *b, double beta,
                               double alpha) {
    const char *name = op->schema.name;
    cg_tensor *args[3] = {self, a, b};
    int off = self ? 0 : 1, n = 3 - off;
    if (cg_check_same(name, n, args + off, cg_amp_cast_mask(&op->schema, n, args + off))) return NULL;
    cg_dtype dt = a->dtype;
    CG_CHECK(dt != CG_DTYPE_BOOL, CG_ERR_NOT_IMPLEMENTED, "[%s] not supported for dtype bool", name);
    if (cg_dtype_is_barebones(dt)) { /* no integer GEMM for them, as in PyTorch */
        cg_dtype_unsupported(name, dt);
        return NULL;
    }
    if (!cg_dtype_is_floating(dt)) { /* integer inputs: PyTorch truncates fractional beta / alpha (addmm, baddbmm) */
        CG_CHECK(fabs(alpha) < 0x1p63 && fabs(beta) < 0x1p63, CG_ERR_VALUE,
                 "[%s] value cannot be converted to type int64_t without overflow (beta=%g, alpha=%g)", name, beta,
                 alpha);
        beta = trunc(beta);
        alpha = trunc(alpha);
    }
    prod_geom g;
    if (prod_geometry(name, a, b, &g)) return NULL;
    if (self) {
        int nd;
        int64_t bs[CG_MAX_DIMS];
        char s1[CG_SHAPE_STR], s2[CG_SHAPE_STR];
        if (cg_broadcast_shapes(name, self->ndim, self->shape, g.ondim, g.oshape, &nd, bs) ||
            !cg_shape_eq(nd, bs, g.ondim, g.oshape)) {
            cg_set_error(CG_ERR_SHAPE, "[%s] self of shape %s cannot be broadcast to the product's shape %s", name,
                         cg_shape_str(s1, self->ndim, self->shape), cg_shape_str(s2, g.ondim, g.oshape));
            return NULL;
        }
    }
    cg_tensor *in[3];
    bool owned;
    if (cg_schema_guard(&op->schema, n, args + off, in, &owned)) return NULL;
    cg_tensor *s = self ? in[0] : NULL, *x = in[1 - off], *y = in[2 - off];
    cg_tensor *out = cg_tensor_new(name, g.ondim, g.oshape, x->dtype, x->device);
    if (out && prod_compute(name, out, s, x, y, beta, alpha, &g)) {
        cg_tensor_release(out);
        out = NULL;
    }
    if (out) {
        bool failed;
        cg_node *node = cg_wire_unary_output(op->schema.node_name, prod_backward, op, n, in, out, 2, &failed);
        if (node) {
            node->iattr[0] = self != NULL;
            node->dattr[0] = beta;
            node->dattr[1] = alpha;
            failed = cg_node_save(node, 0, x, false, 0) || cg_node_save(node, 1, y, false, 0);
        }
        if (failed) {
            cg_tensor_release(out);
            out = NULL;
        }
    }
    if (owned) cg_release_all(n, in);
    return out;
}

/* the call recorded as a profiler event (off the hot path) */
static CG_PROF_COLD cg_tensor *prod_forward_profiled(const prod_op *op, cg_tensor *self, cg_tensor *a, cg_tensor *b,
                                                     double beta, double alpha) {
    cg_tensor *args[3] = {self, a, b};
    int off = self ? 0 : 1;
    int64_t ev = cg_prof_begin(op->schema.name, CG_PROF_OP, 3 - off, args + off);
    cg_tensor *r = prod_forward_body(op, self, a, b, beta, alpha);
    cg_prof_end(ev, r);
    return r;
}
static cg_tensor *prod_forward(const prod_op *op, cg_tensor *self, cg_tensor *a, cg_tensor *b, double beta,
                               double alpha) {
    if (cg_prof_active()) return prod_forward_profiled(op, self, a, b, beta, alpha);
    return prod_forward_body(op, self, a, b, beta, alpha);
}

/* ---------------------------------------------------------------- entry points */

static cg_status expect_rank(const char *op, const cg_tensor *a, int ra, const cg_tensor *b, int rb) {
    CG_CHECK_S(a && b, CG_ERR_VALUE, "[%s] argument is NULL", op);
    if (a->ndim == ra && b->ndim == rb) return CG_OK;
    char sa[CG_SHAPE_STR], sb[CG_SHAPE_STR];
    return cg_set_error(CG_ERR_SHAPE, "[%s] expected %dD and %dD tensors, got shapes %s and %s", op, ra, rb,
                        cg_shape_str(sa, a->ndim, a->shape), cg_shape_str(sb, b->ndim, b->shape));
}

static cg_status same_batch(const char *op, const cg_tensor *a, const cg_tensor *b) {
    if (a->shape[0] == b->shape[0]) return CG_OK;
    char sa[CG_SHAPE_STR], sb[CG_SHAPE_STR];
    return cg_set_error(CG_ERR_SHAPE, "[%s] batch sizes of shapes %s and %s differ (%lld != %lld)", op,
                        cg_shape_str(sa, a->ndim, a->shape), cg_shape_str(sb, b->ndim, b->shape),
                        (long long)a->shape[0], (long long)b->shape[0]);
}

cg_tensor *cg_mm(cg_tensor *a, cg_tensor *b) {
    if (expect_rank("mm", a, 2, b, 2)) return NULL;
    return prod_forward(&k_mm, NULL, a, b, 0.0, 1.0);
}

cg_tensor *cg_bmm(cg_tensor *a, cg_tensor *b) {
    if (expect_rank("bmm", a, 3, b, 3) || same_batch("bmm", a, b)) return NULL;
    return prod_forward(&k_bmm, NULL, a, b, 0.0, 1.0);
}

cg_tensor *cg_mv(cg_tensor *a, cg_tensor *v) {
    if (expect_rank("mv", a, 2, v, 1)) return NULL;
    return prod_forward(&k_mv, NULL, a, v, 0.0, 1.0);
}

cg_tensor *cg_dot(cg_tensor *a, cg_tensor *b) {
    if (expect_rank("dot", a, 1, b, 1)) return NULL;
    return prod_forward(&k_dot, NULL, a, b, 0.0, 1.0);
}

cg_tensor *cg_addmm(cg_tensor *self, cg_tensor *a, cg_tensor *b, double beta, double alpha) {
    CG_CHECK(self, CG_ERR_VALUE, "[addmm] argument is NULL");
    if (expect_rank("addmm", a, 2, b, 2)) return NULL;
    return prod_forward(&k_addmm, self, a, b, beta, alpha);
}

cg_tensor *cg_baddbmm(cg_tensor *self, cg_tensor *a, cg_tensor *b, double beta, double alpha) {
    CG_CHECK(self, CG_ERR_VALUE, "[baddbmm] argument is NULL");
    if (expect_rank("baddbmm", a, 3, b, 3) || same_batch("baddbmm", a, b)) return NULL;
    return prod_forward(&k_baddbmm, self, a, b, beta, alpha);
}

CG_PROF_FN(cg_tensor *, cg_outer, "outer", (cg_tensor *a, cg_tensor *b), (a, b), a, b) {
    if (expect_rank("outer", a, 1, b, 1)) return NULL;
    cg_tensor *ac = cg_unsqueeze(a, 1), *br = ac ? cg_unsqueeze(b, 0) : NULL;
    cg_tensor *r = br ? cg_mul(ac, br) : NULL;
    cg_tensor_release(ac);
    cg_tensor_release(br);
    return r;
}

/* matmul of an N-D a (N >= 3) with a 1-D / 2-D b: fold a's batch into its
 * rows so one GEMM runs (and gb = a^T @ g is one GEMM, not a batch summed). */
static cg_tensor *matmul_folded(cg_tensor *a, cg_tensor *b) {
    int64_t rows = 1, k = a->shape[a->ndim - 1];
    for (int i = 0; i < a->ndim - 1; i++) rows *= a->shape[i];
    int64_t fs[2] = {rows, k}, os[CG_MAX_DIMS];
    cg_tensor *af = cg_reshape(a, 2, fs);
    if (!af) return NULL;
    cg_tensor *p = b->ndim == 2 ? prod_forward(&k_mm, NULL, af, b, 0.0, 1.0) : prod_forward(&k_mv, NULL, af, b, 0.0, 1.0);
    cg_tensor_release(af);
    if (!p) return NULL;
    memcpy(os, a->shape, sizeof(int64_t) * (size_t)(a->ndim - 1));
    int on = a->ndim - 1;
    if (b->ndim == 2) os[on++] = b->shape[1];
    cg_tensor *r = cg_reshape(p, on, os);
    cg_tensor_release(p);
    return r;
}

cg_tensor *cg_matmul(cg_tensor *a, cg_tensor *b) {
    /* validate first so errors name matmul and the caller's shapes */
    prod_geom g;
    cg_tensor *ab[2] = {a, b};
    unsigned amp = a && b ? cg_amp_cast_mask(&k_matmul.schema, 2, ab) : 0;
    if (cg_check_same("matmul", 2, ab, amp) || prod_geometry("matmul", a, b, &g)) return NULL;
    if (amp) { /* autocast: every rank of matmul runs in the low-precision dtype, mv and dot included */
        cg_tensor *c[2];
        bool owned;
        if (cg_schema_guard(&k_matmul.schema, 2, ab, c, &owned)) return NULL;
        cg_tensor *r = cg_matmul(c[0], c[1]);
        if (owned) cg_release_all(2, c);
        return r;
    }
    CG_CHECK(a->dtype != CG_DTYPE_BOOL, CG_ERR_NOT_IMPLEMENTED, "[matmul] not supported for dtype bool");
    if (a->ndim == 1 && b->ndim == 1) return prod_forward(&k_dot, NULL, a, b, 0.0, 1.0);
    if (a->ndim == 2 && b->ndim == 1) return prod_forward(&k_mv, NULL, a, b, 0.0, 1.0);
    if (a->ndim == 2 && b->ndim == 2) return prod_forward(&k_mm, NULL, a, b, 0.0, 1.0);
    if (a->ndim >= 3 && b->ndim <= 2) return matmul_folded(a, b);
    return prod_forward(&k_matmul, NULL, a, b, 0.0, 1.0);
}

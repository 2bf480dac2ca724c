/* einsum.c — einsum(equation, operands): parses the equation (explicit or
 * implicit output, '...' ellipsis, repeated subscripts as diagonals) and
 * evaluates it with differentiable cg ops only: diagonal / permute / reshape
 * views, sum, and bmm for each pairwise contraction (Note [Einsum plan]). */
#include "../dispatch/dispatch_internal.h"

#include <string.h>

/* Note [Einsum plan]: every subscript (and each ellipsis dim, right-aligned
 * across operands) gets a "global dim". Each operand is brought to the full
 * global rank (diagonal for repeated subscripts, permute, size-1 dims where a
 * subscript is absent). Operands are then contracted left to right: dims one
 * operand has alone and nobody needs later (not in the output, size 1 in every
 * later operand) are summed first; the pair is then one bmm with
 *   batch = dims both have and someone needs later,
 *   m / n = dims only the left / right operand has,
 *   k     = dims both have that nobody needs later.
 * Finally dims not in the output are summed and the rest permuted into the
 * output's order. Size-1 dims broadcast, as in PyTorch. */

#define N_LABELS 52
#define ELL (-1)
#define MAX_TERM 64

typedef struct term {
    int n;                /* entries in lab */
    int lab[MAX_TERM];    /* label ids 0..51, or ELL */
    bool has_ell;
} term;

static int label_id(char c) {
    if (c >= 'A' && c <= 'Z') return c - 'A';
    if (c >= 'a' && c <= 'z') return 26 + (c - 'a');
    return -2;
}
static char label_char(int id) { return id < 26 ? (char)('A' + id) : (char)('a' + id - 26); }

/* The subscript naming global dim g ("..." for ellipsis dims), for messages. */
static const char *dim_name(int g, const int *gid, char *buf) {
    strcpy(buf, "...");
    for (int l = 0; l < N_LABELS; l++)
        if (gid[l] == g) buf[0] = label_char(l), buf[1] = 0;
    return buf;
}

/* Parse one term starting at *p, stopping at ',', '-' or the end. */
static cg_status parse_term(const char **p, term *t) {
    t->n = 0;
    t->has_ell = false;
    const char *s = *p;
    for (; *s && *s != ',' && *s != '-'; s++) {
        if (*s == ' ') continue;
        if (*s == '.') {
            if (s[1] != '.' || s[2] != '.')
                return cg_set_error(CG_ERR_VALUE, "[einsum] found '.' that is not part of an ellipsis ('...')");
            if (t->has_ell) return cg_set_error(CG_ERR_VALUE, "[einsum] found more than one ellipsis in one subscript");
            t->has_ell = true;
            s += 2;
            if (t->n == MAX_TERM) return cg_set_error(CG_ERR_VALUE, "[einsum] subscript too long");
            t->lab[t->n++] = ELL;
            continue;
        }
        int id = label_id(*s);
        if (id < 0)
            return cg_set_error(CG_ERR_VALUE, "[einsum] invalid subscript '%c' in the equation (subscripts are letters [a-zA-Z])", *s);
        if (t->n == MAX_TERM) return cg_set_error(CG_ERR_VALUE, "[einsum] subscript too long");
        t->lab[t->n++] = id;
    }
    *p = s;
    return CG_OK;
}

typedef struct plan {
    int n;                     /* operands */
    term in[CG_MAX_DIMS * 4];
    term out;
    bool explicit_out;
} plan;
#define MAX_OPERANDS (CG_MAX_DIMS * 4)

static cg_status parse(const char *eq, int n, plan *pl) {
    const char *p = eq;
    int k = 0;
    for (;;) {
        if (k == MAX_OPERANDS) return cg_set_error(CG_ERR_VALUE, "[einsum] too many operands (at most %d)", MAX_OPERANDS);
        if (parse_term(&p, &pl->in[k++])) return cg_last_error();
        if (*p == ',') {
            p++;
            continue;
        }
        break;
    }
    if (k != n)
        return cg_set_error(CG_ERR_VALUE, "[einsum] the equation has %d operand subscript(s) but %d operand(s) were given", k, n);
    pl->n = n;
    pl->explicit_out = false;
    if (*p == '-') {
        if (p[1] != '>') return cg_set_error(CG_ERR_VALUE, "[einsum] found '-' that is not part of '->'");
        p += 2;
        if (parse_term(&p, &pl->out)) return cg_last_error();
        if (*p) return cg_set_error(CG_ERR_VALUE, "[einsum] unexpected '%c' in the output subscript", *p);
        pl->explicit_out = true;
    }
    return CG_OK;
}

/* integer sums widen to int64 (keep_dtype false: PyTorch's operand.sum before a contraction, and a
 * one-operand einsum); keep_dtype true casts back */
static cg_tensor *sum_dims(cg_tensor *t, int nd, const int64_t *dims, bool keepdim, bool keep_dtype) {
    if (nd == 0) {
        cg_tensor_retain(t);
        return t;
    }
    cg_tensor *r = cg_sum(t, nd, dims, keepdim);
    if (r && keep_dtype && r->dtype != t->dtype) {
        cg_tensor *c = cg_to_dtype(r, t->dtype);
        cg_tensor_release(r);
        r = c;
    }
    return r;
}

/* Bring operand x (term t, ell_nd ellipsis dims) to the full global rank G. */
static cg_tensor *to_global(cg_tensor *x, int idx, const term *t, int E, const int *gid, int G) {
    int gd[CG_MAX_DIMS], nd = 0;
    int ell_nd = x->ndim - (t->has_ell ? t->n - 1 : t->n);
    for (int i = 0; i < t->n; i++) {
        if (t->lab[i] == ELL)
            for (int j = 0; j < ell_nd; j++) gd[nd++] = E - ell_nd + j;
        else
            gd[nd++] = gid[t->lab[i]];
    }
    cg_tensor_retain(x);
    /* repeated subscripts: take the diagonal (it moves to the last dim) */
    for (bool again = true; again;) {
        again = false;
        for (int d1 = 0; d1 < nd && !again; d1++)
            for (int d2 = d1 + 1; d2 < nd && !again; d2++) {
                if (gd[d1] != gd[d2]) continue;
                if (x->shape[d1] != x->shape[d2]) {
                    char nm[4];
                    cg_set_error(CG_ERR_SHAPE, "[einsum] subscript '%s' is repeated for operand %d but the sizes don't match, %lld != %lld",
                                 dim_name(gd[d1], gid, nm), idx, (long long)x->shape[d1], (long long)x->shape[d2]);
                    cg_tensor_release(x);
                    return NULL;
                }
                cg_tensor *dg = cg_diagonal(x, 0, d1, d2);
                cg_tensor_release(x);
                if (!(x = dg)) return NULL;
                int g = gd[d1], k = 0;
                for (int d = 0; d < nd; d++)
                    if (d != d1 && d != d2) gd[k++] = gd[d];
                gd[k++] = g;
                nd = k;
                again = true;
            }
    }
    int64_t perm[CG_MAX_DIMS], shape[CG_MAX_DIMS];
    int np = 0;
    for (int g = 0; g < G; g++) {
        shape[g] = 1;
        for (int d = 0; d < nd; d++)
            if (gd[d] == g) {
                perm[np++] = d;
                shape[g] = x->shape[d];
            }
    }
    cg_tensor *pm = cg_permute(x, perm);
    cg_tensor_release(x);
    if (!pm) return NULL;
    cg_tensor *r = cg_reshape(pm, G, shape);
    cg_tensor_release(pm);
    return r;
}

/* Contract two full-rank operands; keep[g]: dim g is needed after this pair. */
static cg_tensor *contract(cg_tensor *A, cg_tensor *B, const bool *keep, int G) {
    int64_t pa[CG_MAX_DIMS], pb[CG_MAX_DIMS], order[CG_MAX_DIMS], rshape[CG_MAX_DIMS];
    int bat[CG_MAX_DIMS], md[CG_MAX_DIMS], nd_[CG_MAX_DIMS], kd[CG_MAX_DIMS];
    int nb = 0, nm = 0, nn = 0, nk = 0;
    int64_t Bt = 1, M = 1, N = 1, K = 1;
    for (int g = 0; g < G; g++) {
        int64_t sa = A->shape[g], sb = B->shape[g];
        if (sa != 1 && sb != 1) {
            if (keep[g]) bat[nb++] = g, Bt *= sa;
            else kd[nk++] = g, K *= sa;
        } else if (sa != 1) {
            md[nm++] = g, M *= sa;
        } else if (sb != 1) {
            nd_[nn++] = g, N *= sb;
        } else {
            bat[nb++] = g;
        }
    }
    int i = 0, j = 0, o = 0;
    for (int t = 0; t < nb; t++) pa[i++] = pb[j++] = bat[t];
    for (int t = 0; t < nm; t++) pa[i++] = md[t];
    for (int t = 0; t < nk; t++) pa[i++] = pb[j++] = kd[t];
    for (int t = 0; t < nn; t++) pa[i++] = pb[j++] = nd_[t];
    for (int t = 0; t < nm; t++) pb[j++] = md[t];
    for (int t = 0; t < nb; t++) order[o] = bat[t], rshape[o++] = A->shape[bat[t]];
    for (int t = 0; t < nm; t++) order[o] = md[t], rshape[o++] = A->shape[md[t]];
    for (int t = 0; t < nn; t++) order[o] = nd_[t], rshape[o++] = B->shape[nd_[t]];
    for (int t = 0; t < nk; t++) order[o] = kd[t], rshape[o++] = 1;
    int64_t sa3[3] = {Bt, M, K}, sb3[3] = {Bt, K, N}, inv[CG_MAX_DIMS];
    for (int t = 0; t < G; t++) inv[order[t]] = t;
    cg_tensor *ap = cg_permute(A, pa), *bp = ap ? cg_permute(B, pb) : NULL;
    cg_tensor *a3 = bp ? cg_reshape(ap, 3, sa3) : NULL, *b3 = a3 ? cg_reshape(bp, 3, sb3) : NULL;
    /* With nothing summed the product is elementwise: PyTorch multiplies, which
     * autocast leaves in the input dtype, so the bmm (K = 1, the same values) does too. */
    bool ac = nk == 0 ? cg_autocast_suspend() : cg_autocast_active();
    cg_tensor *r3 = b3 ? cg_bmm(a3, b3) : NULL;
    cg_autocast_resume(ac);
    cg_tensor *rf = r3 ? cg_reshape(r3, G, rshape) : NULL;
    cg_tensor *r = rf ? cg_permute(rf, inv) : NULL;
    cg_tensor *tmp[] = {ap, bp, a3, b3, r3, rf};
    for (int t = 0; t < 6; t++) cg_tensor_release(tmp[t]);
    return r;
}

CG_PROF_FNV(cg_tensor *, cg_einsum, "einsum", (const char *equation, int n, cg_tensor *const *operands), (equation, n,
            operands), n, operands) {
    CG_CHECK(equation, CG_ERR_VALUE, "[einsum] equation is NULL");
    CG_CHECK(n >= 1 && operands, CG_ERR_VALUE, "[einsum] must provide at least one operand");
    if (cg_check_same("einsum", n, operands, 0)) return NULL;
    plan *pl = calloc(1, sizeof *pl);
    CG_CHECK(pl, CG_ERR_OOM, "[einsum] out of memory");
    cg_tensor **ops = NULL, *cur = NULL, *res = NULL;
    if (parse(equation, n, pl)) goto done;
    /* ranks, ellipsis dims, label ids */
    int E = 0, count[N_LABELS] = {0}, gid[N_LABELS], G;
    for (int i = 0; i < n; i++) {
        const term *t = &pl->in[i];
        int nlab = t->has_ell ? t->n - 1 : t->n, nd = operands[i]->ndim;
        if (t->has_ell ? nd < nlab : nd != nlab) {
            cg_set_error(CG_ERR_SHAPE, "[einsum] the subscript of operand %d names %d dimension(s) but the operand has %d%s", i,
                         nlab, nd, t->has_ell ? "" : " and no ellipsis was given");
            goto done;
        }
        if (t->has_ell && nd - nlab > E) E = nd - nlab;
        for (int k = 0; k < t->n; k++)
            if (t->lab[k] != ELL) count[t->lab[k]]++;
    }
    G = E;
    for (int l = 0; l < N_LABELS; l++) gid[l] = count[l] ? G++ : -1;
    if (G > CG_MAX_DIMS) {
        cg_set_error(CG_ERR_SHAPE, "[einsum] the equation spans %d dimensions; at most %d are supported", G, CG_MAX_DIMS);
        goto done;
    }
    /* output dims in order */
    int out[CG_MAX_DIMS], nout = 0;
    bool in_out[CG_MAX_DIMS] = {false};
    if (pl->explicit_out) {
        for (int k = 0; k < pl->out.n; k++) {
            int l = pl->out.lab[k];
            if (l == ELL) {
                for (int e = 0; e < E; e++) out[nout++] = e;
                continue;
            }
            if (gid[l] < 0) {
                cg_set_error(CG_ERR_VALUE, "[einsum] output subscript '%c' does not appear in the inputs", label_char(l));
                goto done;
            }
            if (in_out[gid[l]]) {
                cg_set_error(CG_ERR_VALUE, "[einsum] output subscript '%c' appears more than once", label_char(l));
                goto done;
            }
            out[nout++] = gid[l];
            in_out[gid[l]] = true;
        }
        for (int k = 0; k < nout; k++) in_out[out[k]] = true;
    } else {
        for (int e = 0; e < E; e++) out[nout++] = e;
        for (int l = 0; l < N_LABELS; l++)
            if (count[l] == 1) out[nout++] = gid[l];
        for (int k = 0; k < nout; k++) in_out[out[k]] = true;
    }
    /* operands at full rank; check that sizes broadcast */
    ops = calloc((size_t)n, sizeof *ops);
    if (!ops) {
        cg_set_error(CG_ERR_OOM, "[einsum] out of memory");
        goto done;
    }
    for (int i = 0; i < n; i++)
        if (!(ops[i] = to_global(operands[i], i, &pl->in[i], E, gid, G))) goto done;
    for (int g = 0; g < G; g++) {
        int64_t s = 1;
        int who = 0;
        for (int i = 0; i < n; i++) {
            int64_t si = ops[i]->shape[g];
            if (si == 1) continue;
            if (s != 1 && si != s) {
                char nm[4];
                cg_set_error(CG_ERR_SHAPE, "[einsum] operands do not broadcast: subscript '%s' has size %lld for operand %d and %lld for operand %d",
                             dim_name(g, gid, nm), (long long)s, who, (long long)si, i);
                goto done;
            }
            s = si;
            who = i;
        }
    }
    /* contract left to right */
    cur = ops[0];
    ops[0] = NULL;
    for (int i = 1; i < n; i++) {
        bool keep[CG_MAX_DIMS];
        for (int g = 0; g < G; g++) {
            keep[g] = in_out[g];
            for (int j = i + 1; j < n && !keep[g]; j++) keep[g] = ops[j]->shape[g] != 1;
        }
        int64_t da[CG_MAX_DIMS], db[CG_MAX_DIMS];
        int na = 0, nb = 0;
        for (int g = 0; g < G; g++) {
            if (keep[g]) continue;
            if (cur->shape[g] != 1 && ops[i]->shape[g] == 1) da[na++] = g;
            if (ops[i]->shape[g] != 1 && cur->shape[g] == 1) db[nb++] = g;
        }
        /* a dim only one operand has is summed first, as PyTorch's operand.sum (integers widen to int64, and
         * then the other operand too) */
        cg_tensor *a = sum_dims(cur, na, da, true, false), *b = a ? sum_dims(ops[i], nb, db, true, false) : NULL;
        if (b && a->dtype != b->dtype) {
            cg_tensor **lo = a->dtype == CG_DTYPE_I64 ? &b : &a, *w = cg_to_dtype(*lo, CG_DTYPE_I64);
            cg_tensor_release(*lo);
            *lo = w;
            if (!w) {
                cg_tensor_release(a == w ? b : a);
                a = b = NULL;
            }
        }
        cg_tensor *c = a && b ? contract(a, b, keep, G) : NULL;
        cg_tensor_release(a);
        cg_tensor_release(b);
        cg_tensor_release(cur);
        cur = c;
        if (!cur) goto done;
    }
    /* sum what is not in the output, then order the output dims */
    int64_t sd[CG_MAX_DIMS], perm[CG_MAX_DIMS];
    int ns = 0, pos[CG_MAX_DIMS], kept = 0;
    for (int g = 0; g < G; g++) {
        if (in_out[g]) pos[g] = kept++;
        else sd[ns++] = g;
    }
    cg_tensor *s = sum_dims(cur, ns, sd, false, n > 1);
    if (!s) goto done;
    for (int k = 0; k < nout; k++) perm[k] = pos[out[k]];
    res = cg_permute(s, perm);
    cg_tensor_release(s);
done:
    if (ops)
        for (int i = 0; i < n; i++) cg_tensor_release(ops[i]);
    free(ops);
    cg_tensor_release(cur);
    free(pl);
    return res;
}

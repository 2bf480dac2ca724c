/* kernels.h — internal: the per-device entries of the custom kernels, the ops
 * whose compute is neither an elementwise formula nor a reduction (softmax,
 * conv, pool, norm, sort / scan, indexing, gather / scatter, RNG, losses,
 * optimizer steps, BLAS products). One table of entries per backend (Note
 * [Kernel entries]). Knows nothing of autograd or op descriptors. */
#ifndef CG_BACKEND_KERNELS_H
#define CG_BACKEND_KERNELS_H

#include "../core/core_internal.h"

struct cg_iter; /* the iterator plan (backend.h) */

/* Note [Kernel entries]: the op (src/ops) validates its arguments, infers the
 * output shapes, allocates the outputs on the inputs' device, prepares its
 * inputs (contiguous copies and casts, which run through the backend) and
 * wires the graph; the entry only computes values into the outputs it is
 * handed. Entries take tensors of their backend's device and return CG_OK, or
 * a failure status with the error set (CG_ERR_OOM for scratch memory). Ops
 * call them through CG_RUN_KERNEL (src/dispatch/dispatch_internal.h): on a
 * device that stores no data (meta) nothing runs, and a device whose table
 * lacks the entry fails with CG_ERR_NOT_IMPLEMENTED naming the op and the
 * device. The CPU's entries are in src/backend/cpu/cpu_kernels.c.
 *
 * Sections are kept one per op family, in the order of the families' files. */
/* The geometry of an N-d convolution (Note [Conv geometry], src/backend/cpu/conv_internal.h); the conv
 * entries take it. */
typedef struct cg_conv_geom {
    int nsp;         /* 1, 2 or 3 user-visible spatial dims */
    int64_t n;       /* batch */
    int64_t cin, cout, groups;
    int64_t in[3], out[3], k[3], stride[3], pad[3] /* before */, dil[3];
    bool channels_last; /* the operands are dense channels-last, not contiguous (Note [Channels-last conv]) */
} cg_conv_geom;

/* Which of the three linear maps of one conv geometry an entry runs (Note [Conv geometry]). */
typedef enum cg_conv_kind { CG_CONV_FORWARD = 0, CG_CONV_TRANSPOSE = 1, CG_CONV_WEIGHT_GRAD = 2 } cg_conv_kind;

/* Note [Pool windows]: an input (lead..., in...) is `planes` = prod(lead)
 * independent planes of the canonical 3-D spatial shape `in` (leading 1s).
 * Output position o of dim c reads positions start + j*step, j < count,
 * skipping those outside [0, in[c]):
 *   fixed:    start = o*stride - pad, count = kernel, step = dilation;
 *   adaptive: start = floor(o*I/O), count = ceil((o+1)*I/O) - start, step = 1.
 * The avg divisor is divisor_override, or the product over dims of each
 * window's size — clipped to [-pad, in+pad) with count_include_pad, to the
 * input otherwise (PyTorch's rule); an empty window averages to 0.
 * channels picks the memory layout of every operand (Note [Channels-last pool], src/ops/nn_pool.c):
 * 0 is planar, each (planes, spatial...) contiguous; C > 0 is channels-last, (batch, spatial..., C)
 * contiguous (the NHWC / NDHWC memory of a channels_last tensor), planes = batch * C. */
typedef struct cg_pool_geom {
    int nsp;
    bool adaptive, count_include_pad;
    int64_t divisor; /* 0 = none */
    int64_t channels; /* 0 = planar layout, else C of the channels-last layout */
    int64_t in[3], out[3], k[3], s[3], p[3], d[3];
} cg_pool_geom;

/* The common geometry: no padding, no dilation, every window inside the input, not adaptive, planar. */
static inline bool cg_pool_simple_windows(const cg_pool_geom *g) {
    if (g->adaptive || g->channels) return false;
    for (int c = 0; c < 3; c++)
        if (g->p[c] != 0 || g->d[c] != 1 || (g->out[c] - 1) * g->s[c] + g->k[c] > g->in[c]) return false;
    return true;
}
/* The 2-D 2x2 window with stride 2, whose argmax can be kept as int32 tap
 * codes 0..3 (row-major in the window; Note [2x2 max pool], src/backend/cpu/pool.c). */
static inline bool cg_pool_2x2(const cg_pool_geom *g) {
    return cg_pool_simple_windows(g) && g->k[0] == 1 && g->s[0] == 1 && g->k[1] == 2 && g->k[2] == 2 &&
           g->s[1] == 2 && g->s[2] == 2;
}

/* Which pool kernel an entry runs. */
typedef enum cg_pool_kind { CG_POOL_MAX = 0, CG_POOL_AVG = 1, CG_POOL_AVG_BACKWARD = 2 } cg_pool_kind;

/* the optimizers of the optim_step entry; its operands: param, grad and up to four states */
typedef enum cg_optim_kind {
    CG_OPTIM_SGD = 0,
    CG_OPTIM_ADAM,
    CG_OPTIM_RMSPROP,
    CG_OPTIM_ADAGRAD,
    CG_OPTIM_ADADELTA,
    CG_OPTIM_ADAMAX,
    CG_OPTIM_NADAM,
    CG_OPTIM_RADAM,
    CG_OPTIM_RPROP,
    CG_OPTIM_ASGD
} cg_optim_kind;
#define CG_OPTIM_OPERANDS 6

/* the scans of the scan entry (src/ops/scan.c) */
typedef enum cg_scan_kind { CG_SCAN_SUM = 0, CG_SCAN_PROD = 1, CG_SCAN_MAX = 2 } cg_scan_kind;

/* the samplers of the sample entry (Note [RNG offsets], src/ops/random.c) and their arguments */
typedef enum cg_sample_kind {
    CG_SAMPLE_UNIFORM = 0, /* a + u * (b - a) */
    CG_SAMPLE_NORMAL,      /* a + b * z */
    CG_SAMPLE_RANDINT,     /* low + r % range */
    CG_SAMPLE_BERNOULLI,   /* u < a */
    CG_SAMPLE_BERNOULLI_P, /* u < p[i] */
} cg_sample_kind;
typedef struct cg_sample_args {
    cg_sample_kind kind;
    double a, b;
    int64_t low;
    uint64_t range;
    const cg_tensor *p; /* CG_SAMPLE_BERNOULLI_P: contiguous floating, the output's numel */
} cg_sample_args;

typedef struct cg_kernels {
    /* ---- softmax (src/ops/softmax.c): along `dim` of contiguous tensors of one shape */
    cg_status (*softmax)(cg_tensor *y, const cg_tensor *x, int64_t dim, bool log);
    cg_status (*softmax_backward)(cg_tensor *gx, const cg_tensor *g, const cg_tensor *y, int64_t dim, bool log);

    /* ---- BLAS products, convolution, pooling, recurrent cells (src/ops/linalg.c, nn_linear.c, nn_conv.c,
     *      nn_pool.c, nn_rnn.c) */
    /* the GEMM's operand rules, for the op's preparation: *max_dim <- the largest extent / leading dimension
     * it indexes; *ok <- whether a (rows, cols) matrix with element strides rs, cs is read in place (else the
     * op passes a contiguous copy) */
    cg_status (*gemm_max_dim)(int64_t *max_dim);
    cg_status (*gemm_layout)(int64_t rows, int64_t cols, int64_t rs, int64_t cs, bool *ok);
    /* c = alpha * a @ b + beta * c (beta 0: c is not read) over the broadcast batch: a (batch_a..., m, k) or
     * (k), a row; b (batch_b..., k, n) or (k), a column; c contiguous (batch..., [m], [n]), the batch dims
     * broadcast (size-1 / missing dims of a and b repeat). a, b of one dtype: float32 / float64 / an integer
     * dtype with c of that dtype and float matrices readable in place (gemm_layout, extents <= gemm_max_dim),
     * or bfloat16 / float16 with any strides and c float32 (Note [Half GEMM]). */
    cg_status (*gemm)(cg_tensor *c, const cg_tensor *a, const cg_tensor *b, double alpha, double beta);
    /* the conv map `kind` of geometry g into out (Note [Conv geometry]), all tensors contiguous:
     *   CG_CONV_FORWARD:     a = x (N,cin,in..),   b = w (cout,cin/g,k..), bias (cout) or NULL -> out (N,cout,out..)
     *   CG_CONV_TRANSPOSE:   a = y (N,cout,out..), b = w,                  bias (cin) or NULL  -> out (N,cin,in..)
     *   CG_CONV_WEIGHT_GRAD: a = x (N,cin,in..),   b = y (N,cout,out..), bias NULL           -> out (cout,cin/g,k..)
     * out (and w, bias) float32 / float64; a (and b for the weight grad) of out's dtype, or bfloat16 / float16
     * when out is float32 (Note [Half conv]). With g->channels_last, every tensor of 2+ spatial dims is
     * dense channels-last instead (Note [Channels-last conv]; float dtypes only). */
    cg_status (*conv)(cg_conv_kind kind, const cg_conv_geom *g, cg_tensor *out, const cg_tensor *a,
                      const cg_tensor *b, const cg_tensor *bias);
    /* out (C) = the sums of g (N, C, spatial...) over every dim but the channel; float32 / float64, contiguous
     * or dense channels-last */
    cg_status (*conv_bias_grad)(cg_tensor *out, const cg_tensor *g);
    /* pool geometry g (Note [Pool windows]) over float32 / float64 (or int64: Note [Integer pool]) tensors of
     * one dtype, dense in g's layout: (planes, spatial...) contiguous, or (batch, spatial..., C) when
     * g->channels (Note [Channels-last pool]); shapes below are the planar ones:
     *   CG_POOL_MAX:          src (planes, in..) -> dst (planes, out..) and idx: int64 flat argmax indices into
     *                         the plane, or (cg_pool_2x2 geometries only) int32 tap codes, or NULL (values only)
     *   CG_POOL_AVG:          src (planes, in..) -> dst (planes, out..), idx NULL
     *   CG_POOL_AVG_BACKWARD: src (planes, out..) -> dst (planes, in..), its adjoint, idx NULL */
    cg_status (*pool)(cg_pool_kind kind, const cg_pool_geom *g, cg_tensor *dst, cg_tensor *idx, const cg_tensor *src);
    /* the first-order max pool backward: gx (planes, in..) = zeros, then gx[argmax] += gy (planes, out..); idx
     * as CG_POOL_MAX wrote it (int64 indices or int32 codes); gx, gy float32 / float64, all dense in g's
     * layout */
    cg_status (*max_pool_backward)(const cg_pool_geom *g, cg_tensor *gx, const cg_tensor *gy, const cg_tensor *idx);
    /* index (int64) <- the flat indices of int32 tap codes (a cg_pool_2x2 geometry), contiguous, one shape */
    cg_status (*max_pool_codes_to_index)(const cg_pool_geom *g, cg_tensor *index, const cg_tensor *codes);
    /* the LSTM layer of one direction (Note [LSTM layer], src/ops/nn_rnn.c), contiguous float32 / float64:
     * from xp (T, B, 4H), h0, c0 (B, H), w_hh (4H, H) -> acts (T, B, 4H) the activated gates, cells and out
     * (T, B, H) the cell and hidden states per step, hn, cn (B, H) the last ones */
    cg_status (*lstm_layer)(bool reverse, cg_tensor *acts, cg_tensor *cells, cg_tensor *out, cg_tensor *hn,
                            cg_tensor *cn, const cg_tensor *xp, const cg_tensor *h0, const cg_tensor *c0,
                            const cg_tensor *w);
    /* its first-order backward from the forward's saved tensors: dh, dc (B, H) hold the incoming gradients of
     * hn, cn and get those of h0, c0; go (T, B, H) the gradient of out; dG (T, B, 4H) <- the gradient of xp;
     * dw (4H, H) <- that of w_hh, or NULL when not needed */
    cg_status (*lstm_layer_backward)(bool reverse, cg_tensor *dG, cg_tensor *dh, cg_tensor *dc, cg_tensor *dw,
                                     const cg_tensor *go, const cg_tensor *acts, const cg_tensor *cells,
                                     const cg_tensor *out, const cg_tensor *h0, const cg_tensor *c0,
                                     const cg_tensor *w);

    /* ---- normalization, losses, resampling and the other nn kernels, RNG (src/ops/nn_norm.c, nn_loss.c,
     *      nn_misc.c, nn_resample.c, random.c) */
    /* host values: out (numel doubles) <- t's elements in row-major order (any dtype, any strides) */
    cg_status (*load_values)(const cg_tensor *t, double *out);
    /* t's elements in row-major order (any strides) <- v (numel doubles), rounded to t's dtype */
    cg_status (*store_values)(cg_tensor *t, const double *v);
    /* *found, and *bad <- the first element of contiguous t (any dtype) outside [lo, hi], NaN included */
    cg_status (*find_outside)(const cg_tensor *t, double lo, double hi, bool *found, double *bad);
    /* normalization (Note [Normalization as (P, Q, R)], src/ops/nn_norm.c), contiguous floating tensors of one
     * dtype: y <- xhat of x (P, Q, R), mean / var (Q doubles) <- the statistics (biased variance) */
    cg_status (*norm)(cg_tensor *y, const cg_tensor *x, double eps, double *mean, double *var);
    /* gx (P, Q, R) <- invstd * (g - mean_PR(g) - xhat * mean_PR(g * xhat)); g, x (P, Q, R) contiguous, mean and
     * invstd (1, Q, 1) any strides and floating dtype */
    cg_status (*norm_backward)(cg_tensor *gx, const cg_tensor *g, const cg_tensor *x, const cg_tensor *mean,
                               const cg_tensor *invstd);
    /* batch norm over x (N, C, *) contiguous, per-channel arrays of C doubles (Note [Batch norm kernels],
     * src/backend/cpu/batch_norm.c): the training forward (w, b NULL: 1 and 0; mean / var <- the biased
     * statistics), the transform y = x * alpha[c] + beta[c], and the first-order backward (sum_g, sum_gxm <-
     * the sums of g and g * (x - mean); gx NULL: not computed) */
    cg_status (*batch_norm)(cg_tensor *y, const cg_tensor *x, const double *w, const double *b, double eps,
                            double *mean, double *var);
    cg_status (*batch_norm_transform)(cg_tensor *y, const cg_tensor *x, const double *alpha, const double *beta);
    cg_status (*batch_norm_backward)(cg_tensor *gx, const cg_tensor *g, const cg_tensor *x, const double *mean,
                                     const double *invstd, const double *w, double *sum_g, double *sum_gxm);
    /* losses: *found, and *bad <- the first element of contiguous int64 t that is not ignore and outside [0, C) */
    cg_status (*class_target_check)(const cg_tensor *t, int64_t C, int64_t ignore, bool *found, int64_t *bad);
    /* dropout: m (contiguous floating) <- kept where the stream's uniform u_i < keep, else 0 (Note [Dropout
     * masks], src/ops/nn_misc.c); reserves ceil(numel / 2) counters of the global generator */
    cg_status (*dropout_mask)(cg_tensor *m, double keep, double kept);
    /* interpolate of uint8 (Note [uint8 resampling], src/ops/nn_resample.c): along the middle dim of x (P, In, R)
     * contiguous, y (P, O, R) contiguous <- at output position o: clamp((2^(prec-1) + sum_{j < count[o]}
     * x[start[o] + j] * w[o * K + j]) >> prec, 0, 255) (start, count (O,); w (O, K) int16) */
    cg_status (*resample_u8)(cg_tensor *y, const cg_tensor *x, int64_t P, int64_t In, int64_t O, int64_t R,
                             const int64_t *start, const int64_t *count, const int16_t *w, int64_t K, unsigned prec);
    /* embedding: out (n, D) contiguous <- rows idx (n,) (contiguous int64, in range) of w (V, D) contiguous */
    cg_status (*embedding)(cg_tensor *out, const cg_tensor *w, const cg_tensor *idx);
    /* w (V, D) any strides, in place: each row named in idx (contiguous int64, in range) whose norm_type-norm
     * exceeds max_norm is scaled to max_norm / (norm + 1e-7) */
    cg_status (*embedding_renorm)(cg_tensor *w, const cg_tensor *idx, double max_norm, double norm_type);
    /* one_hot: over contiguous int64 idx, *negative and *bad <- the first negative value, else *max <- the
     * largest (-1 when empty) */
    cg_status (*one_hot_scan)(const cg_tensor *idx, bool *negative, int64_t *bad, int64_t *max);
    /* out (n, num_classes) int64 contiguous, zeros <- 1 at column idx[i] of row i (idx contiguous int64) */
    cg_status (*one_hot)(cg_tensor *out, const cg_tensor *idx);
    /* m (L, S) bool contiguous <- j <= i */
    cg_status (*causal_mask)(cg_tensor *m);
    /* RNG (src/ops/random.c): out (contiguous) <- the sampler's values for elements 0..numel-1, reserving
     * ceil(numel / 2) counters of the global generator */
    cg_status (*sample)(cg_tensor *out, const cg_sample_args *a);
    /* out (n,) contiguous integer <- a random permutation of 0..n-1 (Fisher-Yates); reserves ceil(n / 2) */
    cg_status (*randperm)(cg_tensor *out);
    /* out (rows, num_samples) int64 contiguous <- samples of the categories of probs (rows, ncat) contiguous
     * floating (validated first: CG_ERR_VALUE "[multinomial] ..."); reserves ceil(rows * num_samples / 2)
     * counters with replacement, ceil(rows * ncat / 2) without */
    cg_status (*multinomial)(cg_tensor *out, const cg_tensor *probs, int64_t num_samples, bool replacement);

    /* ---- creation, indexing, gather / scatter, sort, scan, repeat, copies (src/ops/creation.c, indexing.c,
     *      advanced_index.c, gather_scatter.c, sort.c, scan.c, repeat.c, slicing.c, views.c, copy.c) */
    /* creation: out (n,) contiguous <- start + i * step; integer dtypes from the truncated int64 istart /
     * istep, wrapped to the dtype (Note [arange of an integer dtype]), the others in double */
    cg_status (*arange)(cg_tensor *out, double start, double step, int64_t istart, int64_t istep);
    /* out (steps,) contiguous <- the linspace values (base ** v when log): i < halfway counts up from start,
     * the rest down from end; start, end, step already as the dtype holds them (src/ops/creation.c) */
    cg_status (*linspace)(cg_tensor *out, double start, double end, double step, int64_t halfway, bool log,
                          double base);
    /* out (n, m) contiguous <- ones on the main diagonal, zeros elsewhere */
    cg_status (*eye)(cg_tensor *out);
    /* gather / scatter (any strides; index int64, 0-d counts as (1,)): every index is checked against the
     * target's size along dim first (CG_ERR_INDEX "[op] index ... is out of bounds ...", nothing written),
     * then the index is walked in row-major order on one thread (Note [Deterministic scatter]).
     * gather: out (index-shaped, contiguous) <- x[..., index, ...] along dim */
    cg_status (*gather)(cg_tensor *out, const cg_tensor *x, const cg_tensor *index, int64_t dim);
    /* scatter: out (contiguous, holding x) <- src scattered along dim; mode 0 copy, 1 sum, 2 prod, 3 mean,
     * 4 amax, 5 amin; include_self false: a slot's first write copies; op names the caller in errors */
    cg_status (*scatter)(const char *op, cg_tensor *out, const cg_tensor *index, const cg_tensor *src, int64_t dim,
                         int mode, bool include_self);
    /* indexing: *count <- the number of nonzero elements of contiguous x (any dtype) */
    cg_status (*nonzero_count)(const cg_tensor *x, int64_t *count);
    /* out (count, ndim) int64 <- the coordinates of the nonzero elements of contiguous x, row-major order */
    cg_status (*nonzero)(cg_tensor *out, const cg_tensor *x);
    /* *found, and *bad <- the first value of contiguous int64 t outside [lo, hi) */
    cg_status (*index_find_out_of_range)(const cg_tensor *t, int64_t lo, int64_t hi, bool *found, int64_t *bad);
    /* advanced indexing (Note [Index plan], src/ops/advanced_index.c): off (the broadcast index shape B,
     * contiguous int64) <- sum_k wrap(idx[k]) * x.stride[k] for every position of B; idx[d] (d < x->ndim):
     * NULL (a full slice) or contiguous int64 broadcasting to B; CG_ERR_INDEX "[op] index ... is out of
     * bounds ..." for an index outside its dim (only x's geometry is read) */
    cg_status (*index_offsets)(const char *op, cg_tensor *off, const cg_tensor *x, cg_tensor *const *idx);
    /* the entries over iterator plans get the device of the plan's tensors (dev), as the generic runners do */
    /* the plan's iterator (cg_iter_init over the result shape): args[0] out, args[1] x restrided (stride 0 on
     * B), args[2] the int64 offsets: out = x[base + off] (elements of itemsize bytes) */
    cg_status (*index_gather)(cg_device dev, const struct cg_iter *it, size_t itemsize);
    /* args[0] x restrided, args[1] values (broadcast), args[2] offsets: x[base + off] = v, or += v when
     * accumulate (by dtype dt), in row-major order on one thread (duplicates resolve deterministically) */
    cg_status (*index_put)(cg_device dev, const struct cg_iter *it, cg_dtype dt, bool accumulate);
    /* sort / scan: the lines along dim of tensors of one shape but there (0-d: one line of length 1), any
     * strides. sort: indices (int64) and values (x's dtype; NULL: not wanted) <- the first k of each line of
     * x sorted stably (ties keep their order either way; NaN is the largest; descending when desc); op names
     * the caller in errors (CG_ERR_OOM for the line scratch) */
    cg_status (*sort)(const char *op, cg_tensor *values, cg_tensor *indices, const cg_tensor *x, int64_t dim,
                      int64_t k, bool desc);
    /* CG_SCAN_SUM / CG_SCAN_PROD: out <- the running sum / product of x along dim (from the end when
     * reverse), accumulated in double for floating x (out: x's dtype), in wrapping 64-bit integers otherwise
     * (out int64); indices NULL. CG_SCAN_MAX: out (x's dtype) the running max, indices (int64) its index (ties
     * take the later one, NaN propagates), reverse false. Each line is computed in order. */
    cg_status (*scan)(cg_scan_kind kind, cg_tensor *out, cg_tensor *indices, const cg_tensor *x, int64_t dim,
                      bool reverse);
    /* repeat.c: out (..., R, C) contiguous <- x (any strides) keeping columns j <= i + diagonal (tril) or
     * j >= i + diagonal (upper: triu) of each row i, zeros elsewhere */
    cg_status (*tril_triu)(cg_tensor *out, const cg_tensor *x, int64_t diagonal, bool upper);
    /* slicing.c (Note [Strided scatter]): args[0] (a view that may overlap itself) += args[1], float32 /
     * float64 / float16 / bfloat16 dt, element by element in the plan's order on one thread */
    cg_status (*strided_accumulate)(cg_device dev, const struct cg_iter *it, cg_dtype dt);

    /* ---- reductions and optimizer steps (src/ops/reduce*.c, src/optim) */
    /* one parameter's update in place: t[0] the parameter, t[1] its gradient, t[2..] the optimizer's states in
     * its argument order (contiguous, of the parameter's dtype and shape; NULL: unused); s: the per-parameter
     * scalars; opt: that optimizer's options (cg_sgd_options, ...); first: SGD's momentum buffer is new */
    cg_status (*optim_step)(cg_optim_kind kind, cg_tensor *const *t, const double *s, bool first, const void *opt);
    /* x *= inv_scale in place (contiguous, floating); *found_inf = true when an element was inf or NaN */
    cg_status (*amp_unscale)(cg_tensor *x, float inv_scale, bool *found_inf);
} cg_kernels;

#endif

/* cpu_kernels.h — internal: the CPU's reduction runner and its custom-kernel
 * entries (Note [Kernel entries], src/backend/kernels.h), one section per op
 * family, collected in the table cg_cpu_kernels (cpu_kernels.c). */
#ifndef CG_CPU_KERNELS_H
#define CG_CPU_KERNELS_H

#include "../backend.h"

extern const cg_kernels cg_cpu_kernels;

/* the reduction runner (reduce_run.c) and the loop of a kind for an input dtype (NULL: none) */
void cg_cpu_run_reduce(const cg_reduce_plan *plan);
cg_reduce_loop cg_cpu_reduce_loop(cg_reduce_kind kind, cg_dtype dt);
/* the copy runner and fill (copy.c); the loop copying src-dtype elements into dst-dtype ones */
void cg_cpu_copy(const cg_iter *plan, cg_dtype dst, cg_dtype src);
void cg_cpu_fill(const cg_iter *plan, const void *value, size_t itemsize);
cg_loop_fn cg_cpu_cast_loop(cg_dtype dst, cg_dtype src);

/* ---- softmax (softmax.c) */
cg_status cg_cpu_softmax(cg_tensor *y, const cg_tensor *x, int64_t dim, bool log);
cg_status cg_cpu_softmax_backward(cg_tensor *gx, const cg_tensor *g, const cg_tensor *y, int64_t dim, bool log);

/* ---- BLAS products, convolution, pooling, recurrent cells */
/* matmul.c */
cg_status cg_cpu_gemm_max_dim(int64_t *max_dim);
cg_status cg_cpu_gemm_layout(int64_t rows, int64_t cols, int64_t rs, int64_t cs, bool *ok);
cg_status cg_cpu_gemm(cg_tensor *c, const cg_tensor *a, const cg_tensor *b, double alpha, double beta);
/* conv.c */
cg_status cg_cpu_conv(cg_conv_kind kind, const cg_conv_geom *g, cg_tensor *out, const cg_tensor *a, const cg_tensor *b,
                      const cg_tensor *bias);
cg_status cg_cpu_conv_bias_grad(cg_tensor *out, const cg_tensor *g);
/* pool.c */
cg_status cg_cpu_pool(cg_pool_kind kind, const cg_pool_geom *g, cg_tensor *dst, cg_tensor *idx, const cg_tensor *src);
cg_status cg_cpu_max_pool_backward(const cg_pool_geom *g, cg_tensor *gx, const cg_tensor *gy, const cg_tensor *idx);
cg_status cg_cpu_max_pool_codes_to_index(const cg_pool_geom *g, cg_tensor *index, const cg_tensor *codes);
/* rnn.c */
cg_status cg_cpu_lstm_layer(bool reverse, cg_tensor *acts, cg_tensor *cells, cg_tensor *out, cg_tensor *hn,
                            cg_tensor *cn, const cg_tensor *xp, const cg_tensor *h0, const cg_tensor *c0,
                            const cg_tensor *w);
cg_status cg_cpu_lstm_layer_backward(bool reverse, cg_tensor *dG, cg_tensor *dh, cg_tensor *dc, cg_tensor *dw,
                                     const cg_tensor *go, const cg_tensor *acts, const cg_tensor *cells,
                                     const cg_tensor *out, const cg_tensor *h0, const cg_tensor *c0,
                                     const cg_tensor *w);

/* ---- normalization, losses, resampling and the other nn kernels, RNG */
/* norm.c */
cg_status cg_cpu_load_values(const cg_tensor *t, double *out);
cg_status cg_cpu_store_values(cg_tensor *t, const double *v);
cg_status cg_cpu_norm(cg_tensor *y, const cg_tensor *x, double eps, double *mean, double *var);
cg_status cg_cpu_norm_backward(cg_tensor *gx, const cg_tensor *g, const cg_tensor *x, const cg_tensor *mean,
                               const cg_tensor *invstd);
cg_status cg_cpu_batch_norm(cg_tensor *y, const cg_tensor *x, const double *w, const double *b, double eps,
                            double *mean, double *var);
cg_status cg_cpu_batch_norm_transform(cg_tensor *y, const cg_tensor *x, const double *alpha, const double *beta);
cg_status cg_cpu_batch_norm_backward(cg_tensor *gx, const cg_tensor *g, const cg_tensor *x, const double *mean,
                                     const double *invstd, const double *w, double *sum_g, double *sum_gxm);
/* loss.c */
cg_status cg_cpu_find_outside(const cg_tensor *t, double lo, double hi, bool *found, double *bad);
cg_status cg_cpu_class_target_check(const cg_tensor *t, int64_t C, int64_t ignore, bool *found, int64_t *bad);
/* nn_misc.c */
cg_status cg_cpu_dropout_mask(cg_tensor *m, double keep, double kept);
cg_status cg_cpu_embedding(cg_tensor *out, const cg_tensor *w, const cg_tensor *idx);
cg_status cg_cpu_embedding_renorm(cg_tensor *w, const cg_tensor *idx, double max_norm, double norm_type);
cg_status cg_cpu_one_hot_scan(const cg_tensor *idx, bool *negative, int64_t *bad, int64_t *max);
cg_status cg_cpu_one_hot(cg_tensor *out, const cg_tensor *idx);
cg_status cg_cpu_causal_mask(cg_tensor *m);
/* resample.c */
cg_status cg_cpu_resample_u8(cg_tensor *y, const cg_tensor *x, int64_t P, int64_t In, int64_t O, int64_t R,
                             const int64_t *start, const int64_t *count, const int16_t *w, int64_t K, unsigned prec);
/* random.c */
cg_status cg_cpu_sample(cg_tensor *out, const cg_sample_args *a);
cg_status cg_cpu_randperm(cg_tensor *out);
cg_status cg_cpu_multinomial(cg_tensor *out, const cg_tensor *probs, int64_t num_samples, bool replacement);

/* ---- creation, indexing, gather / scatter, sort, scan, repeat, copies */
cg_status cg_cpu_arange(cg_tensor *out, double start, double step, int64_t istart, int64_t istep);
cg_status cg_cpu_linspace(cg_tensor *out, double start, double end, double step, int64_t halfway, bool log,
                          double base);
cg_status cg_cpu_eye(cg_tensor *out);
cg_status cg_cpu_gather(cg_tensor *out, const cg_tensor *x, const cg_tensor *index, int64_t dim);
cg_status cg_cpu_scatter(const char *op, cg_tensor *out, const cg_tensor *index, const cg_tensor *src, int64_t dim,
                         int mode, bool include_self);
cg_status cg_cpu_nonzero_count(const cg_tensor *x, int64_t *count);
cg_status cg_cpu_nonzero(cg_tensor *out, const cg_tensor *x);
cg_status cg_cpu_index_find_out_of_range(const cg_tensor *t, int64_t lo, int64_t hi, bool *found, int64_t *bad);
cg_status cg_cpu_index_offsets(const char *op, cg_tensor *off, const cg_tensor *x, cg_tensor *const *idx);
cg_status cg_cpu_index_gather(cg_device dev, const cg_iter *it, size_t itemsize);
cg_status cg_cpu_index_put(cg_device dev, const cg_iter *it, cg_dtype dt, bool accumulate);
/* sort.c, scan.c */
cg_status cg_cpu_sort(const char *op, cg_tensor *values, cg_tensor *indices, const cg_tensor *x, int64_t dim,
                      int64_t k, bool desc);
cg_status cg_cpu_scan(cg_scan_kind kind, cg_tensor *out, cg_tensor *indices, const cg_tensor *x, int64_t dim,
                      bool reverse);
/* repeat.c, slicing.c */
cg_status cg_cpu_tril_triu(cg_tensor *out, const cg_tensor *x, int64_t diagonal, bool upper);
cg_status cg_cpu_strided_accumulate(cg_device dev, const cg_iter *it, cg_dtype dt);

/* ---- reductions and optimizer steps (optim_steps.c) */
cg_status cg_cpu_optim_step(cg_optim_kind kind, cg_tensor *const *t, const double *s, bool first, const void *opt);
cg_status cg_cpu_amp_unscale(cg_tensor *x, float inv_scale, bool *found_inf);

#endif

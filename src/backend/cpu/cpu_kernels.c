/* cpu_kernels.c — the CPU's table of custom-kernel entries (Note [Kernel
 * entries]), one section per op family as in src/backend/kernels.h. */
#include "cpu_kernels.h"

const cg_kernels cg_cpu_kernels = {
    /* ---- softmax */
    .softmax = cg_cpu_softmax,
    .softmax_backward = cg_cpu_softmax_backward,

    /* ---- BLAS products, convolution, pooling, recurrent cells */
    .gemm_max_dim = cg_cpu_gemm_max_dim,
    .gemm_layout = cg_cpu_gemm_layout,
    .gemm = cg_cpu_gemm,
    .conv = cg_cpu_conv,
    .conv_bias_grad = cg_cpu_conv_bias_grad,
    .pool = cg_cpu_pool,
    .max_pool_backward = cg_cpu_max_pool_backward,
    .max_pool_codes_to_index = cg_cpu_max_pool_codes_to_index,
    .lstm_layer = cg_cpu_lstm_layer,
    .lstm_layer_backward = cg_cpu_lstm_layer_backward,

    /* ---- normalization, losses, resampling and the other nn kernels, RNG */
    .load_values = cg_cpu_load_values,
    .store_values = cg_cpu_store_values,
    .find_outside = cg_cpu_find_outside,
    .norm = cg_cpu_norm,
    .norm_backward = cg_cpu_norm_backward,
    .batch_norm = cg_cpu_batch_norm,
    .batch_norm_transform = cg_cpu_batch_norm_transform,
    .batch_norm_backward = cg_cpu_batch_norm_backward,
    .class_target_check = cg_cpu_class_target_check,
    .dropout_mask = cg_cpu_dropout_mask,
    .resample_u8 = cg_cpu_resample_u8,
    .embedding = cg_cpu_embedding,
    .embedding_renorm = cg_cpu_embedding_renorm,
    .one_hot_scan = cg_cpu_one_hot_scan,
    .one_hot = cg_cpu_one_hot,
    .causal_mask = cg_cpu_causal_mask,
    .sample = cg_cpu_sample,
    .randperm = cg_cpu_randperm,
    .multinomial = cg_cpu_multinomial,

    /* ---- creation, indexing, gather / scatter, sort, scan, repeat, copies */
    .arange = cg_cpu_arange,
    .linspace = cg_cpu_linspace,
    .eye = cg_cpu_eye,
    .gather = cg_cpu_gather,
    .scatter = cg_cpu_scatter,
    .nonzero_count = cg_cpu_nonzero_count,
    .nonzero = cg_cpu_nonzero,
    .index_find_out_of_range = cg_cpu_index_find_out_of_range,
    .index_offsets = cg_cpu_index_offsets,
    .index_gather = cg_cpu_index_gather,
    .index_put = cg_cpu_index_put,
    .sort = cg_cpu_sort,
    .scan = cg_cpu_scan,
    .tril_triu = cg_cpu_tril_triu,
    .strided_accumulate = cg_cpu_strided_accumulate,

    /* ---- reductions and optimizer steps */
    .optim_step = cg_cpu_optim_step,
    .amp_unscale = cg_cpu_amp_unscale,
};

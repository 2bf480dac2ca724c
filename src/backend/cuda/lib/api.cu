/* api.cu — the kernel library's one export, cgcu_get_api: the table of its
 * entry points (cuda_abi.h), gathered from the other files. */
#include "cgcu_internal.cuh"

static const cgcu_api k_api = {
    CGCU_ABI_VERSION,
    cgcu_error_string,
    cgcu_device_count,
    cgcu_properties,
    cgcu_malloc,
    cgcu_free,
    cgcu_mem_info,
    cgcu_copy_h2d,
    cgcu_copy_d2h,
    cgcu_synchronize,
    cgcu_elementwise,
    cgcu_cast,
    cgcu_fill,
    cgcu_reduce,
    cgcu_gemm,
    cgcu_softmax,
    cgcu_softmax_backward,
    cgcu_index_gather,
    cgcu_index_put,
    cgcu_embedding,
    cgcu_dropout_mask,
    cgcu_optim_step,
};

extern "C" __attribute__((visibility("default"))) const cgcu_api *cgcu_get_api(int abi_version) {
    return abi_version == CGCU_ABI_VERSION ? &k_api : NULL;
}

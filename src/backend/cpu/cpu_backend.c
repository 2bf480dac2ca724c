/* cpu_backend.c — the CPU's entry in the backend table (Note [Backends]):
 * host memory from the caching allocator (src/core/allocator.c), memcpy for
 * copies, work done when a call returns, and the plan runners over the
 * thread pool. */
#include "cpu_kernels.h"

#include <string.h>

static void *cpu_alloc(size_t nbytes, cg_device dev) { return cg_alloc(nbytes, dev); }
static void cpu_free(void *p, size_t nbytes, cg_device dev) { cg_free(p, nbytes, dev); }
static void cpu_copy(void *dst, const void *src, size_t nbytes, cg_device dev) {
    (void)dev;
    if (nbytes) memcpy(dst, src, nbytes);
}
static void cpu_synchronize(cg_device dev) { (void)dev; }

static void cpu_run_elementwise(const cg_iter *plan, int op_id, cg_dtype dt, cg_loop_fn host_loop, const void *params,
                                int64_t grain) {
    (void)op_id;
    (void)dt;
    cg_iter_run(plan, host_loop, params, grain);
}

/* args[0] <- the value at args[1] (step 0), params: the item size */
static void fill_loop(char **args, const int64_t *steps, int64_t n, const void *params) {
    size_t isz = (size_t)(uintptr_t)params;
    char *o = args[0];
    const char *v = args[1];
    switch (isz) {
#define FILL_FIXED(T)                                                      \
    {                                                                      \
        T x;                                                               \
        memcpy(&x, v, sizeof x);                                           \
        if (steps[0] == (int64_t)sizeof(T))                                \
            for (int64_t k = 0; k < n; k++) ((T *)(void *)o)[k] = x;       \
        else                                                               \
            for (int64_t k = 0; k < n; k++) memcpy(o + k * steps[0], &x, sizeof x); \
        return;                                                            \
    }
    case 1: FILL_FIXED(uint8_t)
    case 2: FILL_FIXED(uint16_t)
    case 4: FILL_FIXED(uint32_t)
    case 8: FILL_FIXED(uint64_t)
#undef FILL_FIXED
    default:
        for (int64_t k = 0; k < n; k++) memcpy(o + k * steps[0], v, isz);
    }
}

static void cpu_fill(const cg_iter *plan, const void *value, size_t itemsize) {
    cg_iter p = *plan;
    p.nargs = 2;
    p.ptr[1] = (char *)(uintptr_t)value;
    for (int d = 0; d < p.ndim; d++) p.strides[1][d] = 0;
    cg_iter_run(&p, fill_loop, (const void *)(uintptr_t)itemsize, CG_GRAIN);
}

const cg_backend cg_backend_cpu = {
    .name = "cpu",
    .has_data = true,
    .host_addressable = true,
    .host_kernels = true,
    .alloc = cpu_alloc,
    .free = cpu_free,
    .copy_from_host = cpu_copy,
    .copy_to_host = cpu_copy,
    .synchronize = cpu_synchronize,
    .run_elementwise = cpu_run_elementwise,
    .run_reduce = cg_cpu_run_reduce,
    .fill = cpu_fill,
    .kernels = &cg_cpu_kernels,
};

/* cpu_backend.c — the CPU's entry in the backend table (Note [Backends]):
 * host memory from the caching allocator (src/core/allocator.c), memcpy for
 * copies, work done when a call returns, and the plan runners over the
 * thread pool (the elementwise loops by op id, the copy runner of copy.c, the
 * reduction runner of reduce_run.c). */
#include "cpu_kernels.h"
#include "elementwise_loops.gen.h"

#include <string.h>

static void *cpu_alloc(size_t nbytes, cg_device dev) { return cg_alloc(nbytes, dev); }
static void cpu_free(void *p, size_t nbytes, cg_device dev) { cg_free(p, nbytes, dev); }
static cg_status cpu_copy(void *dst, const void *src, size_t nbytes, cg_device dev) {
    (void)dev;
    if (nbytes) memcpy(dst, src, nbytes);
    return CG_OK;
}
static cg_status cpu_synchronize(cg_device dev) {
    (void)dev;
    return CG_OK;
}

static cg_status cpu_run_elementwise(cg_device dev, const cg_iter *plan, int op_id, cg_dtype dt, const void *params,
                                     int64_t grain) {
    (void)dev;
    cg_iter_run(plan, cg_cpu_elementwise_loops[op_id][dt], params, grain);
    return CG_OK;
}
static cg_status cpu_run_reduce(cg_device dev, const cg_reduce_plan *plan) {
    (void)dev;
    cg_cpu_run_reduce(plan);
    return CG_OK;
}
static void cpu_copy_elements(cg_device dev, const cg_iter *plan, cg_dtype dst, cg_dtype src) {
    (void)dev;
    cg_cpu_copy(plan, dst, src);
}
static void cpu_fill(cg_device dev, const cg_iter *plan, const void *value, size_t itemsize) {
    (void)dev;
    cg_cpu_fill(plan, value, itemsize);
}

const cg_backend cg_backend_cpu = {
    .name = "cpu",
    .has_data = true,
    .host_addressable = true,
    .dlpack_type = 1, /* kDLCPU */
    .alloc = cpu_alloc,
    .free = cpu_free,
    .copy_from_host = cpu_copy,
    .copy_to_host = cpu_copy,
    .synchronize = cpu_synchronize,
    .run_elementwise = cpu_run_elementwise,
    .run_reduce = cpu_run_reduce,
    .copy = cpu_copy_elements,
    .fill = cpu_fill,
    .kernels = &cg_cpu_kernels,
    .memory = &cg_cpu_memory_pool,
};

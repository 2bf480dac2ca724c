/* meta_backend.c — the meta device's entry in the backend table (Note
 * [Backends]): shapes and dtypes only. It has no memory, so its kernels do
 * nothing; drivers run every step but the kernel (validation, shapes, graph). */
#include "../backend.h"

static cg_status meta_copy(void *dst, const void *src, size_t nbytes, cg_device dev) {
    (void)dst, (void)src, (void)nbytes, (void)dev;
    return CG_OK;
}
static cg_status meta_synchronize(cg_device dev) {
    (void)dev;
    return CG_OK;
}
static cg_status meta_run_elementwise(cg_device dev, const cg_iter *plan, int op_id, cg_dtype dt, const void *params,
                                      int64_t grain) {
    (void)dev, (void)plan, (void)op_id, (void)dt, (void)params, (void)grain;
    return CG_OK;
}
static void meta_copy_elements(cg_device dev, const cg_iter *plan, cg_dtype dst, cg_dtype src) {
    (void)dev, (void)plan, (void)dst, (void)src;
}
static cg_status meta_run_reduce(cg_device dev, const cg_reduce_plan *plan) {
    (void)dev, (void)plan;
    return CG_OK;
}
static void meta_fill(cg_device dev, const cg_iter *plan, const void *value, size_t itemsize) {
    (void)dev, (void)plan, (void)value, (void)itemsize;
}

/* alloc / free are never called: cg_device_alloc asks for memory only where
 * has_data; no kernel table: CG_RUN_KERNEL runs nothing where has_data is false */
const cg_backend cg_backend_meta = {
    .name = "meta",
    .has_data = false,
    .host_addressable = false,
    .copy_from_host = meta_copy,
    .copy_to_host = meta_copy,
    .synchronize = meta_synchronize,
    .run_elementwise = meta_run_elementwise,
    .copy = meta_copy_elements,
    .run_reduce = meta_run_reduce,
    .fill = meta_fill,
};

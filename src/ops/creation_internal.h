/* creation_internal.h — internal: chunk conversion helpers shared by the
 * factories (creation.c) and the samplers (random.c): move runs of values
 * between double / int64 scratch buffers and contiguous tensors of any dtype. */
#ifndef CG_CREATION_INTERNAL_H
#define CG_CREATION_INTERNAL_H

#include "../dispatch/dispatch_internal.h"

/* dst: n contiguous elements of dt <- src: n doubles (integers truncate toward
 * zero; NaN -> 0, out-of-range saturates through int64; bool: nonzero). */
void cg_store_doubles(char *dst, cg_dtype dt, const double *src, int64_t n);
/* dst: n contiguous elements of dt <- src: n int64 values (exact for values
 * the dtype can hold). */
void cg_store_ints(char *dst, cg_dtype dt, const int64_t *src, int64_t n);
/* dst: n doubles <- src: n contiguous elements of dt. */
void cg_load_doubles(const char *src, cg_dtype dt, double *dst, int64_t n);

/* Factories: the dtype and device arguments are valid enum values. */
cg_status cg_check_factory(const char *op, cg_dtype dt, cg_device dev);

/* Scratch chunk for the helpers above (stack arrays of this many values). */
#define CG_CHUNK 256

#endif

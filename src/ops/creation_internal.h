/* creation_internal.h — internal: what the factories (creation.c) share with
 * the samplers (random.c). The run converters they use (cg_store_doubles,
 * ...) are core's (src/core/dtype.c). */
#ifndef CG_CREATION_INTERNAL_H
#define CG_CREATION_INTERNAL_H

#include "../dispatch/dispatch_internal.h"

/* Factories: the dtype and device arguments are valid enum values. */
cg_status cg_check_factory(const char *op, cg_dtype dt, cg_device dev);

#endif

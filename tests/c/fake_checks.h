/* fake_checks.h — checks shared by the device-seam tests (test_fake_device_*.c):
 * a tensor's geometry, and a refusal on the fake device that names its op. */
#ifndef CG_TEST_FAKE_CHECKS_H
#define CG_TEST_FAKE_CHECKS_H

#include "fake_backend.h"
#include "test.h"

#include <stdio.h>
#include <string.h>

static inline bool shape_is(const cg_tensor *t, int ndim, const int64_t *shape, cg_dtype dt) {
    return t && cg_tensor_ndim(t) == ndim && cg_tensor_dtype(t) == dt &&
           (ndim == 0 || memcmp(cg_tensor_shape(t), shape, sizeof(int64_t) * (size_t)ndim) == 0);
}

/* the call failed with NotImplementedError, its message naming op and the fake device */
static inline void check_refused(bool is_error, const char *op) {
    char msg[256];
    snprintf(msg, sizeof msg, "%s", cg_last_error_message());
    CHECK_ERR(is_error, CG_ERR_NOT_IMPLEMENTED, "fake");
    if (!strstr(msg, op)) cg_test_fail(__FILE__, __LINE__, "message '%s' does not name %s", msg, op);
}

#endif

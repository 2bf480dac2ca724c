/* error.c — thread-local error state (code + message), Note [Errors]. */
#include "core_internal.h"

#include <stdarg.h>

static _Thread_local cg_status tl_code = CG_OK;
static _Thread_local char tl_msg[1024];

cg_status cg_set_error(cg_status code, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(tl_msg, sizeof tl_msg, fmt, ap);
    va_end(ap);
    tl_code = code;
    return code;
}

cg_status cg_last_error(void) { return tl_code; }
const char *cg_last_error_message(void) { return tl_code == CG_OK ? "" : tl_msg; }
void cg_clear_error(void) { tl_code = CG_OK; tl_msg[0] = 0; }

const char *cg_status_name(cg_status s) {
    static const char *names[CG_ERR_COUNT] = {
        "CG_OK", "CG_ERR_DTYPE", "CG_ERR_DEVICE", "CG_ERR_SHAPE", "CG_ERR_INDEX",
        "CG_ERR_VALUE", "CG_ERR_OOM", "CG_ERR_NOT_IMPLEMENTED", "CG_ERR_RUNTIME"};
    return (s >= 0 && s < CG_ERR_COUNT) ? names[s] : "CG_ERR_UNKNOWN";
}

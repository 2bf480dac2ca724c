/* fake_backend.h — the test-only "fake" device (tests/c/fake_backend.c): a
 * backend whose memory is host memory behind handles the host cannot
 * dereference, so every byte moves through the backend interface. */
#ifndef CG_TEST_FAKE_BACKEND_H
#define CG_TEST_FAKE_BACKEND_H

#include "cgrad.h"

#include <stdint.h>

typedef struct fake_counts {
    int64_t allocs, frees, to_device, to_host, runs, fills, kernels; /* kernels: custom-kernel entries run */
} fake_counts;

/* Serve CG_DEVICE_PRIVATE with the fake backend (idempotent). */
void fake_backend_install(void);
cg_device fake_device(void);
fake_counts fake_backend_counts(void);
/* the device's raw bytes in use (handed out or cached by its pool) */
int64_t fake_backend_live_bytes(void);

#endif

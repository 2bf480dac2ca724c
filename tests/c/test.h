/* test.h — the C test harness: self-registering tests, checks that record
 * failures without aborting, and helpers (tensor builders, comparisons,
 * gradcheck / gradgradcheck in float64) shared by the op tests. */
#ifndef CG_TEST_H
#define CG_TEST_H

#include "cgrad.h"

#include <math.h>
#include <stdio.h>

typedef void (*cg_test_fn)(void);
void cg_test_register(const char *name, cg_test_fn fn, const char *file);
void cg_test_fail(const char *file, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int cg_test_failures(void);

#define TEST(name)                                                                       \
    static void name(void);                                                              \
    __attribute__((constructor)) static void reg_##name(void) { cg_test_register(#name, name, __FILE__); } \
    static void name(void)

#define CHECK(cond)                                                                  \
    do {                                                                             \
        if (!(cond)) cg_test_fail(__FILE__, __LINE__, "CHECK(%s) failed", #cond);    \
    } while (0)
#define CHECK_MSG(cond, ...)                                        \
    do {                                                            \
        if (!(cond)) cg_test_fail(__FILE__, __LINE__, __VA_ARGS__); \
    } while (0)
/* a call that must succeed (status CG_OK / non-NULL) */
#define CHECK_OK(expr)                                                                                  \
    do {                                                                                                \
        if ((expr) != CG_OK)                                                                            \
            cg_test_fail(__FILE__, __LINE__, "%s failed: %s", #expr, cg_last_error_message());         \
    } while (0)
#define CHECK_NN(ptr)                                                                                   \
    do {                                                                                                \
        if (!(ptr)) cg_test_fail(__FILE__, __LINE__, "%s returned NULL: %s", #ptr, cg_last_error_message()); \
    } while (0)
/* expr must fail with `code`, and the message must contain `substr` */
#define CHECK_ERR(expr_is_error, code, substr) \
    cg_test_check_err((expr_is_error), (code), (substr), #expr_is_error, __FILE__, __LINE__)
#define CHECK_NEAR(a, b, tol)                                                                          \
    do {                                                                                               \
        double a_ = (a), b_ = (b);                                                                     \
        if (!(fabs(a_ - b_) <= (tol) || (isnan(a_) && isnan(b_))))                                     \
            cg_test_fail(__FILE__, __LINE__, "%s = %.10g, expected %.10g (tol %g)", #a, a_, b_, (double)(tol)); \
    } while (0)

void cg_test_check_err(int is_error, cg_status code, const char *substr, const char *expr, const char *file, int line);

/* ---------------------------------------------------------------- builders */

/* tensor from doubles converted to dt; shape given as ndim + values */
cg_tensor *tt_tensor(cg_dtype dt, int ndim, const int64_t *shape, const double *vals);
/* deterministic pseudo-random values in [lo, hi) (local LCG, seeded) */
cg_tensor *tt_rand(cg_dtype dt, int ndim, const int64_t *shape, double lo, double hi, unsigned seed);
/* the same values laid out non-contiguously (a transposed / strided view of a
 * larger buffer); the result is not contiguous when numel > 1 */
cg_tensor *tt_noncontig(cg_tensor *t);
double tt_get(const cg_tensor *t, int64_t flat);
/* max |a - b| over elements, shapes must match (returns INFINITY otherwise); NaNs equal */
double tt_maxdiff(const cg_tensor *a, const cg_tensor *b);
/* all elements equal to ref(flat index) within tol */
typedef double (*tt_ref_fn)(int64_t flat, void *ctx);

/* ---------------------------------------------------------------- gradcheck */

/* f computes one output from the inputs (new reference, or NULL on error). */
typedef cg_tensor *(*tt_fn)(cg_tensor *const *inputs, void *ctx);
/* Compare the analytic gradient (vector-Jacobian product with a random v) of
 * every input that requires grad against float64 central differences.
 * Returns true on success; prints a diagnostic on failure. */
bool tt_gradcheck(tt_fn f, void *ctx, int n, cg_tensor *const *inputs, double eps, double atol, double rtol);
/* The same for the gradient itself, computed with create_graph: checks
 * second derivatives with respect to the inputs and to v. */
bool tt_gradgradcheck(tt_fn f, void *ctx, int n, cg_tensor *const *inputs, double eps, double atol, double rtol);

#endif

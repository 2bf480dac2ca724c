/* special_kernels.h — internal: scalar kernels of special functions that the
 * op table's loop expressions call (src/ops/elementwise_ops.py): the
 * regularized incomplete gamma functions P(a, x) (igamma) and Q(a, x)
 * (igammac), and lgamma without the global signgam. Computed in double. */
#ifndef CG_CPU_SPECIAL_KERNELS_H
#define CG_CPU_SPECIAL_KERNELS_H

#include <math.h>
#include <stdbool.h>

/* lgamma of a double, thread-safe (lgamma writes the global signgam) */
static inline double cg_lgamma_d(double x) {
    int sign;
    return lgamma_r(x, &sign);
}

/* log(1 + t) - t, accurate for small t (its series) */
static inline double cg_log1pmx_d(double t) {
    if (!(fabs(t) < 0.5)) return log1p(t) - t;
    double term = t, s = 0;
    for (int n = 2; n < 200; n++) {
        term *= -t;
        double d = term / n;
        s += d;
        if (fabs(d) <= 1e-17 * fabs(s)) break;
    }
    return s;
}

/* Note [Incomplete gamma]: P(a, x) = gamma(a, x) / Gamma(a) and Q = 1 - P for
 * a, x > 0, with PyTorch's values elsewhere, tested in its order: nan for a
 * negative operand; P(0, x > 0) = 1; P(a, 0) = 0; P(inf, x) = 0 unless x is
 * inf too; P(a, inf) = 1; then nan for a nan operand. Three regimes:
 *  - a above CG_IGAMMA_TEMME: Temme's uniform asymptotic expansion
 *    (DLMF 8.12.3 / 8.12.8) with its first two coefficients: with
 *    lambda = x / a and eta^2 / 2 = lambda - 1 - log(lambda) (eta of the sign
 *    of lambda - 1), Q = erfc(eta sqrt(a / 2)) / 2 + R and
 *    P = erfc(-eta sqrt(a / 2)) / 2 - R, R = exp(-a eta^2 / 2) / sqrt(2 pi a)
 *    (c0 + c1 / a). The error term c2 / a^2 is below 1e-12 there. The series
 *    below would need O(sqrt(a)) terms (1e10 at a = 1e20).
 *  - x < a + 1: the power series of P (positive terms);
 *  - else Lentz's continued fraction of Q.
 * The series and fraction need at most a few thousand terms below the Temme
 * threshold; they stop after CG_IGAMMA_MAXITER regardless, so no input hangs. */
#define CG_IGAMMA_TEMME 1e5
#define CG_IGAMMA_MAXITER 100000

static inline double cg_igamma_temme_d(double a, double x, bool upper) {
    double t = (x - a) / a; /* lambda - 1 */
    double eta2 = -2 * cg_log1pmx_d(t), eta = copysign(sqrt(eta2), t);
    double c0, c1;
    if (fabs(eta) < 0.01) { /* the coefficients' Taylor series: the closed forms cancel near eta = 0 */
        c0 = -1.0 / 3 + eta * (1.0 / 12 + eta * (-2.0 / 135 + eta * (1.0 / 864 + eta * (1.0 / 2835))));
        c1 = -1.0 / 540 + eta * (-1.0 / 288 + eta * (1.0 / 378 + eta * (-77.0 / 77760)));
    } else {
        c0 = 1 / t - 1 / eta;
        c1 = 1 / (eta * eta * eta) - 1 / (t * t * t) - 1 / (t * t) - 1 / (12 * t);
    }
    double y = eta * sqrt(a / 2);
    double r = exp(a * cg_log1pmx_d(t)) / sqrt(2 * M_PI * a) * (c0 + c1 / a);
    return upper ? 0.5 * erfc(y) + r : 0.5 * erfc(-y) - r;
}

static inline double cg_igamma_d(double a, double x, bool upper) {
    double lo = upper ? 1 : 0, hi = 1 - lo; /* the values at x = 0 and x = inf */
    /* PyTorch's order of the special cases: P(inf, nan) = 0 and P(nan, inf) = 1 */
    if (a < 0 || x < 0) return NAN;
    if (a == 0) return x > 0 ? hi : NAN;
    if (x == 0) return lo;
    if (isinf(a)) return isinf(x) ? NAN : lo;
    if (isinf(x)) return hi;
    if (isnan(a) || isnan(x)) return NAN;
    if (a > CG_IGAMMA_TEMME) return cg_igamma_temme_d(a, x, upper);
    double lgam = cg_lgamma_d(a);
    if (x < a + 1) { /* P = x^a e^-x / Gamma(a + 1) * sum_n x^n / ((a + 1) ... (a + n)) */
        double ap = a, d = 1 / a, sum = d;
        for (int i = 0; i < CG_IGAMMA_MAXITER; i++) {
            ap += 1;
            d *= x / ap;
            sum += d;
            if (fabs(d) <= fabs(sum) * 1e-17) break;
        }
        double p = exp(a * log(x) - x - lgam) * sum;
        return upper ? 1 - p : p;
    }
    const double tiny = 1e-300;
    double b = x + 1 - a, c = 1 / tiny, d = 1 / b, h = d;
    for (int i = 1; i < CG_IGAMMA_MAXITER; i++) {
        double an = -i * (i - a);
        b += 2;
        d = an * d + b;
        if (fabs(d) < tiny) d = tiny;
        c = b + an / c;
        if (fabs(c) < tiny) c = tiny;
        d = 1 / d;
        double delta = d * c;
        h *= delta;
        if (fabs(delta - 1) <= 4e-17) break;
    }
    double q = exp(a * log(x) - x - lgam) * h;
    return upper ? q : 1 - q;
}

#endif

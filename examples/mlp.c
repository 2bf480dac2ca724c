/* mlp.c — a two-layer MLP trained with plain SGD in pure C, using only the
 * public header. It fits y = sin(3 x0) + 0.5 x1^2 - x2 on synthetic data and
 * prints the loss, which falls. Build and run: `make example-c`. */
#include <cgrad.h>

#include <stdio.h>
#include <math.h>
#include <stdlib.h>

#define N 512  /* samples */
#define D 8    /* input features */
#define H 64   /* hidden units */

static void die(const char *what) {
    fprintf(stderr, "%s failed: %s\n", what, cg_last_error_message());
    exit(1);
}

/* a parameter: scaled random normal values, requiring grad */
static cg_tensor *param(int ndim, const int64_t *shape, double scale) {
    cg_tensor *r = cg_randn(ndim, shape, CG_DTYPE_F32, cg_cpu());
    cg_tensor *s = cg_scalar(scale, CG_DTYPE_F32);
    cg_tensor *p = r && s ? cg_mul(r, s) : NULL;
    if (!p) die("param");
    cg_tensor_release(r);
    cg_tensor_release(s);
    cg_tensor_set_requires_grad(p, true);
    return p;
}

/* p -= lr * p.grad, then clear the gradient */
static void sgd_step(cg_tensor *p, cg_tensor *lr) {
    bool prev = cg_set_grad_enabled(false);
    cg_tensor *step = cg_mul(cg_tensor_grad(p), lr);
    if (!step || cg_sub_(p, step) != CG_OK) die("sgd step");
    cg_tensor_release(step);
    cg_tensor_set_grad(p, NULL);
    cg_set_grad_enabled(prev);
}

int main(void) {
    cg_manual_seed(0);
    /* synthetic data: x ~ U(-1, 1), target from a fixed nonlinear function */
    int64_t xs[2] = {N, D}, ys[2] = {N, 1};
    float *xbuf = malloc(sizeof(float) * N * D), *ybuf = malloc(sizeof(float) * N);
    cg_tensor *xr = cg_rand(2, xs, CG_DTYPE_F32, cg_cpu());
    if (!xr || cg_tensor_copy_to_buffer(xr, xbuf, CG_DTYPE_F32) != CG_OK) die("data");
    for (int i = 0; i < N; i++) {
        float *x = xbuf + i * D;
        for (int j = 0; j < D; j++) x[j] = 2 * x[j] - 1;
        ybuf[i] = sinf(3 * x[0]) + 0.5f * x[1] * x[1] - x[2];
    }
    cg_tensor *x = cg_from_data(xbuf, 2, xs, CG_DTYPE_F32), *y = cg_from_data(ybuf, 2, ys, CG_DTYPE_F32);
    if (!x || !y) die("from_data");

    int64_t w1s[2] = {D, H}, b1s[1] = {H}, w2s[2] = {H, 1}, b2s[1] = {1};
    cg_tensor *w1 = param(2, w1s, 0.35), *b1 = param(1, b1s, 0.0), *w2 = param(2, w2s, 0.12), *b2 = param(1, b2s, 0.0);
    cg_tensor *params[4] = {w1, b1, w2, b2};
    cg_tensor *lr = cg_scalar(0.1, CG_DTYPE_F32);
    double first = 0, last = 0;
    for (int step = 0; step <= 300; step++) {
        /* forward: loss = mean((relu(x W1 + b1) W2 + b2 - y)^2) */
        cg_tensor *h0 = cg_matmul(x, w1), *h1 = cg_add(h0, b1), *h = cg_relu(h1);
        cg_tensor *o0 = cg_matmul(h, w2), *o = cg_add(o0, b2);
        cg_tensor *d = cg_sub(o, y), *d2 = cg_mul(d, d), *loss = cg_mean(d2, 0, NULL, false);
        if (!loss) die("forward");
        if (cg_backward(loss, NULL, false, false) != CG_OK) die("backward");
        double v;
        cg_tensor_item(loss, &v);
        if (step == 0) first = v;
        last = v;
        if (step % 50 == 0) printf("step %3d  loss %.5f\n", step, v);
        for (int i = 0; i < 4; i++) sgd_step(params[i], lr);
        cg_tensor *tmp[] = {h0, h1, h, o0, o, d, d2, loss};
        for (int i = 0; i < 8; i++) cg_tensor_release(tmp[i]);
    }
    printf("loss fell from %.5f to %.5f\n", first, last);
    for (int i = 0; i < 4; i++) cg_tensor_release(params[i]);
    cg_tensor_release(lr);
    cg_tensor_release(x);
    cg_tensor_release(y);
    cg_tensor_release(xr);
    free(xbuf);
    free(ybuf);
    return last < first * 0.5 ? 0 : 1;
}

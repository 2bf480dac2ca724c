/* fashion_mnist_mlp.c — training without Python: reads the Fashion-MNIST IDX files (gzip, zlib),
 * trains the MLP 784-128-10 (nn.Sequential(Linear, ReLU, Linear)) with the engine's fused Adam
 * step, prints the loss and the test accuracy per epoch, and saves a safetensors checkpoint whose
 * names are that Sequential's state-dict keys, so Python loads it with
 * model.load_state_dict(cgrad.load(path)). It uses only the installed library:
 *   cc -std=c11 fashion_mnist_mlp.c -o fmnist $(pkg-config --cflags --libs cgrad) -lz -lm
 *   ./fmnist [data_dir] [train_samples] [test_samples] [epochs] [checkpoint]
 * (defaults: /usr/share/datasets/fashion-mnist/, 60000, 10000, 2, fashion_mnist_mlp.safetensors). */
#include <cgrad.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define IN 784
#define HID 128
#define OUT 10
#define BATCH 128

static void die(const char *what) {
    fprintf(stderr, "%s failed: %s\n", what, cg_last_error_message());
    exit(1);
}

static uint32_t be32(const unsigned char *p) {
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* an IDX file (gzip): its items' bytes, at most `limit` items; *n the count, *item the item size */
static unsigned char *read_idx(const char *dir, const char *name, uint32_t magic, int64_t limit, int64_t *n,
                               int64_t *item) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    gzFile f = gzopen(path, "rb");
    if (!f) {
        fprintf(stderr, "cannot open %s (install Debian's dataset-fashion-mnist, or pass the folder)\n", path);
        exit(1);
    }
    unsigned char head[16];
    int dims = magic == 2051 ? 3 : 1;
    if (gzread(f, head, 4 + 4 * dims) != 4 + 4 * dims || be32(head) != magic) {
        fprintf(stderr, "%s is not an IDX file of magic %u\n", path, magic);
        exit(1);
    }
    *n = be32(head + 4);
    *item = dims == 3 ? (int64_t)be32(head + 8) * be32(head + 12) : 1;
    if (limit < *n) *n = limit;
    size_t bytes = (size_t)(*n * *item);
    unsigned char *data = malloc(bytes ? bytes : 1);
    if (!data || gzread(f, data, (unsigned)bytes) != (int)bytes) {
        fprintf(stderr, "%s: short read\n", path);
        exit(1);
    }
    gzclose(f);
    return data;
}

/* images as float32 in [0, 1] (n, 784) and labels as int64 (n) */
static void load_split(const char *dir, const char *prefix, int64_t limit, cg_tensor **x, cg_tensor **y) {
    char iname[64], lname[64];
    snprintf(iname, sizeof iname, "%s-images-idx3-ubyte.gz", prefix);
    snprintf(lname, sizeof lname, "%s-labels-idx1-ubyte.gz", prefix);
    int64_t n, item, nl, one;
    unsigned char *img = read_idx(dir, iname, 2051, limit, &n, &item);
    unsigned char *lab = read_idx(dir, lname, 2049, limit, &nl, &one);
    if (item != IN || nl != n) die("the IDX files' sizes");
    float *xf = malloc((size_t)(n * IN) * sizeof *xf);
    int64_t *yl = malloc((size_t)n * sizeof *yl);
    if (!xf || !yl) die("malloc");
    for (int64_t i = 0; i < n * IN; i++) xf[i] = img[i] / 255.0f;
    for (int64_t i = 0; i < n; i++) yl[i] = lab[i];
    int64_t xs[2] = {n, IN};
    *x = cg_from_data(xf, 2, xs, CG_DTYPE_F32);
    *y = cg_from_data(yl, 1, &n, CG_DTYPE_I64);
    if (!*x || !*y) die("from_data");
    free(img), free(lab), free(xf), free(yl);
}

/* PyTorch's nn.Linear initialisation: U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for weight and bias */
static cg_tensor *uniform_param(int ndim, const int64_t *shape, int64_t fan_in) {
    cg_tensor *r = cg_rand(ndim, shape, CG_DTYPE_F32, cg_cpu());
    double b = 1.0 / sqrt((double)fan_in);
    cg_tensor *two_b = cg_scalar(2 * b, CG_DTYPE_F32), *minus_b = cg_scalar(-b, CG_DTYPE_F32);
    cg_tensor *s = r ? cg_mul(r, two_b) : NULL, *p = s ? cg_add(s, minus_b) : NULL;
    if (!p) die("init");
    cg_tensor_release(r), cg_tensor_release(s), cg_tensor_release(two_b), cg_tensor_release(minus_b);
    cg_tensor_set_requires_grad(p, true);
    return p;
}

static cg_tensor *forward(cg_tensor *x, cg_tensor *const *p) {
    cg_tensor *h = cg_linear(x, p[0], p[1]);
    cg_tensor *a = h ? cg_relu(h) : NULL;
    cg_tensor *out = a ? cg_linear(a, p[2], p[3]) : NULL;
    if (!out) die("forward");
    cg_tensor_release(h), cg_tensor_release(a);
    return out;
}

static double accuracy(cg_tensor *x, cg_tensor *y, cg_tensor *const *p) {
    bool prev = cg_set_grad_enabled(false);
    cg_tensor *logits = forward(x, p);
    cg_tensor *pred = cg_argmax(logits, true, 1, false);
    if (!pred) die("argmax");
    int64_t n = cg_tensor_numel(y), right = 0;
    const int64_t *pp = cg_tensor_data(pred), *yy = cg_tensor_data(y);
    for (int64_t i = 0; i < n; i++) right += pp[i] == yy[i];
    cg_tensor_release(logits), cg_tensor_release(pred);
    cg_set_grad_enabled(prev);
    return 100.0 * (double)right / (double)n;
}

int main(int argc, char **argv) {
    const char *dir = argc > 1 ? argv[1] : "/usr/share/datasets/fashion-mnist";
    int64_t ntrain = argc > 2 ? atoll(argv[2]) : 60000, ntest = argc > 3 ? atoll(argv[3]) : 10000;
    int epochs = argc > 4 ? atoi(argv[4]) : 2;
    const char *out = argc > 5 ? argv[5] : "fashion_mnist_mlp.safetensors";
    printf("cgrad %s: MLP %d-%d-%d, Adam, batch %d\n", cg_version(), IN, HID, OUT, BATCH);
    cg_tensor *xtr, *ytr, *xte, *yte;
    load_split(dir, "train", ntrain, &xtr, &ytr);
    load_split(dir, "t10k", ntest, &xte, &yte);
    ntrain = cg_tensor_numel(ytr);
    cg_manual_seed(0);
    int64_t w1s[2] = {HID, IN}, b1s[1] = {HID}, w2s[2] = {OUT, HID}, b2s[1] = {OUT};
    cg_tensor *p[4] = {uniform_param(2, w1s, IN), uniform_param(1, b1s, IN), uniform_param(2, w2s, HID),
                       uniform_param(1, b2s, HID)};
    cg_tensor *m[4], *v[4], *steps[4], *grads[4];
    int64_t one = 1;
    for (int i = 0; i < 4; i++) {
        m[i] = cg_zeros_like(p[i]);
        v[i] = cg_zeros_like(p[i]);
        steps[i] = cg_zeros(1, &one, CG_DTYPE_F32, cg_cpu());
        if (!m[i] || !v[i] || !steps[i]) die("optimizer state");
    }
    cg_adam_options opt = {.lr = 1e-3, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8};
    for (int epoch = 1; epoch <= epochs; epoch++) {
        double total = 0;
        int64_t batches = 0;
        for (int64_t start = 0; start < ntrain; start += BATCH) {
            int64_t len = ntrain - start < BATCH ? ntrain - start : BATCH;
            cg_tensor *xb = cg_narrow(xtr, 0, start, len), *yb = cg_narrow(ytr, 0, start, len);
            cg_tensor *logits = xb && yb ? forward(xb, p) : NULL;
            cg_tensor *loss = logits ? cg_cross_entropy(logits, yb, NULL, -100, 0.0, CG_REDUCTION_MEAN) : NULL;
            if (!loss || cg_backward(loss, NULL, false, false) != CG_OK) die("backward");
            double l;
            cg_tensor_get_flat(loss, 0, &l);
            total += l;
            batches++;
            for (int i = 0; i < 4; i++) grads[i] = cg_tensor_grad(p[i]);
            if (cg_adam_step(4, p, grads, m, v, NULL, steps, &opt) != CG_OK) die("adam step");
            for (int i = 0; i < 4; i++) cg_tensor_set_grad(p[i], NULL);
            cg_tensor_release(xb), cg_tensor_release(yb), cg_tensor_release(logits), cg_tensor_release(loss);
        }
        printf("epoch %d: train loss %.4f  test accuracy %.2f%%\n", epoch, total / (double)batches,
               accuracy(xte, yte, p));
        fflush(stdout);
    }
    const char *names[4] = {"0.weight", "0.bias", "2.weight", "2.bias"};
    if (cg_save_safetensors(out, 4, names, p) != CG_OK) die("save");
    printf("saved %s (test accuracy %.4f%%)\n", out, accuracy(xte, yte, p));
    for (int i = 0; i < 4; i++) {
        cg_tensor_release(p[i]), cg_tensor_release(m[i]), cg_tensor_release(v[i]), cg_tensor_release(steps[i]);
    }
    cg_tensor_release(xtr), cg_tensor_release(ytr), cg_tensor_release(xte), cg_tensor_release(yte);
    return 0;
}

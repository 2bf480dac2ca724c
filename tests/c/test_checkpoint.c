/* test_checkpoint.c — cg_save_safetensors / cg_load_safetensors (src/io/safetensors.c): round trips
 * of every dtype with 0-d and empty tensors and non-contiguous inputs, and hand-made hostile files
 * (run under ASan by make test); the Python loader's whole hostile list runs against this loader in
 * tests/python/test_c_checkpoints.py. */
#include "test.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void temp_path(char *buf, size_t n, const char *tag) {
    snprintf(buf, n, "/tmp/cgrad-ckpt-%ld-%s.safetensors", (long)getpid(), tag);
}

static void write_file(const char *path, const void *data, size_t n) {
    FILE *f = fopen(path, "wb");
    CHECK(f != NULL);
    if (!f) return;
    CHECK(fwrite(data, 1, n, f) == n);
    fclose(f);
}

TEST(checkpoint_round_trip_every_dtype) {
    char path[128];
    temp_path(path, sizeof path, "rt");
    int64_t s23[2] = {2, 3}, s0[1] = {0};
    for (int d = 0; d < CG_DTYPE_COUNT; d++) {
        cg_dtype dt = (cg_dtype)d;
        double vals[6] = {0, 1, 0, 1, 1, 0};
        cg_tensor *a = tt_tensor(dt, 2, s23, vals);
        cg_tensor *nc = tt_noncontig(a);
        cg_tensor *scalar = tt_tensor(dt, 0, NULL, vals + 1);
        cg_tensor *empty = cg_empty(1, s0, dt, cg_cpu());
        const char *names[] = {"a", "nc", "scalar", "empty"};
        cg_tensor *ts[] = {a, nc, scalar, empty};
        CHECK_OK(cg_save_safetensors(path, 4, names, ts));
        cg_checkpoint *c = cg_load_safetensors(path);
        CHECK_NN(c);
        CHECK(cg_checkpoint_count(c) == 4);
        for (int i = 0; i < 4; i++) {
            cg_tensor *t = cg_checkpoint_get(c, names[i]);
            CHECK_NN(t);
            if (!t) continue;
            CHECK(cg_tensor_dtype(t) == dt && cg_tensor_ndim(t) == cg_tensor_ndim(ts[i]));
            CHECK(cg_tensor_numel(t) == cg_tensor_numel(ts[i]));
            for (int64_t k = 0; k < cg_tensor_numel(t); k++) {
                double x, y;
                CHECK(cg_tensor_get_flat(t, k, &x) == CG_OK && cg_tensor_get_flat(ts[i], k, &y) == CG_OK);
                CHECK(x == y);
            }
            cg_tensor_release(t);
        }
        CHECK_ERR(cg_checkpoint_get(c, "missing") == NULL, CG_ERR_INDEX, "no tensor named 'missing'");
        CHECK_ERR(cg_checkpoint_name(c, 4) == NULL, CG_ERR_INDEX, "out of range");
        cg_checkpoint_free(c);
        for (int i = 0; i < 4; i++) cg_tensor_release(ts[i]);
    }
    unlink(path);
}

TEST(checkpoint_save_errors) {
    char path[128];
    temp_path(path, sizeof path, "bad");
    int64_t n = 2;
    cg_tensor *a = cg_zeros(1, &n, CG_DTYPE_F32, cg_cpu()), *m = cg_zeros(1, &n, CG_DTYPE_F32, cg_meta());
    const char *dup[] = {"x", "x"};
    cg_tensor *two[] = {a, a};
    CHECK_ERR(cg_save_safetensors(path, 2, dup, two) != CG_OK, CG_ERR_VALUE, "duplicate name 'x'");
    const char *meta_name[] = {"__metadata__"};
    CHECK_ERR(cg_save_safetensors(path, 1, meta_name, two) != CG_OK, CG_ERR_VALUE, "reserved");
    const char *one[] = {"m"};
    CHECK_ERR(cg_save_safetensors(path, 1, one, &m) != CG_OK, CG_ERR_DEVICE, "meta device");
    CHECK_ERR(cg_save_safetensors("/nonexistent-dir/x", 1, one, &a) != CG_OK, CG_ERR_RUNTIME, "cannot create");
    cg_tensor_release(a);
    cg_tensor_release(m);
}

/* hand-made files: each must fail with CG_ERR_VALUE and the message part */
TEST(checkpoint_hostile_files) {
    char path[128];
    temp_path(path, sizeof path, "hostile");
    static const struct {
        const char *header; /* NULL: the raw bytes below */
        const char *data;
        size_t ndata;
        unsigned long long len; /* 0: the header's length */
        const char *msg;
    } cases[] = {
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[4],\"data_offsets\":[0,16]}}", "\0\0\0\0", 4, 0, "beyond the data section"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]},\"b\":{\"dtype\":\"F32\",\"shape\":[2],"
         "\"data_offsets\":[4,12]}}", "\0\0\0\0\0\0\0\0\0\0\0\0", 12, 0, "overlap"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2],\"data_offsets\":[0,8]}}", "", 0, 1000, "runs past the end"},
        {"{}", "", 0, 1ULL << 62, "exceeds the limit"},
        {"{not json", "", 0, 0, "not valid UTF-8 JSON"},
        {"[1, 2]", "", 0, 0, "not an object"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[2]}}", "\0\0\0\0\0\0\0\0", 8, 0, "exactly dtype"},
        {"{\"a\":{\"dtype\":\"C64\",\"shape\":[1],\"data_offsets\":[0,8]}}", "\0\0\0\0\0\0\0\0", 8, 0, "C64 is not supported"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[4611686018427387904,4611686018427387904],\"data_offsets\":[0,8]}}",
         "\0\0\0\0\0\0\0\0", 8, 0, "overflows"},
        {"{\"a\":{\"dtype\":\"BOOL\",\"shape\":[2],\"data_offsets\":[0,2]}}", "\1\7", 2, 0, "other than 0 and 1"},
        {"{\"a\":{\"dtype\":\"F32\",\"shape\":[1],\"data_offsets\":[0,4]},\"a\":{\"dtype\":\"F32\",\"shape\":[1],"
         "\"data_offsets\":[4,8]}}", "\0\0\0\0\0\0\0\0", 8, 0, "duplicate key 'a'"},
        {"{\"__metadata__\":{\"k\":1}}", "", 0, 0, "must be an object of strings"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        size_t hl = strlen(cases[i].header);
        unsigned long long declared = cases[i].len ? cases[i].len : hl;
        size_t total = 8 + hl + cases[i].ndata;
        unsigned char *buf = malloc(total);
        CHECK(buf != NULL);
        if (!buf) return;
        for (int b = 0; b < 8; b++) buf[b] = (unsigned char)(declared >> (8 * b));
        memcpy(buf + 8, cases[i].header, hl);
        memcpy(buf + 8 + hl, cases[i].data, cases[i].ndata);
        write_file(path, buf, total);
        free(buf);
        CHECK_ERR(cg_load_safetensors(path) == NULL, CG_ERR_VALUE, cases[i].msg);
    }
    write_file(path, "abc", 3);
    CHECK_ERR(cg_load_safetensors(path) == NULL, CG_ERR_VALUE, "fewer than the 8-byte");
    unlink(path);
    CHECK_ERR(cg_load_safetensors(path) == NULL, CG_ERR_RUNTIME, "cannot open");
}

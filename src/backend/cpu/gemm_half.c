/* gemm_half.c — the BLAS glue for bfloat16 / float16 products (Note [Half
 * GEMM]): half operands converted panel by panel into small float32 buffers
 * that feed cblas_sgemm with beta accumulating, or bfloat16 products handed
 * to cblas_sbgemm when the loaded BLAS exports it and the CPU has AVX512_BF16. */
#include "blas_internal.h"

#include "../../core/half.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Note [Half GEMM]: C (float32) = alpha * A @ B + beta * C for half A, B.
 * No float32 copy of a whole operand is made: for each block of HALF_NB
 * columns of B and kb of the depth, B's (kb, nb) panel is converted
 * once and reused by every block of HALF_MB rows of A, whose (mb, kb) panel
 * is converted next to it; one sgemm per pair, the first depth block with
 * the caller's beta, the others with beta = 1. A panel is stored in the
 * orientation its source has a unit stride in (rows, or columns handed to
 * sgemm as a transpose), so conversions read memory in order. Each element
 * of A is converted once per column block (once when n <= HALF_NB) and each
 * of B once. The depth block kb is HALF_KB, or more for narrow panels: as
 * deep as HALF_PANEL floats allow for both (fewer, larger sgemm calls for a
 * skinny product). Scratch: at most HALF_PANEL floats (1.5 MiB) per GEMM in
 * flight, from the caching allocator. */
#define HALF_KB 256
#define HALF_MB 512
#define HALF_NB 1024
#define HALF_PANEL ((HALF_MB + HALF_NB) * HALF_KB)

static const cg_device k_cpu = {CG_DEVICE_CPU, 0};

/* ---------------------------------------------------------------- sbgemm dispatch */

static pthread_once_t g_sb_once = PTHREAD_ONCE_INIT;
static cg_sbgemm_fn g_sb_found;          /* what the policy picked at first use */
static _Atomic(cg_sbgemm_fn) g_sb_inject; /* a test's function, when injected */
static atomic_int g_sb_injected;

/* cblas_sbgemm in the global scope, else in the library cblas_sgemm came from. */
static cg_sbgemm_fn lookup_sbgemm(void) {
    void *p = dlsym(RTLD_DEFAULT, CG_BLAS_SYMBOL("cblas_sbgemm"));
    Dl_info info;
    if (!p && dladdr((void *)cblas_sgemm, &info) && info.dli_fname) {
        void *h = dlopen(info.dli_fname, RTLD_NOW | RTLD_NOLOAD);
        if (h) {
            p = dlsym(h, CG_BLAS_SYMBOL("cblas_sbgemm"));
            dlclose(h);
        }
    }
    cg_sbgemm_fn fn;
    memcpy(&fn, &p, sizeof fn < sizeof p ? sizeof fn : sizeof p);
    return p ? fn : NULL;
}

static void resolve_sbgemm(void) {
    const char *env = getenv("CGRAD_SBGEMM");
    bool off = env && env[0] == '0', forced = env && env[0] == '1';
    if (off) return;
    cg_sbgemm_fn fn = lookup_sbgemm();
    if (fn && (forced || cg_cpu_has_avx512_bf16())) g_sb_found = fn;
}

cg_sbgemm_fn cg_gemm_sbgemm(void) {
    if (atomic_load(&g_sb_injected)) return atomic_load(&g_sb_inject);
    pthread_once(&g_sb_once, resolve_sbgemm);
    return g_sb_found;
}

void cg_gemm_set_sbgemm(bool inject, cg_sbgemm_fn fn) {
    atomic_store(&g_sb_inject, fn);
    atomic_store(&g_sb_injected, inject ? 1 : 0);
}

/* ---------------------------------------------------------------- conversions */

/* dst[i] = src[i * stride] as float32, i < n. */
static void line_to_f32(cg_dtype dt, const char *src, int64_t stride, int64_t n, float *restrict dst) {
    if (dt == CG_DTYPE_BF16) {
        const cg_bf16 *s = (const cg_bf16 *)src;
        if (stride == 1)
            for (int64_t i = 0; i < n; i++) dst[i] = cg_bf16_to_f32(s[i]);
        else
            for (int64_t i = 0; i < n; i++) dst[i] = cg_bf16_to_f32(s[i * stride]);
    } else {
        const cg_f16 *s = (const cg_f16 *)src;
        if (stride == 1)
            cg_f16_to_f32_n(dst, s, n);
        else
            for (int64_t i = 0; i < n; i++) dst[i] = cg_f16_to_f32(s[i * stride]);
    }
}

/* A block of a strided half matrix to convert: `lines` lines of `len`
 * elements; line l starts at src + l * lstride, its elements step by estride. */
typedef struct conv_lines {
    cg_dtype dt;
    const char *src;
    int64_t lstride, estride, len;
    float *dst; /* line l at dst + l * len */
} conv_lines;

static void lines_range(int64_t l0, int64_t l1, void *p) {
    const conv_lines *c = p;
    for (int64_t l = l0; l < l1; l++) line_to_f32(c->dt, c->src + l * c->lstride * 2, c->estride, c->len, c->dst + l * c->len);
}

/* The (r1-r0, c1-c0) block at rows [r0, r1), columns [c0, c1) of the half
 * matrix at ptr into dst, along the source's unit stride: row-major
 * (*trans = CblasNoTrans, *ld = c1-c0) or column-major (CblasTrans, ld = r1-r0). */
static void panel_to_f32(cg_dtype dt, const char *ptr, int64_t rs, int64_t cs, int64_t r0, int64_t r1, int64_t c0,
                         int64_t c1, float *dst, CBLAS_TRANSPOSE *trans, blasint *ld) {
    conv_lines c = {.dt = dt, .src = ptr + (r0 * rs + c0 * cs) * 2, .dst = dst};
    int64_t nlines;
    bool by_cols = c1 - c0 == 1 || (r1 - r0 > 1 && rs == 1 && cs != 1);
    if (by_cols) { /* contiguous columns (or a single one): store column-major */
        c.lstride = cs, c.estride = rs, c.len = r1 - r0, nlines = c1 - c0;
        *trans = CblasTrans;
    } else {
        c.lstride = rs, c.estride = cs, c.len = c1 - c0, nlines = r1 - r0;
        *trans = CblasNoTrans;
    }
    *ld = (blasint)(c.len > 0 ? c.len : 1);
    /* on the calling thread: a panel converts in tens of microseconds, and
     * waking our pool between OpenBLAS's threaded sgemm calls cost more than
     * it saved (MLP bf16 autocast step at 2 threads: 2.14 -> 1.75 ms) */
    lines_range(0, nlines, &c);
}

/* ---------------------------------------------------------------- one product */

typedef struct half_scratch {
    float *a, *b;
    size_t abytes, bbytes;
} half_scratch;

static int64_t min64(int64_t x, int64_t y) { return x < y ? x : y; }

/* The depth block of d's panels (Note [Half GEMM]). */
static int64_t depth_block(const cg_gemm_desc *d) {
    int64_t kb = HALF_PANEL / (min64(d->m, HALF_MB) + min64(d->n, HALF_NB));
    return min64(d->k, kb > HALF_KB ? kb : HALF_KB);
}

static bool scratch_alloc(half_scratch *s, const cg_gemm_desc *d) {
    int64_t kb = depth_block(d);
    s->abytes = (size_t)(min64(d->m, HALF_MB) * kb) * sizeof(float);
    s->bbytes = (size_t)(min64(d->n, HALF_NB) * kb) * sizeof(float);
    s->a = s->abytes ? cg_alloc(s->abytes, k_cpu) : NULL;
    s->b = s->a && s->bbytes ? cg_alloc(s->bbytes, k_cpu) : NULL;
    if (s->a && s->b) return true;
    if (s->a) cg_free(s->a, s->abytes, k_cpu);
    return false;
}

static void scratch_free(half_scratch *s) {
    cg_free(s->a, s->abytes, k_cpu);
    cg_free(s->b, s->bbytes, k_cpu);
}

/* C (m, n) contiguous float32 = alpha * A @ B + beta * C, A and B the half
 * operands at these pointers with d's strides. m, n, k > 0. */
static void product(const cg_gemm_desc *d, const char *A, const char *B, float *C, half_scratch *s,
                    cg_sbgemm_fn sb) {
    int64_t m = d->m, n = d->n, k = d->k;
    float alpha = (float)d->alpha;
    if (d->beta == 0) memset(C, 0, (size_t)(m * n) * sizeof(float)); /* C is never read */
    CBLAS_TRANSPOSE ta, tb;
    blasint lda, ldb;
    if (sb && cg_blas_layout(m, k, d->a.rs, d->a.cs, &ta, &lda) && cg_blas_layout(k, n, d->b.rs, d->b.cs, &tb, &ldb)) {
        sb(CblasRowMajor, ta, tb, (blasint)m, (blasint)n, (blasint)k, alpha, (const uint16_t *)A, lda,
           (const uint16_t *)B, ldb, (float)d->beta, C, (blasint)n);
        return;
    }
    int64_t kb = depth_block(d);
    for (int64_t n0 = 0; n0 < n; n0 += HALF_NB) {
        int64_t n1 = min64(n, n0 + HALF_NB);
        for (int64_t k0 = 0; k0 < k; k0 += kb) {
            int64_t k1 = min64(k, k0 + kb);
            float beta = k0 == 0 ? (float)d->beta : 1.0f;
            panel_to_f32(d->dtype, B, d->b.rs, d->b.cs, k0, k1, n0, n1, s->b, &tb, &ldb);
            for (int64_t m0 = 0; m0 < m; m0 += HALF_MB) {
                int64_t m1 = min64(m, m0 + HALF_MB);
                panel_to_f32(d->dtype, A, d->a.rs, d->a.cs, m0, m1, k0, k1, s->a, &ta, &lda);
                cblas_sgemm(CblasRowMajor, ta, tb, (blasint)(m1 - m0), (blasint)(n1 - n0), (blasint)(k1 - k0), alpha,
                            s->a, lda, s->b, ldb, beta, C + m0 * n + n0, (blasint)n);
            }
        }
    }
}

/* ---------------------------------------------------------------- the batch loop */

typedef struct half_job {
    const cg_gemm_desc *d;
    cg_sbgemm_fn sb;
    atomic_int oom;
} half_job;

static void half_batches(int64_t b0, int64_t b1, void *p) {
    half_job *j = p;
    const cg_gemm_desc *d = j->d;
    half_scratch s = {0};
    int64_t lim = cg_blas_max_dim();
    bool direct = j->sb && d->a.rs <= lim && d->a.cs <= lim && d->b.rs <= lim && d->b.cs <= lim &&
                  cg_blas_layout_ok(d->m, d->k, d->a.rs, d->a.cs) && cg_blas_layout_ok(d->k, d->n, d->b.rs, d->b.cs);
    if (!direct && !scratch_alloc(&s, d)) {
        atomic_store(&j->oom, 1);
        return;
    }
    for (int64_t b = b0; b < b1; b++) {
        int64_t oa, ob;
        cg_gemm_batch_offsets(d, b, &oa, &ob);
        product(d, d->a.ptr + oa * 2, d->b.ptr + ob * 2, (float *)d->c + b * d->m * d->n, &s, direct ? j->sb : NULL);
    }
    if (!direct) scratch_free(&s);
}

cg_status cg_gemm_half(const cg_gemm_desc *d) {
    CG_ASSERT(d->dtype == CG_DTYPE_BF16 || d->dtype == CG_DTYPE_F16);
    int64_t batch = cg_shape_numel(d->nbatch, d->bshape);
    if (batch == 0 || d->m == 0 || d->n == 0) return CG_OK;
    float *C = (float *)d->c;
    if (d->k == 0) { /* an empty sum: C = beta * C */
        for (int64_t i = 0; i < batch * d->m * d->n; i++) C[i] = d->beta == 0 ? 0.0f : (float)d->beta * C[i];
        return CG_OK;
    }
    half_job j = {.d = d, .sb = d->dtype == CG_DTYPE_BF16 ? cg_gemm_sbgemm() : NULL};
    atomic_init(&j.oom, 0);
    int64_t work = d->m * d->n * d->k;
    if (batch > 1 && work < CG_GEMM_SMALL_WORK) cg_parallel_for(batch, CG_GEMM_SMALL_WORK / work + 1, half_batches, &j);
    else half_batches(0, batch, &j);
    return atomic_load(&j.oom) ? cg_set_error(CG_ERR_OOM, "[gemm] out of memory for the half-precision panels") : CG_OK;
}

/* loops.h — internal: macros that generate the CPU inner loops of elementwise
 * and reduction ops for each dtype (NumPy's loop signature: args, byte steps,
 * count, params). Each loop has a contiguous fast path the compiler
 * vectorises and a scalar-broadcast path; everything else is the strided path.
 * Note [Half compute]: float16 / bfloat16 are loaded to float, computed in
 * float and stored back; they are never materialised as float32 tensors.
 * bfloat16 converts inline (a shift). float16 loops work in blocks of
 * CG_HALF_BLOCK elements: convert the block's operands into float arrays on
 * the stack (Note [Half conversions]), compute in a plain float loop, convert
 * the results back; each step is a vector loop. */
#ifndef CG_CPU_LOOPS_H
#define CG_CPU_LOOPS_H

#include "../backend.h"

#include <math.h>

/* Loops are static to the file that expands them; the files of the op table's
 * loops (elementwise_loops.gen.c, elementwise_hand.c) define this empty to
 * export theirs, which the table by op id names. */
#ifndef CG_LOOP_LINKAGE
#define CG_LOOP_LINKAGE static
#endif

#define CG_ID(x) (x)
#define CG_LD_F16(x) cg_f16_to_f32(x)
#define CG_ST_F16(x) cg_f32_to_f16(x)
#define CG_LD_BF16(x) cg_bf16_to_f32(x)
#define CG_ST_BF16(x) cg_f32_to_bf16(x)
#define CG_LD_BOOL(x) ((x) != 0)
#define CG_ST_BOOL(x) ((uint8_t)((x) != 0))

/* ---------------------------------------------------------------- unary
 * EXPR computes the result from `x` (of compute type CT); `p` = params. */
#define CG_UNARY_LOOP(fname, T, CT, OT, LOAD, STORE, EXPR)                                         \
    CG_LOOP_LINKAGE void fname(char **args, const int64_t *steps, int64_t n, const void *params) { \
        const double *p = params;                                                                  \
        (void)p;                                                                                   \
        char *o_ = args[0];                                                                        \
        const char *i_ = args[1];                                                                  \
        int64_t so_ = steps[0], si_ = steps[1];                                                    \
        if (so_ == (int64_t)sizeof(OT) && si_ == (int64_t)sizeof(T)) {                             \
            OT *O_ = (OT *)o_;                                                                     \
            const T *X_ = (const T *)i_;                                                           \
            for (int64_t k_ = 0; k_ < n; k_++) {                                                   \
                CT x = LOAD(X_[k_]);                                                               \
                O_[k_] = STORE(EXPR);                                                              \
            }                                                                                      \
        } else {                                                                                   \
            for (int64_t k_ = 0; k_ < n; k_++) {                                                   \
                CT x = LOAD(*(const T *)(i_ + k_ * si_));                                          \
                *(OT *)(o_ + k_ * so_) = STORE(EXPR);                                              \
            }                                                                                      \
        }                                                                                          \
    }

/* ---------------------------------------------------------------- float16 blocks */
#define CG_HALF_BLOCK 256

/* results of a block: float16 outputs are computed as float and converted
 * (CG_HALF_TO_F16), bool outputs directly as bytes (CG_HALF_TO_BOOL) */
#define CG_HALF_TO_F16 float, (float), cg_f32_to_f16_n
#define CG_HALF_TO_BOOL uint8_t, CG_ST_BOOL, cg_bool_copy_n
static inline void cg_bool_copy_n(uint8_t *restrict y, const uint8_t *restrict x, int64_t n) {
    memcpy(y, x, (size_t)n);
}

/* elements k0 .. k0 + w of a float16 operand at byte step `step` into buf
 * (a step of 0, a broadcast scalar, is filled once by CG_HALF_FILL) */
#define CG_HALF_GATHER(buf, base, step, k0, w)                                                     \
    do {                                                                                           \
        if ((step) == (int64_t)sizeof(cg_f16))                                                     \
            cg_f16_to_f32_n(buf, (const cg_f16 *)(base) + (k0), w);                                \
        else if ((step) != 0)                                                                      \
            for (int64_t j_ = 0; j_ < (w); j_++)                                                   \
                (buf)[j_] = cg_f16_to_f32(*(const cg_f16 *)((base) + ((k0) + j_) * (step)));       \
    } while (0)
#define CG_HALF_FILL(buf, base, step)                                                              \
    do {                                                                                           \
        if ((step) == 0) {                                                                         \
            const float v_ = cg_f16_to_f32(*(const cg_f16 *)(base));                               \
            for (int j_ = 0; j_ < CG_HALF_BLOCK; j_++) (buf)[j_] = v_;                             \
        }                                                                                          \
    } while (0)
/* results yb[0 .. w) stored as OT (STN: the block conversion) at k0 .. k0 + w */
#define CG_HALF_SCATTER(OT, STN, base, step, k0, yb, w)                                            \
    do {                                                                                           \
        if ((step) == (int64_t)sizeof(OT)) {                                                       \
            STN((OT *)(base) + (k0), yb, w);                                                       \
        } else {                                                                                   \
            OT t_[CG_HALF_BLOCK];                                                                  \
            STN(t_, yb, w);                                                                        \
            for (int64_t j_ = 0; j_ < (w); j_++) *(OT *)((base) + ((k0) + j_) * (step)) = t_[j_];  \
        }                                                                                          \
    } while (0)

/* float16 -> OT (float16 or bool) unary loop; EXPR in float from `x`; TO: CG_HALF_TO_* */
#define CG_UNARY_LOOP_F16(fname, OT, TO, EXPR) CG_UNARY_LOOP_F16_(fname, OT, TO, EXPR)
#define CG_UNARY_LOOP_F16_(fname, OT, YT, YCONV, STN, EXPR)                                        \
    CG_LOOP_LINKAGE void fname(char **args, const int64_t *steps, int64_t n, const void *params) { \
        const double *p = params;                                                                  \
        (void)p;                                                                                   \
        float xb_[CG_HALF_BLOCK];                                                                  \
        YT yb_[CG_HALF_BLOCK];                                                                     \
        CG_HALF_FILL(xb_, args[1], steps[1]);                                                      \
        for (int64_t k0_ = 0; k0_ < n; k0_ += CG_HALF_BLOCK) {                                     \
            const int64_t w_ = n - k0_ < CG_HALF_BLOCK ? n - k0_ : CG_HALF_BLOCK;                  \
            CG_HALF_GATHER(xb_, args[1], steps[1], k0_, w_);                                       \
            for (int64_t j_ = 0; j_ < w_; j_++) {                                                  \
                const float x = xb_[j_];                                                           \
                yb_[j_] = YCONV(EXPR);                                                             \
            }                                                                                      \
            CG_HALF_SCATTER(OT, STN, args[0], steps[0], k0_, yb_, w_);                             \
        }                                                                                          \
    }

/* float16 -> OT binary loop; EXPR in float from `a` and `b`; TO: CG_HALF_TO_* */
#define CG_BINARY_LOOP_F16(fname, OT, TO, EXPR) CG_BINARY_LOOP_F16_(fname, OT, TO, EXPR)
#define CG_BINARY_LOOP_F16_(fname, OT, YT, YCONV, STN, EXPR)                                       \
    CG_LOOP_LINKAGE void fname(char **args, const int64_t *steps, int64_t n, const void *params) { \
        const double *p = params;                                                                  \
        (void)p;                                                                                   \
        float ab_[CG_HALF_BLOCK], bb_[CG_HALF_BLOCK];                                              \
        YT yb_[CG_HALF_BLOCK];                                                                     \
        CG_HALF_FILL(ab_, args[1], steps[1]);                                                      \
        CG_HALF_FILL(bb_, args[2], steps[2]);                                                      \
        for (int64_t k0_ = 0; k0_ < n; k0_ += CG_HALF_BLOCK) {                                     \
            const int64_t w_ = n - k0_ < CG_HALF_BLOCK ? n - k0_ : CG_HALF_BLOCK;                  \
            CG_HALF_GATHER(ab_, args[1], steps[1], k0_, w_);                                       \
            CG_HALF_GATHER(bb_, args[2], steps[2], k0_, w_);                                       \
            for (int64_t j_ = 0; j_ < w_; j_++) {                                                  \
                const float a = ab_[j_], b = bb_[j_];                                              \
                yb_[j_] = YCONV(EXPR);                                                             \
            }                                                                                      \
            CG_HALF_SCATTER(OT, STN, args[0], steps[0], k0_, yb_, w_);                             \
        }                                                                                          \
    }

/* float loops: name_f32/_f64/_f16/_bf16; EXPR_F in float, EXPR_D in double */
#define CG_UNARY_FLOAT_LOOPS(name, EXPR_F, EXPR_D)                                   \
    CG_UNARY_LOOP(name##_f32, float, float, float, CG_ID, CG_ID, EXPR_F)             \
    CG_UNARY_LOOP(name##_f64, double, double, double, CG_ID, CG_ID, EXPR_D)          \
    CG_UNARY_LOOP_F16(name##_f16, cg_f16, CG_HALF_TO_F16, EXPR_F)                    \
    CG_UNARY_LOOP(name##_bf16, cg_bf16, float, cg_bf16, CG_LD_BF16, CG_ST_BF16, EXPR_F)

/* float -> bool predicate loops (isnan, ...) */
#define CG_UNARY_FLOAT_PRED_LOOPS(name, EXPR_F, EXPR_D)                                  \
    CG_UNARY_LOOP(name##_f32, float, float, uint8_t, CG_ID, CG_ST_BOOL, EXPR_F)          \
    CG_UNARY_LOOP(name##_f64, double, double, uint8_t, CG_ID, CG_ST_BOOL, EXPR_D)        \
    CG_UNARY_LOOP_F16(name##_f16, uint8_t, CG_HALF_TO_BOOL, EXPR_F)                      \
    CG_UNARY_LOOP(name##_bf16, cg_bf16, float, uint8_t, CG_LD_BF16, CG_ST_BOOL, EXPR_F)

/* integer loops (uint8 .. int64) computed in their own type */
#define CG_UNARY_INT_LOOPS(name, EXPR)                                        \
    CG_UNARY_LOOP(name##_u8, uint8_t, uint8_t, uint8_t, CG_ID, CG_ID, EXPR)   \
    CG_UNARY_LOOP(name##_i8, int8_t, int8_t, int8_t, CG_ID, CG_ID, EXPR)      \
    CG_UNARY_LOOP(name##_i16, int16_t, int16_t, int16_t, CG_ID, CG_ID, EXPR)  \
    CG_UNARY_LOOP(name##_i32, int32_t, int32_t, int32_t, CG_ID, CG_ID, EXPR)  \
    CG_UNARY_LOOP(name##_i64, int64_t, int64_t, int64_t, CG_ID, CG_ID, EXPR)

#define CG_FLOAT_TABLE(name) \
    [CG_DTYPE_F16] = name##_f16, [CG_DTYPE_BF16] = name##_bf16, [CG_DTYPE_F32] = name##_f32, [CG_DTYPE_F64] = name##_f64
#define CG_INT_TABLE(name) \
    [CG_DTYPE_U8] = name##_u8, [CG_DTYPE_I8] = name##_i8, [CG_DTYPE_I16] = name##_i16, [CG_DTYPE_I32] = name##_i32, \
    [CG_DTYPE_I64] = name##_i64
/* the barebones unsigned dtypes (uint16/32/64): only the few ops PyTorch runs on them */
#define CG_UINT_TABLE(name) [CG_DTYPE_U16] = name##_u16, [CG_DTYPE_U32] = name##_u32, [CG_DTYPE_U64] = name##_u64

/* ---------------------------------------------------------------- binary
 * EXPR computes from `a` and `b` (compute type CT). Fast paths: both
 * contiguous, and either side a broadcast scalar (step 0). */
#define CG_BINARY_LOOP(fname, T, CT, OT, LOAD, STORE, EXPR)                                        \
    CG_LOOP_LINKAGE void fname(char **args, const int64_t *steps, int64_t n, const void *params) { \
        const double *p = params;                                                                  \
        (void)p;                                                                                   \
        char *o_ = args[0];                                                                        \
        const char *a_ = args[1], *b_ = args[2];                                                   \
        int64_t so_ = steps[0], sa_ = steps[1], sb_ = steps[2];                                    \
        if (so_ == (int64_t)sizeof(OT) && sa_ == (int64_t)sizeof(T) && sb_ == (int64_t)sizeof(T)) { \
            OT *O_ = (OT *)o_;                                                                     \
            const T *A_ = (const T *)a_, *B_ = (const T *)b_;                                      \
            for (int64_t k_ = 0; k_ < n; k_++) {                                                   \
                CT a = LOAD(A_[k_]), b = LOAD(B_[k_]);                                             \
                O_[k_] = STORE(EXPR);                                                              \
            }                                                                                      \
        } else if (so_ == (int64_t)sizeof(OT) && sa_ == (int64_t)sizeof(T) && sb_ == 0) {          \
            OT *O_ = (OT *)o_;                                                                     \
            const T *A_ = (const T *)a_;                                                           \
            const CT b = LOAD(*(const T *)b_);                                                     \
            for (int64_t k_ = 0; k_ < n; k_++) {                                                   \
                CT a = LOAD(A_[k_]);                                                               \
                O_[k_] = STORE(EXPR);                                                              \
            }                                                                                      \
        } else if (so_ == (int64_t)sizeof(OT) && sa_ == 0 && sb_ == (int64_t)sizeof(T)) {          \
            OT *O_ = (OT *)o_;                                                                     \
            const T *B_ = (const T *)b_;                                                           \
            const CT a = LOAD(*(const T *)a_);                                                     \
            for (int64_t k_ = 0; k_ < n; k_++) {                                                   \
                CT b = LOAD(B_[k_]);                                                               \
                O_[k_] = STORE(EXPR);                                                              \
            }                                                                                      \
        } else {                                                                                   \
            for (int64_t k_ = 0; k_ < n; k_++) {                                                   \
                CT a = LOAD(*(const T *)(a_ + k_ * sa_)), b = LOAD(*(const T *)(b_ + k_ * sb_));   \
                *(OT *)(o_ + k_ * so_) = STORE(EXPR);                                              \
            }                                                                                      \
        }                                                                                          \
    }

#define CG_BINARY_FLOAT_LOOPS(name, EXPR_F, EXPR_D)                                   \
    CG_BINARY_LOOP(name##_f32, float, float, float, CG_ID, CG_ID, EXPR_F)             \
    CG_BINARY_LOOP(name##_f64, double, double, double, CG_ID, CG_ID, EXPR_D)          \
    CG_BINARY_LOOP_F16(name##_f16, cg_f16, CG_HALF_TO_F16, EXPR_F)                    \
    CG_BINARY_LOOP(name##_bf16, cg_bf16, float, cg_bf16, CG_LD_BF16, CG_ST_BF16, EXPR_F)

#define CG_BINARY_INT_LOOPS(name, EXPR)                                        \
    CG_BINARY_LOOP(name##_u8, uint8_t, uint8_t, uint8_t, CG_ID, CG_ID, EXPR)   \
    CG_BINARY_LOOP(name##_i8, int8_t, int8_t, int8_t, CG_ID, CG_ID, EXPR)      \
    CG_BINARY_LOOP(name##_i16, int16_t, int16_t, int16_t, CG_ID, CG_ID, EXPR)  \
    CG_BINARY_LOOP(name##_i32, int32_t, int32_t, int32_t, CG_ID, CG_ID, EXPR)  \
    CG_BINARY_LOOP(name##_i64, int64_t, int64_t, int64_t, CG_ID, CG_ID, EXPR)

/* integer loops computed in unsigned arithmetic of at least the width, so
 * signed overflow wraps (as PyTorch's results do) instead of being UB */
#define CG_BINARY_WRAPPING_INT_LOOPS(name, EXPR)                                 \
    CG_BINARY_LOOP(name##_u8, uint8_t, uint32_t, uint8_t, CG_ID, CG_ID, EXPR)    \
    CG_BINARY_LOOP(name##_i8, int8_t, uint32_t, int8_t, CG_ID, CG_ID, EXPR)      \
    CG_BINARY_LOOP(name##_i16, int16_t, uint32_t, int16_t, CG_ID, CG_ID, EXPR)   \
    CG_BINARY_LOOP(name##_i32, int32_t, uint32_t, int32_t, CG_ID, CG_ID, EXPR)   \
    CG_BINARY_LOOP(name##_i64, int64_t, uint64_t, int64_t, CG_ID, CG_ID, EXPR)

/* predicates (comparisons): every dtype -> bool */
#define CG_BINARY_PRED_LOOPS(name, EXPR)                                                  \
    CG_BINARY_LOOP(name##_b, uint8_t, int, uint8_t, CG_LD_BOOL, CG_ST_BOOL, EXPR)         \
    CG_BINARY_LOOP(name##_u8, uint8_t, uint8_t, uint8_t, CG_ID, CG_ST_BOOL, EXPR)         \
    CG_BINARY_LOOP(name##_i8, int8_t, int8_t, uint8_t, CG_ID, CG_ST_BOOL, EXPR)           \
    CG_BINARY_LOOP(name##_i16, int16_t, int16_t, uint8_t, CG_ID, CG_ST_BOOL, EXPR)        \
    CG_BINARY_LOOP(name##_i32, int32_t, int32_t, uint8_t, CG_ID, CG_ST_BOOL, EXPR)        \
    CG_BINARY_LOOP(name##_i64, int64_t, int64_t, uint8_t, CG_ID, CG_ST_BOOL, EXPR)        \
    CG_BINARY_LOOP(name##_f32, float, float, uint8_t, CG_ID, CG_ST_BOOL, EXPR)            \
    CG_BINARY_LOOP(name##_f64, double, double, uint8_t, CG_ID, CG_ST_BOOL, EXPR)          \
    CG_BINARY_LOOP_F16(name##_f16, uint8_t, CG_HALF_TO_BOOL, EXPR)                        \
    CG_BINARY_LOOP(name##_bf16, cg_bf16, float, uint8_t, CG_LD_BF16, CG_ST_BOOL, EXPR)

/* the barebones unsigned dtypes, computed in unsigned arithmetic (wrapping) */
#define CG_BINARY_UINT_LOOPS(name, EXPR)                                           \
    CG_BINARY_LOOP(name##_u16, uint16_t, uint32_t, uint16_t, CG_ID, CG_ID, EXPR)    \
    CG_BINARY_LOOP(name##_u32, uint32_t, uint32_t, uint32_t, CG_ID, CG_ID, EXPR)    \
    CG_BINARY_LOOP(name##_u64, uint64_t, uint64_t, uint64_t, CG_ID, CG_ID, EXPR)
#define CG_BINARY_UINT_PRED_LOOPS(name, EXPR)                                       \
    CG_BINARY_LOOP(name##_u16, uint16_t, uint16_t, uint8_t, CG_ID, CG_ST_BOOL, EXPR) \
    CG_BINARY_LOOP(name##_u32, uint32_t, uint32_t, uint8_t, CG_ID, CG_ST_BOOL, EXPR) \
    CG_BINARY_LOOP(name##_u64, uint64_t, uint64_t, uint8_t, CG_ID, CG_ST_BOOL, EXPR)

#define CG_ALL_TABLE(name) [CG_DTYPE_BOOL] = name##_b, CG_INT_TABLE(name), CG_FLOAT_TABLE(name)

/* ---------------------------------------------------------------- reductions
 * A reduce loop folds n elements at byte stride s into one output.
 * INIT: initial accumulator; STEP(acc, x): fold; FINAL(acc, n): result. */
#define CG_REDUCE_LOOP(fname, T, ACC, OT, LOAD, STORE, INIT, STEP, FINAL)                          \
    static void fname(char *out, char *out2, const char *in, int64_t n, int64_t s, const double *p) { \
        (void)out2;                                                                                 \
        (void)p;                                                                                    \
        ACC acc = INIT;                                                                             \
        if (s == (int64_t)sizeof(T)) {                                                              \
            const T *X_ = (const T *)in;                                                            \
            for (int64_t k_ = 0; k_ < n; k_++) {                                                    \
                ACC x = (ACC)LOAD(X_[k_]);                                                          \
                acc = STEP(acc, x);                                                                 \
            }                                                                                       \
        } else {                                                                                    \
            for (int64_t k_ = 0; k_ < n; k_++) {                                                    \
                ACC x = (ACC)LOAD(*(const T *)(in + k_ * s));                                       \
                acc = STEP(acc, x);                                                                 \
            }                                                                                       \
        }                                                                                           \
        *(OT *)out = STORE(FINAL(acc, n));                                                          \
    }

#endif

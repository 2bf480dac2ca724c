# elementwise_ops.py — the table of named elementwise ops: one row per op.
# Plain data (read with ast.literal_eval by tools/gen_ops.py, which generates
# the op ids, the public declarations, the descriptors, the CPU loops and the
# binding's lists from it; see docs/engine.md "Adding an elementwise op").
#
# Columns (a row is one dict; absent keys take the default in brackets):
#   name      the op ("add"): cg_<name>, cg_op_<name>, CG_OP_<NAME>
#   arity     1 or 2
#   family    the src/ops file holding the backward formula (and grouping)
#   loops     dtypes supported -> scalar expression, from which the CPU loops are
#             generated with the CG_*_LOOP macros of src/backend/cpu/loops.h
#             (x: the unary operand; a, b: the binary operands; p: the params):
#               "float":     (expr in float, expr in double)   f32 f64 f16 bf16
#               "float_pred": (float, double) -> bool           f32 f64 f16 bf16
#               "int":       (kind, expr)   u8 .. i64; kind "own" (computed in
#                            the input type), "wrap" (unsigned arithmetic),
#                            "int64" (computed in int64), "sint" (i8 .. i64),
#                            "shift" (expr is a macro of (bits, signed))
#               "uint":      expr   u16 u32 u64, unsigned arithmetic
#               "uint_copy": ""     u16 u32 u64 copied (unary)
#               "uint_pred": expr   u16 u32 u64 -> bool
#               "all_pred":  expr (binary) or (int, float, double) (unary):
#                            every dtype but u16 .. u64 -> bool
#               "b", "u8", ...: expr with the usual types of that dtype, or
#                            (T, CT, OT, LOAD, STORE, expr); "b u8 i8": one loop
#                            shared by those dtypes
#             Expressions may call the scalar kernels of
#             src/backend/cpu/elementwise_kernels.h (hand-written: flagged integer
#             division, floor division, erfinv, ...) and vmath.h (SIMD math).
#   out       "same" | "bool"                                     ["same"]
#   promote   the binding's result-dtype rule: unary "same" | "float"
#             (integers -> default float) | "square"; binary "arith" | "float"
#             (true division: integers -> default float) | "bool" (comparison)
#   operands  binary: which may be Python numbers: "any" | "input" | "both"
#   py        Python forms generated into the binding's lists: "method" (Tensor
#             method and torch function), "function" (torch function only),
#             "custom" (a hand-written binding elsewhere)           ["method"]
#   py_inplace "" | "engine" (x.op_() runs the engine's in-place form) |
#             "copy" (computed out of place and copied back)     ["engine"]
#   c_inplace the public C in-place function cg_<name>_ exists     [False]
#   public    the public C function cg_<name>(x) / (a, b) is generated [True]
#   node      the autograd node's name
#   amp       "keep" | "lower" | "fp32"                           ["keep"]
#   nondet    nondeterministic (refused under deterministic mode) [False]
#   saves     "" | "in" | "out" | "in out"                         [""]
#   backward  the backward function (src/ops), None = not differentiable
#   loop_error message when a loop flags an error (Note [Loop errors]) [None]
#   doc       a comment for the declaration in cgrad.h           [""]
#
# Hand rows ("descriptor": "hand"): ops with scalar parameters, n-ary ops and
# the internal gradient ops. Their descriptor (with its parameters and backward
# formula) is written in the family file and names the row's id and dtypes
# (.id = CG_OP_<NAME>, .dtypes = CG_OP_DTYPES_<NAME>); their CPU loops,
# cg_cpu_<name>_<dtype>, are hand-written in src/backend/cpu/elementwise_hand.c.
# Columns: name, arity (1 .. 3), family, loops {"hand": dtypes} with dtypes a
# list of "float", "int", "uint" and single dtypes ("b"), and optionally
# loops_of (the row whose loops it runs, with other parameters). No public
# function, binding form or by-name lookup is generated for them.
OPS = [
    # ------------------------------------------------------------ unary math (unary_math.c)
    {"name": "neg", "arity": 1, "family": "unary_math", "loops": {"float": ("-x", "-x"), "int": ("own", "-x")},
     "promote": "same", "node": "NegBackward0", "backward": "cg_bw_neg"},
    {"name": "exp", "arity": 1, "family": "unary_math", "loops": {"float": ("cg_vm_expf(x)", "exp(x)")},
     "promote": "float", "node": "ExpBackward0", "saves": "out", "backward": "cg_bw_exp"},
    {"name": "abs", "arity": 1, "family": "unary_math",
     "loops": {"float": ("fabsf(x)", "fabs(x)"), "int": ("sint", "x < 0 ? -x : x"), "u8": "x"},
     "promote": "same", "node": "AbsBackward0", "saves": "in", "backward": "cg_bw_abs"},
    {"name": "sign", "arity": 1, "family": "unary_math",
     "loops": {"float": ("(float)((x > 0) - (x < 0))", "(double)((x > 0) - (x < 0))"),
               "int": ("sint", "(x > 0) - (x < 0)"), "u8": "x > 0",
               "b": ("uint8_t", "uint8_t", "uint8_t", "CG_ID", "CG_ID", "x != 0")},
     "promote": "same", "node": "SignBackward0", "backward": "cg_zero_backward", "doc": "NaN -> 0"},
    {"name": "reciprocal", "arity": 1, "family": "unary_math", "loops": {"float": ("1.0f / x", "1.0 / x")},
     "promote": "float", "node": "ReciprocalBackward0", "saves": "out", "backward": "cg_bw_reciprocal"},
    {"name": "square", "arity": 1, "family": "unary_math",
     "loops": {"float": ("x * x", "x * x"), "int": ("own", "(uint64_t)x * (uint64_t)x")},
     "promote": "square", "node": "PowBackward0", "saves": "in", "backward": "cg_bw_square"},
    {"name": "sqrt", "arity": 1, "family": "unary_math", "loops": {"float": ("sqrtf(x)", "sqrt(x)")},
     "promote": "float", "node": "SqrtBackward0", "saves": "out", "backward": "cg_bw_sqrt"},
    {"name": "rsqrt", "arity": 1, "family": "unary_math", "loops": {"float": ("1.0f / sqrtf(x)", "1.0 / sqrt(x)")},
     "promote": "float", "node": "RsqrtBackward0", "saves": "out", "backward": "cg_bw_rsqrt"},
    {"name": "exp2", "arity": 1, "family": "unary_math", "loops": {"float": ("exp2f(x)", "exp2(x)")},
     "promote": "float", "node": "Exp2Backward0", "saves": "out", "backward": "cg_bw_exp2"},
    {"name": "expm1", "arity": 1, "family": "unary_math", "loops": {"float": ("cg_vm_expm1f(x)", "expm1(x)")},
     "promote": "float", "node": "Expm1Backward0", "saves": "out", "backward": "cg_bw_expm1"},
    {"name": "log", "arity": 1, "family": "unary_math", "loops": {"float": ("cg_vm_logf(x)", "log(x)")},
     "promote": "float", "node": "LogBackward0", "saves": "in", "backward": "cg_bw_log"},
    {"name": "log2", "arity": 1, "family": "unary_math", "loops": {"float": ("log2f(x)", "log2(x)")},
     "promote": "float", "node": "Log2Backward0", "saves": "in", "backward": "cg_bw_log2"},
    {"name": "log10", "arity": 1, "family": "unary_math", "loops": {"float": ("log10f(x)", "log10(x)")},
     "promote": "float", "node": "Log10Backward0", "saves": "in", "backward": "cg_bw_log10"},
    {"name": "log1p", "arity": 1, "family": "unary_math", "loops": {"float": ("cg_vm_log1pf(x)", "log1p(x)")},
     "promote": "float", "node": "Log1PBackward0", "saves": "in", "backward": "cg_bw_log1p"},
    {"name": "sin", "arity": 1, "family": "unary_math", "loops": {"float": ("sinf(x)", "sin(x)")},
     "promote": "float", "node": "SinBackward0", "saves": "in", "backward": "cg_bw_sin"},
    {"name": "cos", "arity": 1, "family": "unary_math", "loops": {"float": ("cosf(x)", "cos(x)")},
     "promote": "float", "node": "CosBackward0", "saves": "in", "backward": "cg_bw_cos"},
    {"name": "tan", "arity": 1, "family": "unary_math", "loops": {"float": ("tanf(x)", "tan(x)")},
     "promote": "float", "node": "TanBackward0", "saves": "out", "backward": "cg_bw_tan"},
    {"name": "asin", "arity": 1, "family": "unary_math", "loops": {"float": ("asinf(x)", "asin(x)")},
     "promote": "float", "node": "AsinBackward0", "saves": "in", "backward": "cg_bw_asin"},
    {"name": "acos", "arity": 1, "family": "unary_math", "loops": {"float": ("acosf(x)", "acos(x)")},
     "promote": "float", "node": "AcosBackward0", "saves": "in", "backward": "cg_bw_acos"},
    {"name": "atan", "arity": 1, "family": "unary_math", "loops": {"float": ("atanf(x)", "atan(x)")},
     "promote": "float", "node": "AtanBackward0", "saves": "in", "backward": "cg_bw_atan"},
    {"name": "sinh", "arity": 1, "family": "unary_math", "loops": {"float": ("sinhf(x)", "sinh(x)")},
     "promote": "float", "node": "SinhBackward0", "saves": "in", "backward": "cg_bw_sinh"},
    {"name": "cosh", "arity": 1, "family": "unary_math", "loops": {"float": ("coshf(x)", "cosh(x)")},
     "promote": "float", "node": "CoshBackward0", "saves": "in", "backward": "cg_bw_cosh"},
    {"name": "tanh", "arity": 1, "family": "unary_math", "loops": {"float": ("cg_vm_tanhf(x)", "tanh(x)")},
     "promote": "float", "node": "TanhBackward0", "saves": "out", "backward": "cg_bw_tanh"},
    {"name": "asinh", "arity": 1, "family": "unary_math", "loops": {"float": ("asinhf(x)", "asinh(x)")},
     "promote": "float", "node": "AsinhBackward0", "saves": "in", "backward": "cg_bw_asinh"},
    {"name": "acosh", "arity": 1, "family": "unary_math", "loops": {"float": ("acoshf(x)", "acosh(x)")},
     "promote": "float", "node": "AcoshBackward0", "saves": "in", "backward": "cg_bw_acosh"},
    {"name": "atanh", "arity": 1, "family": "unary_math", "loops": {"float": ("atanhf(x)", "atanh(x)")},
     "promote": "float", "node": "AtanhBackward0", "saves": "in", "backward": "cg_bw_atanh"},
    {"name": "erf", "arity": 1, "family": "unary_math", "loops": {"float": ("cg_vm_erff(x)", "erf(x)")},
     "promote": "float", "node": "ErfBackward0", "saves": "in", "backward": "cg_bw_erf"},
    {"name": "erfc", "arity": 1, "family": "unary_math", "loops": {"float": ("cg_vm_erfcf(x)", "erfc(x)")},
     "promote": "float", "node": "ErfcBackward0", "saves": "in", "backward": "cg_bw_erfc"},
    {"name": "erfinv", "arity": 1, "family": "unary_math",
     "loops": {"float": ("(float)cg_erfinv_d(x)", "cg_erfinv_d(x)")},
     "promote": "float", "node": "ErfinvBackward0", "saves": "out", "backward": "cg_bw_erfinv"},
    # internal: lgamma(a) in igamma's backward (a takes no gradient there); torch.lgamma itself is
    # composed in Python (_ops_math.py), differentiable through digamma
    {"name": "lgamma", "arity": 1, "family": "unary_math",
     "loops": {"float": ("(float)cg_lgamma_d(x)", "cg_lgamma_d(x)")},
     "promote": "float", "py": "custom", "public": False, "py_inplace": "", "node": "LgammaBackward0",
     "backward": None},
    {"name": "floor", "arity": 1, "family": "unary_math",
     "loops": {"float": ("floorf(x)", "floor(x)"), "int": ("own", "x"), "uint_copy": ""},
     "promote": "same", "node": "FloorBackward0", "backward": "cg_zero_backward"},
    {"name": "ceil", "arity": 1, "family": "unary_math",
     "loops": {"float": ("ceilf(x)", "ceil(x)"), "int": ("own", "x"), "uint_copy": ""},
     "promote": "same", "node": "CeilBackward0", "backward": "cg_zero_backward"},
    {"name": "round", "arity": 1, "family": "unary_math",
     "loops": {"float": ("rintf(x)", "rint(x)"), "int": ("own", "x"), "uint_copy": ""},
     "promote": "same", "py": "custom", "node": "RoundBackward0", "backward": "cg_zero_backward",
     "doc": "half to even"},
    {"name": "trunc", "arity": 1, "family": "unary_math",
     "loops": {"float": ("truncf(x)", "trunc(x)"), "int": ("own", "x"), "uint_copy": ""},
     "promote": "same", "node": "TruncBackward0", "backward": "cg_zero_backward"},
    {"name": "frac", "arity": 1, "family": "unary_math", "loops": {"float": ("x - truncf(x)", "x - trunc(x)")},
     "promote": "same", "node": "FracBackward0", "backward": "cg_bw_frac"},

    # ------------------------------------------------------------ activations (activations.c)
    {"name": "relu", "arity": 1, "family": "activations",
     "loops": {"float": ("x < 0 ? 0.0f : x", "x < 0 ? 0.0 : x"), "int": ("sint", "x < 0 ? 0 : x"), "u8": "x"},
     "promote": "same", "node": "ReluBackward0", "saves": "out", "backward": "cg_bw_relu"},
    {"name": "relu6", "arity": 1, "family": "activations",
     "loops": {"float": ("CG_HARDTANH(x, 0.0f, 6.0f)", "CG_HARDTANH(x, 0.0, 6.0)")},
     "promote": "same", "py": "custom", "node": "HardtanhBackward0", "saves": "out", "backward": "cg_bw_relu6"},
    {"name": "selu", "arity": 1, "family": "activations",
     "loops": {"float": ("CG_ELU(x, float, CG_SELU_ALPHA, CG_SELU_SCALE, 1, cg_vm_expm1f)",
                         "CG_ELU(x, double, CG_SELU_ALPHA, CG_SELU_SCALE, 1, expm1)")},
     "promote": "same", "py": "function", "node": "EluBackward0", "saves": "in", "backward": "cg_bw_selu"},
    {"name": "gelu", "arity": 1, "family": "activations", "loops": {"float": ("cg_vm_geluf(x)", "cg_vm_gelu_d(x)")},
     "promote": "same", "py": "custom", "public": False, "node": "GeluBackward0", "saves": "in",
     "backward": "cg_bw_gelu"},
    {"name": "silu", "arity": 1, "family": "activations",
     "loops": {"float": ("x * cg_vm_sigmoidf(x)", "x / (1.0 + exp(-x))")},
     "promote": "same", "py": "custom", "node": "SiluBackward0", "saves": "in", "backward": "cg_bw_silu"},
    {"name": "mish", "arity": 1, "family": "activations",
     "loops": {"float": ("cg_mish_f(x)", "x * tanh(log1p(exp(x)))")},
     "promote": "same", "py": "custom", "node": "MishBackward0", "saves": "in", "backward": "cg_bw_mish"},
    {"name": "softsign", "arity": 1, "family": "activations",
     "loops": {"float": ("x / (1.0f + fabsf(x))", "x / (1.0 + fabs(x))")},
     "promote": "same", "py": "custom", "node": "SoftsignBackward0", "saves": "in", "backward": "cg_bw_softsign"},
    {"name": "sigmoid", "arity": 1, "family": "activations",
     "loops": {"float": ("cg_vm_sigmoidf(x)", "cg_vm_sigmoid_d(x)")},
     "promote": "float", "node": "SigmoidBackward0", "saves": "out", "backward": "cg_bw_sigmoid"},
    {"name": "logsigmoid", "arity": 1, "family": "activations",
     "loops": {"float": ("(x < 0.0f ? x : 0.0f) - cg_vm_log1pf(cg_vm_expf(-fabsf(x)))",
                         "fmin(x, 0.0) - log1p(exp(-fabs(x)))")},
     "promote": "same", "py": "custom", "node": "LogSigmoidBackward0", "saves": "in", "backward": "cg_bw_logsigmoid"},
    {"name": "hardsigmoid", "arity": 1, "family": "activations",
     "loops": {"float": ("CG_HARDSIGMOID(x, float)", "CG_HARDSIGMOID(x, double)")},
     "promote": "same", "py": "custom", "node": "HardsigmoidBackward0", "saves": "in",
     "backward": "cg_bw_hardsigmoid"},
    {"name": "hardswish", "arity": 1, "family": "activations",
     "loops": {"float": ("CG_HARDSWISH(x, float)", "CG_HARDSWISH(x, double)")},
     "promote": "same", "py": "custom", "node": "HardswishBackward0", "saves": "in", "backward": "cg_bw_hardswish"},

    # ------------------------------------------------------------ predicates and logic (unary_math.c, logic.c)
    {"name": "isnan", "arity": 1, "family": "unary_math", "out": "bool",
     "loops": {"float_pred": ("isnan(x)", "isnan(x)"),
               "b u8 i8": ("uint8_t", "int", "uint8_t", "CG_ID", "CG_ST_BOOL", "0 * x"),
               "i16 u16": ("int16_t", "int", "uint8_t", "CG_ID", "CG_ST_BOOL", "0 * x"),
               "i32 u32": ("int32_t", "int", "uint8_t", "CG_ID", "CG_ST_BOOL", "0 * x"),
               "i64 u64": ("int64_t", "int64_t", "uint8_t", "CG_ID", "CG_ST_BOOL", "0 * x")},
     "promote": "same", "py_inplace": "", "node": "IsnanBackward0", "backward": None},
    {"name": "isinf", "arity": 1, "family": "logic", "out": "bool",
     "loops": {"all_pred": ("0 * x", "isinf(x)", "isinf(x)"), "uint_pred": "0 * x"},
     "promote": "same", "py_inplace": "", "node": "IsinfBackward0", "backward": None},
    {"name": "isfinite", "arity": 1, "family": "logic", "out": "bool",
     "loops": {"all_pred": ("1 + 0 * x", "isfinite(x)", "isfinite(x)"), "uint_pred": "1 + 0 * x"},
     "promote": "same", "py_inplace": "", "node": "IsfiniteBackward0", "backward": None},
    {"name": "logical_not", "arity": 1, "family": "logic", "out": "bool",
     "loops": {"all_pred": ("x == 0", "x == 0", "x == 0")},
     "promote": "same", "py_inplace": "copy", "node": "LogicalNotBackward0", "backward": None},
    {"name": "bitwise_not", "arity": 1, "family": "logic",
     "loops": {"int": ("own", "~x"), "b": "!x"},
     "promote": "same", "node": "BitwiseNotBackward0", "backward": None},

    # ------------------------------------------------------------ arithmetic (arith.c)
    {"name": "add", "arity": 2, "family": "arith",
     "loops": {"float": ("a + b", "a + b"), "int": ("wrap", "a + b"), "b": "a || b"},
     "promote": "arith", "operands": "any", "py": "custom", "c_inplace": True,
     "node": "AddBackward0", "backward": "cg_bw_add"},
    {"name": "sub", "arity": 2, "family": "arith",
     "loops": {"float": ("a - b", "a - b"), "int": ("wrap", "a - b")},
     "promote": "arith", "operands": "any", "py": "custom", "c_inplace": True,
     "node": "SubBackward0", "backward": "cg_bw_sub"},
    {"name": "mul", "arity": 2, "family": "arith",
     "loops": {"float": ("a * b", "a * b"), "int": ("wrap", "a * b"), "b": "a && b", "uint": "a * b"},
     "promote": "arith", "operands": "any", "c_inplace": True,
     "node": "MulBackward0", "saves": "in", "backward": "cg_bw_mul"},
    {"name": "div", "arity": 2, "family": "arith", "loops": {"float": ("a / b", "a / b")},
     "promote": "float", "operands": "any", "py": "custom", "c_inplace": True,
     "node": "DivBackward0", "saves": "in", "backward": "cg_bw_div", "doc": "true division (float dtypes)"},
    {"name": "floor_divide", "arity": 2, "family": "arith",
     "loops": {"float": ("cg_floordiv_f(a, b)", "cg_floordiv_d(a, b)"), "int": ("int64", "cg_ifloordiv(a, b, p)")},
     "promote": "arith", "operands": "any", "node": "FloorDivideBackward0", "backward": "cg_zero_backward",
     "loop_error": "integer division by zero (ZeroDivisionError)"},
    {"name": "remainder", "arity": 2, "family": "arith",
     "loops": {"float": ("cg_remainder_f(a, b)", "cg_remainder_d(a, b)"), "int": ("int64", "cg_iremainder(a, b, p)")},
     "promote": "arith", "operands": "any", "node": "RemainderBackward0", "saves": "in",
     "backward": "cg_bw_remainder", "loop_error": "integer division by zero (ZeroDivisionError)",
     "doc": "sign of divisor (Python %)"},
    {"name": "fmod", "arity": 2, "family": "arith",
     "loops": {"float": ("fmodf(a, b)", "fmod(a, b)"), "int": ("int64", "cg_ifmod(a, b, p)")},
     "promote": "arith", "operands": "input", "node": "FmodBackward0", "saves": "in",
     "backward": "cg_bw_fmod", "loop_error": "integer division by zero (ZeroDivisionError)",
     "doc": "sign of dividend (C fmod)"},
    {"name": "pow", "arity": 2, "family": "arith",
     "loops": {"float": ("powf(a, b)", "pow(a, b)"), "int": ("int64", "cg_ipow(a, b)")},
     "promote": "arith", "operands": "any", "py": "custom", "c_inplace": True,
     "node": "PowBackward1", "saves": "in out", "backward": "cg_bw_pow"},
    {"name": "atan2", "arity": 2, "family": "arith", "loops": {"float": ("atan2f(a, b)", "atan2(a, b)")},
     "promote": "float", "operands": "both", "node": "Atan2Backward0", "saves": "in", "backward": "cg_bw_atan2"},
    {"name": "maximum", "arity": 2, "family": "arith",
     "loops": {"float": ("(isnan(a) || a > b) ? a : b", "(isnan(a) || a > b) ? a : b"),
               "int": ("own", "a > b ? a : b"), "b": "a || b"},
     "promote": "arith", "operands": "both", "py_inplace": "", "node": "MaximumBackward0", "saves": "in",
     "backward": "cg_bw_maximum"},
    {"name": "minimum", "arity": 2, "family": "arith",
     "loops": {"float": ("(isnan(a) || a < b) ? a : b", "(isnan(a) || a < b) ? a : b"),
               "int": ("own", "a < b ? a : b"), "b": "a && b"},
     "promote": "arith", "operands": "both", "py_inplace": "", "node": "MinimumBackward0", "saves": "in",
     "backward": "cg_bw_minimum"},
    {"name": "hypot", "arity": 2, "family": "arith", "loops": {"float": ("hypotf(a, b)", "hypot(a, b)")},
     "promote": "arith", "operands": "both", "node": "HypotBackward0", "saves": "in out", "backward": "cg_bw_hypot"},
    {"name": "logaddexp", "arity": 2, "family": "arith",
     "loops": {"float": ("cg_logaddexp_f(a, b)", "cg_logaddexp_d(a, b)")},
     "promote": "arith", "operands": "both", "py_inplace": "", "node": "LogaddexpBackward0", "saves": "in",
     "backward": "cg_bw_logaddexp"},
    {"name": "logaddexp2", "arity": 2, "family": "arith",
     "loops": {"float": ("cg_logaddexp2_f(a, b)", "cg_logaddexp2_d(a, b)")},
     "promote": "arith", "operands": "both", "py_inplace": "", "node": "Logaddexp2Backward0", "saves": "in",
     "backward": "cg_bw_logaddexp2"},
    {"name": "copysign", "arity": 2, "family": "arith", "loops": {"float": ("copysignf(a, b)", "copysign(a, b)")},
     "promote": "float", "operands": "input", "node": "CopysignBackward0", "saves": "in out",
     "backward": "cg_bw_copysign", "doc": "|a| with the sign of b"},
    {"name": "igamma", "arity": 2, "family": "arith",
     "loops": {"float": ("(float)cg_igamma_d(a, b, false)", "cg_igamma_d(a, b, false)")},
     "promote": "arith", "operands": "both", "node": "IgammaBackward0", "saves": "in", "backward": "cg_bw_igamma",
     "doc": "the regularized lower incomplete gamma function P(a, b) (Note [Incomplete gamma])"},
    {"name": "igammac", "arity": 2, "family": "arith",
     "loops": {"float": ("(float)cg_igamma_d(a, b, true)", "cg_igamma_d(a, b, true)")},
     "promote": "arith", "operands": "both", "node": "IgammacBackward0", "saves": "in", "backward": "cg_bw_igammac",
     "doc": "the regularized upper incomplete gamma function Q(a, b) = 1 - P(a, b)"},

    # ------------------------------------------------------------ comparisons (compare.c): not differentiable
    {"name": "eq", "arity": 2, "family": "compare", "out": "bool", "loops": {"all_pred": "(a == b)", "uint_pred": "a == b"},
     "promote": "bool", "operands": "input", "node": "EqBackward0", "backward": None},
    {"name": "ne", "arity": 2, "family": "compare", "out": "bool", "loops": {"all_pred": "(a != b)", "uint_pred": "a != b"},
     "promote": "bool", "operands": "input", "node": "NeBackward0", "backward": None},
    {"name": "lt", "arity": 2, "family": "compare", "out": "bool", "loops": {"all_pred": "(a < b)"},
     "promote": "bool", "operands": "input", "node": "LtBackward0", "backward": None},
    {"name": "le", "arity": 2, "family": "compare", "out": "bool", "loops": {"all_pred": "(a <= b)"},
     "promote": "bool", "operands": "input", "node": "LeBackward0", "backward": None},
    {"name": "gt", "arity": 2, "family": "compare", "out": "bool", "loops": {"all_pred": "(a > b)"},
     "promote": "bool", "operands": "input", "node": "GtBackward0", "backward": None},
    {"name": "ge", "arity": 2, "family": "compare", "out": "bool", "loops": {"all_pred": "(a >= b)"},
     "promote": "bool", "operands": "input", "node": "GeBackward0", "backward": None},

    # ------------------------------------------------------------ logic and bitwise (logic.c): not differentiable
    {"name": "logical_and", "arity": 2, "family": "logic", "out": "bool", "loops": {"all_pred": "(a != 0) && (b != 0)"},
     "promote": "bool", "operands": "both", "node": "LogicalAndBackward0", "backward": None},
    {"name": "logical_or", "arity": 2, "family": "logic", "out": "bool", "loops": {"all_pred": "(a != 0) || (b != 0)"},
     "promote": "bool", "operands": "both", "node": "LogicalOrBackward0", "backward": None},
    {"name": "logical_xor", "arity": 2, "family": "logic", "out": "bool", "loops": {"all_pred": "(a != 0) != (b != 0)"},
     "promote": "bool", "operands": "both", "node": "LogicalXorBackward0", "backward": None},
    {"name": "bitwise_and", "arity": 2, "family": "logic",
     "loops": {"int": ("own", "a & b"), "uint": "a & b", "b": "a & b"},
     "promote": "arith", "operands": "any", "node": "BitwiseAndBackward0", "backward": None},
    {"name": "bitwise_or", "arity": 2, "family": "logic",
     "loops": {"int": ("own", "a | b"), "uint": "a | b", "b": "a | b"},
     "promote": "arith", "operands": "any", "node": "BitwiseOrBackward0", "backward": None},
    {"name": "bitwise_xor", "arity": 2, "family": "logic",
     "loops": {"int": ("own", "a ^ b"), "uint": "a ^ b", "b": "a ^ b"},
     "promote": "arith", "operands": "any", "node": "BitwiseXorBackward0", "backward": None},
    {"name": "bitwise_left_shift", "arity": 2, "family": "logic", "loops": {"int": ("shift", "CG_SHL_EXPR")},
     "promote": "arith", "operands": "any", "node": "BitwiseLeftShiftBackward0", "backward": None},
    {"name": "bitwise_right_shift", "arity": 2, "family": "logic", "loops": {"int": ("shift", "CG_SHR_EXPR")},
     "promote": "arith", "operands": "any", "node": "BitwiseRightShiftBackward0", "backward": None},

    # ------------------------------------------------------------ hand rows (descriptor in the family file)
    {"name": "hardtanh", "arity": 1, "family": "activations", "descriptor": "hand", "loops": {"hand": "float"}},
    {"name": "leaky_relu", "arity": 1, "family": "activations", "descriptor": "hand", "loops": {"hand": "float"}},
    {"name": "elu", "arity": 1, "family": "activations", "descriptor": "hand", "loops": {"hand": "float"}},
    {"name": "celu", "arity": 1, "family": "activations", "descriptor": "hand", "loops": {"hand": "float"},
     "loops_of": "elu"},
    {"name": "gelu_tanh", "arity": 1, "family": "activations", "descriptor": "hand", "loops": {"hand": "float"}},
    {"name": "softplus", "arity": 1, "family": "activations", "descriptor": "hand", "loops": {"hand": "float"}},
    {"name": "nan_to_num", "arity": 1, "family": "unary_math", "descriptor": "hand",
     "loops": {"hand": "b int float uint"}},
    {"name": "clamp_scalar", "arity": 1, "family": "unary_math", "descriptor": "hand", "loops": {"hand": "int float"}},
    {"name": "pow_scalar", "arity": 1, "family": "unary_math", "descriptor": "hand", "loops": {"hand": "int float"}},
    {"name": "rpow_scalar", "arity": 1, "family": "unary_math", "descriptor": "hand", "loops": {"hand": "float"}},
    {"name": "abspow", "arity": 1, "family": "reduce_stats", "descriptor": "hand", "loops": {"hand": "float"}},
    {"name": "pow_log", "arity": 1, "family": "arith", "descriptor": "hand", "loops": {"hand": "float"}},
    {"name": "isclose", "arity": 2, "family": "compare", "descriptor": "hand", "loops": {"hand": "b int float uint"}},
    {"name": "where", "arity": 3, "family": "nary", "descriptor": "hand", "loops": {"hand": "b int float uint"}},
    {"name": "lerp", "arity": 3, "family": "nary", "descriptor": "hand", "loops": {"hand": "float"}},
    {"name": "addcmul", "arity": 3, "family": "nary", "descriptor": "hand", "loops": {"hand": "int float"}},
    {"name": "addcdiv", "arity": 3, "family": "nary", "descriptor": "hand", "loops": {"hand": "float"}},
    {"name": "clamp", "arity": 3, "family": "nary", "descriptor": "hand", "loops": {"hand": "int float"}},
    {"name": "clamp_min", "arity": 2, "family": "nary", "descriptor": "hand", "loops": {"hand": "int float"}},
    {"name": "clamp_max", "arity": 2, "family": "nary", "descriptor": "hand", "loops": {"hand": "int float"}},
    {"name": "normal", "arity": 3, "family": "random", "descriptor": "hand", "loops": {"hand": "float"}},
    {"name": "gate_incl", "arity": 2, "family": "unary_common", "descriptor": "hand", "loops": {"hand": "float"}},
    {"name": "gate_excl", "arity": 2, "family": "unary_common", "descriptor": "hand", "loops": {"hand": "float"}},
    {"name": "gate_gt", "arity": 2, "family": "unary_common", "descriptor": "hand", "loops": {"hand": "float"}},
    {"name": "gate_finite", "arity": 2, "family": "unary_common", "descriptor": "hand", "loops": {"hand": "float"}},
    {"name": "gate_nle", "arity": 2, "family": "unary_common", "descriptor": "hand", "loops": {"hand": "float"}},
    {"name": "tanh_grad", "arity": 2, "family": "unary_grads", "descriptor": "hand", "loops": {"hand": "float"}},
    {"name": "sigmoid_grad", "arity": 2, "family": "unary_grads", "descriptor": "hand", "loops": {"hand": "float"}},
    {"name": "silu_grad", "arity": 2, "family": "unary_grads", "descriptor": "hand", "loops": {"hand": "float"}},
    {"name": "gelu_grad", "arity": 2, "family": "unary_grads", "descriptor": "hand", "loops": {"hand": "float"}},
]

"""The hostile-input table: bad arguments for every public entry-point family
(shapes and sizes, allocation, indices, dtype / device / shape mismatches,
autograd misuse, checkpoints, optimizer, module and data-loader arguments).

Each case is a call taking the library module (cgrad, or torch for the parity
check), the exception type PyTorch raises for the same call (cgrad's exception
must be an instance of it) and a regular-expression fragment that cgrad's
message must contain, naming the problem. Where cgrad deliberately raises
another type than PyTorch (a MemoryError for a failed allocation, an error for
a device mix that PyTorch's meta kernels let through), the case names
PyTorch's type separately and a comment says why. test_hostile_inputs.py runs
every case in a child process, so a crash or a hang fails the case by name
instead of killing the run."""
from __future__ import annotations

import io
import json
import os
import pickle
import struct
import tempfile
from typing import Any, Callable, List, NamedTuple

PIB = 1 << 50  # bytes in a pebibyte
BIG = 1 << 62  # a dimension whose products overflow int64


class Case(NamedTuple):
    name: str
    fn: Callable[[Any], Any]  # fn(lib): lib is the cgrad or the torch module
    exc: type  # cgrad's exception must be an instance of this
    match: str  # regex fragment of cgrad's message (searched case-insensitively)
    # True: torch has the same API and raises `exc` too (checked); an exception
    # type: torch raises that type instead (a documented divergence, checked);
    # None: torch has no such API, or accepts the call (a comment says which)
    torch: Any = True


CASES: List[Case] = []


def case(name: str, fn: Callable[[Any], Any], exc: type, match: str, torch: Any = True) -> None:
    CASES.append(Case(name, fn, exc, match, torch))


def F(L: Any) -> Any:
    return L.nn.functional


# ------------------------------------------------------------ shapes and sizes

FACTORIES = {
    "empty": lambda L, *s: L.empty(*s),
    "zeros": lambda L, *s: L.zeros(*s),
    "ones": lambda L, *s: L.ones(*s),
    "full": lambda L, *s: L.full(s, 1.5),
    "randn": lambda L, *s: L.randn(*s),
    "rand": lambda L, *s: L.rand(*s),
    "randint": lambda L, *s: L.randint(0, 5, s),
    "new_zeros": lambda L, *s: L.ones(2).new_zeros(s),
    "new_ones": lambda L, *s: L.ones(2).new_ones(s),
    "new_empty": lambda L, *s: L.ones(2).new_empty(s),
    "new_full": lambda L, *s: L.ones(2).new_full(s, 3.0),
}
for fname, make in FACTORIES.items():
    case(f"{fname}_negative", lambda L, m=make: m(L, 2, -3), RuntimeError, "negative (size|dimension) -3")
    case(f"{fname}_overflow", lambda L, m=make: m(L, BIG, BIG), RuntimeError, "overflows int64")

# A failed allocation is a MemoryError in cgrad (DESIGN.md §6); PyTorch raises
# a RuntimeError from its CPU allocator.
OOM = "out of memory allocating"
case("empty_1pib", lambda L: L.empty(PIB, dtype=L.uint8), MemoryError, OOM + " 1125899906842624 bytes", RuntimeError)
case("zeros_1pib", lambda L: L.zeros(PIB // 4), MemoryError, OOM, RuntimeError)
case("randn_1pib", lambda L: L.randn(PIB // 4), MemoryError, OOM, RuntimeError)
case("new_empty_1pib", lambda L: L.ones(2).new_empty((PIB,)), MemoryError, OOM, RuntimeError)
case("randperm_1pib", lambda L: L.randperm(PIB), MemoryError, OOM, RuntimeError)
case("arange_1pib", lambda L: L.arange(0, float(PIB)), MemoryError, OOM, RuntimeError)
case("linspace_1pib", lambda L: L.linspace(0, 1, PIB), MemoryError, OOM, RuntimeError)
case("expand_huge_contiguous", lambda L: L.zeros(1).expand(1 << 30, 1 << 30).contiguous(), MemoryError, OOM,
     RuntimeError)
case("expand_huge_add", lambda L: L.zeros(1).expand(1 << 30, 1 << 30) + 1, MemoryError, "", RuntimeError)
case("repeat_huge", lambda L: L.zeros(1).repeat(1 << 25, 1 << 25), MemoryError, OOM, RuntimeError)
case("matmul_huge_out", lambda L: L.zeros(1, 1).expand(1 << 20, 1) @ L.zeros(1, 1).expand(1, 1 << 20), MemoryError,
     "", RuntimeError)
case("one_hot_huge", lambda L: F(L).one_hot(L.tensor([0]), 1 << 50), MemoryError, OOM, RuntimeError)
case("interpolate_huge", lambda L: F(L).interpolate(L.zeros(1, 1, 3), size=1 << 50), MemoryError, "interpolate",
     RuntimeError)

case("empty_bytes_overflow", lambda L: L.empty(1 << 61, dtype=L.float64), RuntimeError, "overflows int64")
case("empty_dim_beyond_int64", lambda L: L.empty(1 << 64), TypeError, "overflows int64")
case("eye_overflow", lambda L: L.eye(1 << 40), RuntimeError, "too many elements")
case("expand_overflow", lambda L: L.zeros(1).expand(BIG, BIG), RuntimeError, "too many elements")
case("arange_zero_step", lambda L: L.arange(0, 10, 0), RuntimeError, "step must be nonzero")
case("arange_wrong_sign", lambda L: L.arange(0, 10, -1), RuntimeError, "inconsistent with step sign")
case("arange_inf", lambda L: L.arange(0, float("inf")), RuntimeError, "unsupported range: 0 -> inf")
case("arange_nan", lambda L: L.arange(0, float("nan")), RuntimeError, "unsupported range: 0 -> nan")
case("linspace_negative_steps", lambda L: L.linspace(0, 1, -1), RuntimeError, "number of steps must be non-negative")
case("eye_negative", lambda L: L.eye(-1), RuntimeError, "greater or equal to 0")
case("randperm_negative", lambda L: L.randperm(-1), RuntimeError, "non-negative")
case("randint_low_high", lambda L: L.randint(5, 0, (3,)), RuntimeError, "'from' to be less than 'to'")
case("normal_negative_std", lambda L: L.normal(0.0, -1.0, (3,)), RuntimeError, r"std >= 0.0, but found std -1\b")
case("bernoulli_p", lambda L: L.bernoulli(L.full((3,), 1.5)), RuntimeError, "0 <= p <= 1")
case("multinomial_zero", lambda L: L.zeros(3).multinomial(1), RuntimeError, "invalid distribution")
case("multinomial_negative", lambda L: L.tensor([1.0, -1.0]).multinomial(1), RuntimeError, "element < 0")
case("multinomial_too_many", lambda L: L.ones(3).multinomial(4), RuntimeError, "without replacement")
case("manual_seed_beyond_uint64", lambda L: L.manual_seed(1 << 64), ValueError, "out of range")
case("manual_seed_below_int64", lambda L: L.manual_seed(-(1 << 63) - 1), ValueError, "out of range")
case("set_num_threads_zero", lambda L: L.set_num_threads(0), RuntimeError, "positive integer")
case("reshape_two_inferred", lambda L: L.zeros(2, 3).reshape(-1, -1), RuntimeError, "only one dimension can be inferred")
case("reshape_negative", lambda L: L.zeros(2, 3).reshape(-2, 3), RuntimeError, "invalid shape dimension -2")
case("reshape_wrong_numel", lambda L: L.zeros(2, 3).reshape(7), RuntimeError, r"\(7,\) is invalid for input of size 6")
case("reshape_overflow", lambda L: L.zeros(2, 3).reshape(BIG, BIG), RuntimeError, "overflows")
case("reshape_infer_with_zero", lambda L: L.zeros(2, 3).reshape(-1, 0), RuntimeError, "invalid for input of size 6")
case("reshape_float_size", lambda L: L.zeros(4).reshape(2.0, 2), TypeError, "sequence of ints")
case("view_wrong_numel", lambda L: L.zeros(2, 3).view(4), RuntimeError, r"\(4,\) is invalid for input of size 6")
case("view_noncontiguous", lambda L: L.zeros(2, 3).t().view(6), RuntimeError, "not compatible")
case("view_negative", lambda L: L.zeros(2, 3).view(-3, 2), RuntimeError, "invalid shape dimension -3")
case("view_dtype_element_size", lambda L: L.zeros(3).view(L.float64), RuntimeError, "different element size")
case("expand_mismatch", lambda L: L.zeros(2, 3).expand(3, 4), RuntimeError, "must match the existing size")
case("expand_fewer_dims", lambda L: L.zeros(2, 3).expand(3), RuntimeError, "number of sizes provided")
case("expand_negative_new_dim", lambda L: L.zeros(3).expand(-1, 3), RuntimeError, "leading, non-existing dimension")
case("expand_negative", lambda L: L.zeros(1, 3).expand(-2, 3), RuntimeError, r"\(-2\)")
case("repeat_fewer_dims", lambda L: L.zeros(2, 3).repeat(2), RuntimeError, "number of dimensions of repeat dims")
case("repeat_negative", lambda L: L.zeros(2, 3).repeat(2, -1), RuntimeError, "negative dimension")
case("repeat_overflow", lambda L: L.zeros(2, 3).repeat(BIG, BIG), RuntimeError, "overflows")
case("permute_repeated_dim", lambda L: L.zeros(2, 3).permute(0, 0), RuntimeError, "repeated dim")
case("permute_wrong_count", lambda L: L.zeros(2, 3).permute(0), RuntimeError, "number of dims")
case("transpose_dim_out_of_range", lambda L: L.zeros(2, 3).transpose(0, 2), IndexError, "dimension out of range")
case("unsqueeze_dim_out_of_range", lambda L: L.zeros(2, 3).unsqueeze(4), IndexError, "dimension out of range")
case("sum_dim_out_of_range", lambda L: L.zeros(2, 3).sum(5), IndexError, "dimension out of range")
case("sort_dim_out_of_range", lambda L: L.zeros(3).sort(dim=2), IndexError, "dimension out of range")
case("cumsum_dim_out_of_range", lambda L: L.zeros(3).cumsum(2), IndexError, "dimension out of range")
case("softmax_dim_out_of_range", lambda L: L.zeros(3).softmax(2), IndexError, "dimension out of range")
case("narrow_out_of_range", lambda L: L.zeros(2, 3).narrow(1, 2, 5), RuntimeError, "exceeds dimension size")
case("narrow_negative_length", lambda L: L.zeros(6).narrow(0, 0, -1), RuntimeError, r"length \(-1\)")
case("select_out_of_range", lambda L: L.zeros(2, 3).select(1, 3), IndexError, "out of bounds")
case("split_zero_size", lambda L: L.zeros(6).split(0), RuntimeError, "split_size can only be 0")
case("chunk_zero", lambda L: L.zeros(6).chunk(0), RuntimeError, "greater than 0")
case("unfold_step_zero", lambda L: L.zeros(6).unfold(0, 2, 0), RuntimeError, "step is 0")
case("unfold_size_too_big", lambda L: L.zeros(6).unfold(0, 7, 1), RuntimeError, "maximum size")
case("as_strided_out_of_bounds", lambda L: L.zeros(6).as_strided((4,), (3,)), RuntimeError, "out of bounds")
case("as_strided_huge_offset", lambda L: L.zeros(6).as_strided((2,), (1,), 1 << 62), RuntimeError, "out of bounds")
case("as_strided_huge_size", lambda L: L.zeros(6).as_strided((BIG, 4), (1, 1)), RuntimeError, "too many elements")
case("as_strided_negative_stride", lambda L: L.zeros(6).as_strided((2,), (-1,)), RuntimeError, "negative stride")
case("flatten_bad_dims", lambda L: L.zeros(2, 3, 4).flatten(2, 1), RuntimeError, "start_dim .* after end_dim")
case("diagonal_same_dims", lambda L: L.zeros(3, 3).diagonal(0, 0, 0), RuntimeError, "cannot be identical")
case("max_of_empty", lambda L: L.zeros(0).max(), RuntimeError, "zero-size dimension")
case("amax_of_empty", lambda L: L.zeros(0).amax(), RuntimeError, "zero-size dimension")
case("argmax_of_empty", lambda L: L.zeros(0).argmax(), IndexError, "zero-size dimension")
case("min_dim_of_empty", lambda L: L.zeros(2, 0).min(1), IndexError, "zero-size dimension")
case("item_of_empty", lambda L: L.zeros(0).item(), RuntimeError, "0 elements cannot be converted")
case("topk_k_too_big", lambda L: L.zeros(3).topk(4), RuntimeError, "out of range")
case("topk_k_negative", lambda L: L.zeros(3).topk(-1), RuntimeError, "out of range")
case("zeros_float_size", lambda L: L.zeros(2.5), TypeError, "sequence of ints")
case("zeros_str_size", lambda L: L.zeros("3"), TypeError, "sequence of ints")
case("sum_bad_dtype", lambda L: L.zeros(3).sum(dtype="x"), TypeError, "dtype")
case("to_bad_dtype", lambda L: L.ones(2).to(dtype=5), TypeError, "dtype")
NO_FIT = "value cannot be converted to type .* without overflow"
case("tensor_value_beyond_uint8", lambda L: L.tensor([1, 300], dtype=L.uint8), RuntimeError, NO_FIT)
case("tensor_nan_to_int64", lambda L: L.tensor([float("nan")], dtype=L.int64), RuntimeError, NO_FIT)
case("new_tensor_inf_to_int32", lambda L: L.zeros(1, dtype=L.int32).new_tensor([float("inf")]), RuntimeError, NO_FIT)
case("full_value_beyond_int8", lambda L: L.full((2,), -129, dtype=L.int8), RuntimeError, NO_FIT)
case("full_like_value_beyond_float32", lambda L: L.full_like(L.zeros(2), 1e300), RuntimeError, NO_FIT)
case("new_full_negative_float_to_uint8", lambda L: L.zeros(1, dtype=L.uint8).new_full((2,), -1.0), RuntimeError,
     NO_FIT)
case("fill_value_beyond_int32", lambda L: L.zeros(2, dtype=L.int32).fill_(1 << 40), RuntimeError, NO_FIT)
case("setitem_value_beyond_uint8", lambda L: L.zeros(2, dtype=L.uint8).__setitem__(0, 256), RuntimeError, NO_FIT)
case("setitem_nan_into_int64", lambda L: L.zeros(2, dtype=L.int64).__setitem__(slice(None), float("nan")),
     RuntimeError, NO_FIT)
U8_MASK = lambda L: L.tensor([True, False])  # noqa: E731
case("masked_fill_value_beyond_uint8", lambda L: L.zeros(2, dtype=L.uint8).masked_fill(U8_MASK(L), 300), RuntimeError,
     NO_FIT)
case("index_fill_value_beyond_int8", lambda L: L.zeros(2, dtype=L.int8).index_fill(0, L.tensor([0]), 200), RuntimeError,
     NO_FIT)
case("scatter_value_beyond_uint8", lambda L: L.zeros(2, dtype=L.uint8).scatter(0, L.tensor([0]), 256), RuntimeError,
     NO_FIT)
case("clamp_bound_beyond_uint8", lambda L: L.zeros(2, dtype=L.uint8).clamp(max=300), RuntimeError, NO_FIT)
case("clamp__bound_beyond_int8", lambda L: L.zeros(2, dtype=L.int8).clamp_(min=-200), RuntimeError, NO_FIT)
case("where_value_beyond_uint8", lambda L: L.where(U8_MASK(L), L.zeros(2, dtype=L.uint8), 300), RuntimeError, NO_FIT)
case("matmul_bool", lambda L: L.ones(2, 2, dtype=L.bool) @ L.ones(2, 2, dtype=L.bool), NotImplementedError, "ool")
case("mm_bool", lambda L: L.ones(2, 2, dtype=L.bool).mm(L.ones(2, 2, dtype=L.bool)), NotImplementedError, "ool")
case("linear_bool", lambda L: L.nn.functional.linear(L.ones(2, 2, dtype=L.bool), L.ones(2, 2, dtype=L.bool)),
     NotImplementedError, "ool")
case("randperm_bool", lambda L: L.randperm(3, dtype=L.bool), NotImplementedError, "ool")
case("scatter_reduce_mean_bool", lambda L: L.zeros(2, dtype=L.bool).scatter_reduce(0, L.tensor([0]), L.tensor([True]),
                                                                                   "mean"), NotImplementedError, "ool")
case("full_int_beyond_int64", lambda L: L.full((1,), 1 << 70), OverflowError, "too big")
case("tensor_ragged", lambda L: L.tensor([[1, 2], [3]]), ValueError, "expected sequence of length 2")
case("tensor_int_beyond_int64", lambda L: L.tensor([1 << 70]), ValueError, "overflow")
# PyTorch raises RuntimeError("Could not infer dtype of generator"); a TypeError says more
case("tensor_from_generator", lambda L: L.tensor(x for x in range(3)), TypeError, "invalid data type 'generator'",
     RuntimeError)
case("tensor_from_dict", lambda L: L.tensor({1: 2}), TypeError, "invalid data type 'dict'", RuntimeError)
# PyTorch's parser recurses until Python's recursion limit
case("tensor_deep_nesting", lambda L: L.tensor(_nested(100000)), ValueError, "deeper than the maximum rank", None)

# ------------------------------------------------------------ indices

case("getitem_out_of_range", lambda L: L.zeros(3)[3], IndexError, "index 3 is out of bounds")
case("getitem_negative_out_of_range", lambda L: L.zeros(3)[-4], IndexError, "index -4 is out of bounds")
case("getitem_second_dim", lambda L: L.zeros(2, 3)[:, 3], IndexError, "out of bounds for dimension 1")
case("getitem_too_many", lambda L: L.zeros(2, 3)[0, 0, 0], IndexError, "too many indices")
case("getitem_huge_index", lambda L: L.zeros(3)[1 << 62], IndexError, "out of bounds")
case("getitem_tensor_index", lambda L: L.zeros(3)[L.tensor([0, 3])], IndexError, "index 3 is out of bounds")
case("getitem_negative_tensor_index", lambda L: L.zeros(3)[L.tensor([-4])], IndexError, "index -4 is out of bounds")
case("getitem_float_tensor_index", lambda L: L.zeros(3)[L.tensor([0.0])], IndexError, "long, int, byte or bool")
case("getitem_mask_shape", lambda L: L.zeros(3)[L.tensor([True, False])], IndexError, "shape of the mask")
case("getitem_step_zero", lambda L: L.zeros(3)[::0], ValueError, "step cannot be zero")
case("getitem_step_negative", lambda L: L.zeros(3)[::-1], ValueError, "step must be greater than zero")
case("setitem_out_of_range", lambda L: L.zeros(3).__setitem__(3, 1.0), IndexError, "out of bounds")
case("setitem_tensor_index", lambda L: L.zeros(3).__setitem__(L.tensor([5]), 1.0), IndexError, "index 5 is out of")
case("setitem_shape_mismatch", lambda L: L.zeros(3).__setitem__(slice(None), L.zeros(4)), RuntimeError,
     r"\(3,\) and \(4,\)")
case("setitem_str_value", lambda L: L.zeros(3).__setitem__(0, "a"), TypeError, "can't assign a str")
case("index_select_out_of_range", lambda L: L.zeros(3).index_select(0, L.tensor([3])), IndexError, "index 3 is out")
case("index_select_negative", lambda L: L.zeros(3).index_select(0, L.tensor([-1])), IndexError, "index -1 is out")
case("index_select_float_index", lambda L: L.zeros(3).index_select(0, L.tensor([0.0])), RuntimeError, "int32/int64")
case("index_select_bad_dim", lambda L: L.zeros(3).index_select(1, L.tensor([0])), IndexError, "dimension out of range")
case("gather_out_of_range", lambda L: L.zeros(3).gather(0, L.tensor([5])), RuntimeError, "index 5 is out of bounds")
case("gather_negative", lambda L: L.zeros(3).gather(0, L.tensor([-1])), RuntimeError, "index -1 is out of bounds")
case("gather_huge_index", lambda L: L.zeros(3, requires_grad=True).gather(0, L.tensor([1 << 40])), RuntimeError,
     "index 1099511627776 is out of bounds")
case("gather_float_index", lambda L: L.zeros(3).gather(0, L.tensor([0.0])), RuntimeError, "int32/int64")
case("gather_rank_mismatch", lambda L: L.zeros(3).gather(0, L.zeros(1, 1, dtype=L.long)), RuntimeError,
     "same number of dimensions")
case("scatter_out_of_range", lambda L: L.zeros(3).scatter_(0, L.tensor([3]), L.ones(1)), RuntimeError,
     "index 3 is out of bounds")
case("scatter_negative", lambda L: L.zeros(3).scatter(0, L.tensor([-1]), L.ones(1)), RuntimeError,
     "index -1 is out of bounds")
case("scatter_dtype_mismatch", lambda L: L.zeros(3).scatter_(0, L.tensor([0]), L.ones(1, dtype=L.float64)),
     RuntimeError, "self.dtype to be equal to src.dtype")
case("scatter_add_out_of_range", lambda L: L.zeros(3).scatter_add(0, L.tensor([9]), L.ones(1)), RuntimeError,
     "index 9 is out of bounds")
case("scatter_add_huge_index", lambda L: L.zeros(3).scatter_add_(0, L.tensor([1 << 62]), L.ones(1)), RuntimeError,
     "out of bounds")
case("index_add_out_of_range", lambda L: L.zeros(3).index_add_(0, L.tensor([3]), L.ones(1)), IndexError,
     "index 3 is out of bounds")
case("index_add_negative", lambda L: L.zeros(3).index_add(0, L.tensor([-5]), L.ones(1)), IndexError,
     "index -5 is out of bounds")
# PyTorch raises a RuntimeError here and an IndexError above: IndexOutOfRange is both
case("index_add_2d_out_of_range", lambda L: L.zeros(3, 2).index_add(0, L.tensor([3]), L.ones(1, 2)), RuntimeError,
     "index 3 is out of bounds")
case("index_add_source_shape", lambda L: L.zeros(3, 2).index_add(0, L.tensor([0]), L.ones(1, 3)), RuntimeError,
     "source tensor shape must match")
case("index_copy_out_of_range", lambda L: L.zeros(3).index_copy(0, L.tensor([7]), L.ones(1)), IndexError,
     "index 7 is out of bounds")
case("index_fill_out_of_range", lambda L: L.zeros(3).index_fill(0, L.tensor([7]), 1.0), IndexError,
     "index 7 is out of bounds")
case("take_out_of_range", lambda L: L.zeros(2, 3).take(L.tensor([6])), IndexError, "index 6 on a tensor of 6")
case("take_negative", lambda L: L.zeros(2, 3).take(L.tensor([-7])), IndexError, "index -7 on a tensor of 6")
case("embedding_out_of_range", lambda L: F(L).embedding(L.tensor([5]), L.zeros(5, 2)), IndexError,
     "index 5 is out of range")
case("embedding_negative", lambda L: F(L).embedding(L.tensor([-1]), L.zeros(5, 2)), IndexError,
     "index -1 is out of range")
case("embedding_huge_index", lambda L: F(L).embedding(L.tensor([1 << 62]), L.zeros(5, 2)), IndexError,
     "out of range")
case("embedding_module_out_of_range", lambda L: L.nn.Embedding(4, 2)(L.tensor([[0, 4]])), IndexError,
     "index 4 is out of range for 4 rows")
case("embedding_float_index", lambda L: F(L).embedding(L.tensor([0.0]), L.zeros(5, 2)), RuntimeError,
     "int64 or int32")
case("cross_entropy_target_out_of_range", lambda L: F(L).cross_entropy(L.zeros(2, 10), L.tensor([1, 10])),
     IndexError, "target 10 is out of bounds")
case("cross_entropy_target_negative", lambda L: F(L).cross_entropy(L.zeros(2, 10), L.tensor([1, -5])),
     IndexError, "target -5 is out of bounds")
case("cross_entropy_float_target_shape", lambda L: F(L).cross_entropy(L.zeros(2, 10), L.tensor([1.0, 2.0])),
     RuntimeError, "target")
case("cross_entropy_label_smoothing", lambda L: F(L).cross_entropy(L.zeros(2, 3), L.tensor([0, 1]),
                                                                   label_smoothing=2.0),
     RuntimeError, "label_smoothing must be between 0.0 and 1.0")
case("nll_loss_target_out_of_range", lambda L: F(L).nll_loss(L.zeros(3, 4), L.tensor([0, 1, 4])), IndexError,
     "target 4 is out of bounds")
case("nll_loss_target_negative", lambda L: F(L).nll_loss(L.zeros(3, 4), L.tensor([0, -2, 1])), IndexError,
     "target -2 is out of bounds")
case("nll_loss_2d_target_out_of_range", lambda L: F(L).nll_loss(L.zeros(1, 3, 2, 2), L.full((1, 2, 2), 3)),
     IndexError, "target 3 is out of bounds")
case("one_hot_too_large", lambda L: F(L).one_hot(L.tensor([0, 3]), 3), RuntimeError, "smaller than num_classes")
case("one_hot_negative", lambda L: F(L).one_hot(L.tensor([0, -1]), 3), RuntimeError, "non-negative")
case("one_hot_float", lambda L: F(L).one_hot(L.tensor([0.0]), 3), RuntimeError, "int64")

# ------------------------------------------------------------ dtype / device / shape mismatches

case("add_broadcast", lambda L: L.zeros(2, 3) + L.zeros(4), RuntimeError, r"\(2,3\) and \(4,\) cannot broadcast")
case("mul_meta_cpu", lambda L: L.zeros(2, device="meta") * L.zeros(2), RuntimeError, "same device.*meta and cpu")
case("add_inplace_broadcast", lambda L: L.zeros(3).add_(L.zeros(2, 3)), RuntimeError, "doesn't match the broadcast")
case("add_inplace_int_by_float", lambda L: L.zeros(3, dtype=L.int64).add_(L.ones(3)), RuntimeError,
     "can't be cast to the desired output type")
case("where_shapes", lambda L: L.where(L.ones(2, dtype=L.bool), L.zeros(3), L.zeros(2)), RuntimeError,
     "cannot broadcast")
case("int_floor_divide_by_zero", lambda L: L.tensor([1]) // 0, RuntimeError, "ZeroDivisionError")
case("int_remainder_by_zero", lambda L: L.tensor([1]) % 0, RuntimeError, "ZeroDivisionError")
case("int_div_floor_by_zero_tensor", lambda L: L.tensor([1, 2]).div(L.tensor([0, 1]), rounding_mode="floor"),
     RuntimeError, "ZeroDivisionError")
case("matmul_shapes", lambda L: L.zeros(2, 3) @ L.zeros(4, 5), RuntimeError, r"\(2,3\) and \(4,5\) cannot be mult")
case("matmul_0d", lambda L: L.matmul(L.zeros(()), L.zeros(3)), RuntimeError, "at least 1D")
case("matmul_dtypes", lambda L: L.zeros(2, 3) @ L.zeros(3, 2, dtype=L.float64), RuntimeError, "same dtype")
# PyTorch's meta kernels accept a cpu operand; cgrad never mixes devices (DESIGN.md §3)
case("matmul_meta_cpu", lambda L: L.zeros(2, 3, device="meta") @ L.zeros(3, 2), RuntimeError, "same device",
     None)
case("mm_3d", lambda L: L.mm(L.zeros(2, 2, 2), L.zeros(2, 2)), RuntimeError, "expected 2D")
case("bmm_batch", lambda L: L.bmm(L.zeros(2, 3, 4), L.zeros(3, 4, 5)), RuntimeError, "batch sizes")
case("matmul_batch_broadcast", lambda L: L.zeros(2, 3, 4) @ L.zeros(5, 4, 2), RuntimeError, "cannot be broadcast")
case("dot_sizes", lambda L: L.dot(L.zeros(3), L.zeros(4)), RuntimeError, r"\(3,\) and \(4,\)")
case("linear_shapes", lambda L: F(L).linear(L.zeros(2, 3), L.zeros(4, 5)), RuntimeError, "cannot be multiplied")
case("conv2d_channels", lambda L: F(L).conv2d(L.zeros(1, 3, 8, 8), L.zeros(2, 4, 3, 3)), RuntimeError,
     "to have 4 channels, but got 3")
case("conv2d_weight_rank", lambda L: F(L).conv2d(L.zeros(1, 3, 8, 8), L.zeros(2, 3, 3)), RuntimeError,
     "expected weight with 4 dims")
case("conv2d_kernel_too_big", lambda L: F(L).conv2d(L.zeros(1, 1, 2, 2), L.zeros(1, 1, 3, 3)), RuntimeError,
     "kernel size")
case("conv2d_stride_zero", lambda L: F(L).conv2d(L.zeros(1, 1, 4, 4), L.zeros(1, 1, 3, 3), stride=0), RuntimeError,
     "stride must be positive")
case("conv2d_negative_padding", lambda L: F(L).conv2d(L.zeros(1, 1, 4, 4), L.zeros(1, 1, 3, 3), padding=-1),
     RuntimeError, "padding must be non-negative")
case("conv2d_dilation_zero", lambda L: F(L).conv2d(L.zeros(1, 1, 4, 4), L.zeros(1, 1, 3, 3), dilation=0),
     RuntimeError, "dilation must be positive")
case("conv2d_huge_padding", lambda L: F(L).conv2d(L.zeros(1, 1, 3, 3), L.zeros(1, 1, 3, 3), padding=1 << 40),
     RuntimeError, "exceed")
case("conv2d_dtypes", lambda L: F(L).conv2d(L.zeros(1, 1, 4, 4, dtype=L.float64), L.zeros(1, 1, 3, 3)),
     RuntimeError, "dtype mismatch: float64 and float32")
case("conv2d_meta_cpu", lambda L: F(L).conv2d(L.zeros(1, 1, 4, 4, device="meta"), L.zeros(1, 1, 3, 3)),
     RuntimeError, "same device", None)
case("conv2d_groups", lambda L: F(L).conv2d(L.zeros(1, 4, 4, 4), L.zeros(3, 2, 3, 3), groups=2), RuntimeError,
     "divisible by groups")
case("conv2d_bias_size", lambda L: F(L).conv2d(L.zeros(1, 1, 4, 4), L.zeros(2, 1, 3, 3), L.zeros(3)), RuntimeError,
     "bias")
case("conv_transpose2d_channels", lambda L: F(L).conv_transpose2d(L.zeros(1, 3, 4, 4), L.zeros(2, 1, 3, 3)),
     RuntimeError, "to have 2 channels, but got 3")
case("max_pool2d_kernel_too_big", lambda L: F(L).max_pool2d(L.zeros(1, 1, 2, 2), 3), RuntimeError,
     "output size is too small")
case("max_pool2d_stride_zero", lambda L: F(L).max_pool2d(L.zeros(1, 1, 4, 4), 2, stride=0), RuntimeError, "stride")
case("avg_pool2d_padding_too_big", lambda L: F(L).avg_pool2d(L.zeros(1, 1, 4, 4), 2, padding=2), RuntimeError,
     "pad should be at most half")
case("avg_pool2d_kernel_zero", lambda L: F(L).avg_pool2d(L.zeros(1, 1, 3, 3), 0), RuntimeError, "")
case("pad_reflect_too_big", lambda L: F(L).pad(L.zeros(1, 1, 3), (5, 5), mode="reflect"), RuntimeError,
     "padding size should be less than")
case("pad_negative_too_big", lambda L: F(L).pad(L.zeros(1, 1, 3), (-2, -2)), RuntimeError, "negative size")
case("pad_odd_length", lambda L: F(L).pad(L.zeros(1, 1, 3), (1,)), RuntimeError, "divisible by 2")
case("interpolate_zero_size", lambda L: F(L).interpolate(L.zeros(1, 1, 3), size=0), RuntimeError, "positive")
case("interpolate_negative_scale", lambda L: F(L).interpolate(L.zeros(1, 1, 3), scale_factor=-2.0), RuntimeError,
     "positive")
case("mse_loss_shapes", lambda L: F(L).mse_loss(L.zeros(2, 3), L.zeros(4)), RuntimeError, "cannot broadcast")
case("cross_entropy_batch", lambda L: F(L).cross_entropy(L.zeros(4, 10), L.zeros(5, dtype=L.long)), ValueError,
     r"batch_size \(4\) to match target batch_size \(5\)")
case("nll_loss_float_target", lambda L: F(L).nll_loss(L.zeros(3, 4), L.zeros(3)), RuntimeError, "int64")
case("nll_loss_weight_size", lambda L: F(L).nll_loss(L.zeros(3, 4), L.zeros(3, dtype=L.long), L.ones(5)),
     RuntimeError, "weight")
case("bce_target_shape", lambda L: F(L).binary_cross_entropy(L.full((3,), 0.5), L.zeros(4)), ValueError,
     "target size")
case("bce_input_range", lambda L: F(L).binary_cross_entropy(L.full((3,), 1.5), L.zeros(3)), RuntimeError,
     "between 0 and 1")
case("cat_ndim", lambda L: L.cat([L.zeros(2, 3), L.zeros(3)]), RuntimeError, "same number of dimensions")
case("cat_sizes", lambda L: L.cat([L.zeros(2, 3), L.zeros(2, 4)]), RuntimeError, "must match except in dimension 0")
case("cat_empty_list", lambda L: L.cat([]), ValueError, "non-empty list")
case("cat_dim_out_of_range", lambda L: L.cat([L.zeros(2), L.zeros(2)], 1), IndexError, "dimension out of range")
case("cat_meta_cpu", lambda L: L.cat([L.zeros(2, device="meta"), L.zeros(2)]), RuntimeError, "same device")
case("cat_not_tensors", lambda L: L.cat([L.zeros(2), 3]), TypeError, "expected Tensor as element 1")
case("stack_sizes", lambda L: L.stack([L.zeros(2, 3), L.zeros(3, 2)]), RuntimeError, "equal size")
case("stack_empty_list", lambda L: L.stack([]), RuntimeError, "non-empty")
case("stack_dim_out_of_range", lambda L: L.stack([L.zeros(2), L.zeros(2)], 3), IndexError, "dimension out of range")
case("stack_meta_cpu", lambda L: L.stack([L.zeros(2, device="meta"), L.zeros(2)]), RuntimeError, "same device")
case("where_meta_cpu", lambda L: L.where(L.ones(2, dtype=L.bool), L.zeros(2, device="meta"), L.zeros(2)),
     RuntimeError, "same device")
case("copy_from_meta", lambda L: L.zeros(2).copy_(L.zeros(2, device="meta")), RuntimeError, "meta")
case("cross_entropy_meta_cpu", lambda L: F(L).cross_entropy(L.zeros(2, 3, device="meta"), L.tensor([0, 1])),
     RuntimeError, "target is on cpu but input is on meta")
case("cross_entropy_weight_meta", lambda L: F(L).cross_entropy(L.zeros(2, 3), L.tensor([0, 1]),
                                                               weight=L.ones(3, device="meta")),
     RuntimeError, "weight is on meta")
case("mse_loss_meta_cpu", lambda L: F(L).mse_loss(L.zeros(3, device="meta"), L.zeros(3)), RuntimeError,
     "same device")
case("batch_norm_running_mean_meta", lambda L: F(L).batch_norm(L.zeros(2, 3), L.zeros(3, device="meta"), L.ones(3)),
     RuntimeError, "running_mean is on meta")
# PyTorch's meta kernels accept these cpu / meta mixes
case("conv2d_weight_meta", lambda L: F(L).conv2d(L.zeros(1, 1, 4, 4), L.zeros(1, 1, 3, 3, device="meta")),
     RuntimeError, "same device", None)
case("embedding_weight_meta", lambda L: F(L).embedding(L.tensor([0]), L.zeros(3, 2, device="meta")), RuntimeError,
     "same device", None)
case("nll_loss_weight_dtype", lambda L: F(L).nll_loss(L.zeros(2, 3), L.tensor([0, 1]),
                                                       weight=L.ones(3, dtype=L.float64)),
     RuntimeError, "weight has dtype float64")
case("bce_dtypes", lambda L: F(L).binary_cross_entropy(L.full((3,), 0.5), L.zeros(3, dtype=L.float64)),
     RuntimeError, "float32 and float64")
case("layer_norm_weight_dtype", lambda L: F(L).layer_norm(L.zeros(2, 3), (3,), weight=L.ones(3, dtype=L.float64)),
     RuntimeError, "weight has dtype float64")
case("bmm_dtypes", lambda L: L.bmm(L.zeros(2, 3, 4), L.zeros(2, 4, 5, dtype=L.float64)), RuntimeError, "same dtype")
case("mm_int_by_float", lambda L: L.mm(L.zeros(2, 2, dtype=L.int64), L.zeros(2, 2)), RuntimeError, "same dtype")
case("linear_dtypes", lambda L: F(L).linear(L.zeros(2, 3), L.zeros(4, 3, dtype=L.float64)), RuntimeError,
     "same dtype")
case("add_out_dtype", lambda L: L.add(L.zeros(2), L.zeros(2), out=L.zeros(2, dtype=L.int64)), RuntimeError,
     "can't be cast to the desired output type")
case("attention_shapes", lambda L: F(L).scaled_dot_product_attention(L.zeros(2, 3, 4), L.zeros(2, 5, 6),
                                                                     L.zeros(2, 5, 4)),
     RuntimeError, "key")
case("from_numpy_object", lambda L: L.from_numpy(__import__("numpy").array([object()])), TypeError,
     "numpy.object_")
# PyTorch 2.13 converts complex arrays; cgrad has no complex dtype
case("from_numpy_complex", lambda L: L.from_numpy(__import__("numpy").zeros(2, dtype=complex)), TypeError,
     "complex128", None)
# PyTorch raises a RuntimeError about an invalid capsule
case("from_dlpack_int", lambda L: L.from_dlpack(42), TypeError, "__dlpack__", RuntimeError)
case("numpy_requires_grad", lambda L: L.ones(2, requires_grad=True).numpy(), RuntimeError, "requires grad")


def _cuda_state() -> str:
    """'none' (no CUDA kernel library), 'no-device' (the library, no usable GPU) or 'devices'."""
    import cgrad
    if not cgrad.backends.cuda.is_built():
        return "none"
    return "devices" if cgrad.cuda.is_available() else "no-device"


# the parity check runs against PyTorch's CPU build, which raises AssertionError for any cuda device
if _cuda_state() == "none":  # cgrad without its CUDA kernel library is that build
    case("to_cuda", lambda L: L.ones(2).to("cuda"), AssertionError, "Torch not compiled with CUDA enabled")
elif _cuda_state() == "no-device":  # as PyTorch's CUDA build without a GPU: RuntimeError with the reason
    case("to_cuda", lambda L: L.ones(2).to("cuda"), RuntimeError, "cannot use device cuda:0", AssertionError)
else:
    case("to_cuda_ordinal", lambda L: L.ones(2).to("cuda:99"), RuntimeError, "invalid device ordinal cuda:99",
         AssertionError)
case("bad_device_string", lambda L: L.device("cpu:-1"), RuntimeError, "device")

# ------------------------------------------------------------ autograd misuse


def _twice(L: Any) -> Any:
    x = L.ones(3, requires_grad=True)
    y = (x.exp() * x).sum()
    y.backward()
    y.backward()


def _hook(L: Any, ret: Callable[[Any], Any]) -> Any:
    x = L.ones(3, requires_grad=True)
    y = x * 2
    y.register_hook(ret)
    y.sum().backward()


def _leaf_hook(L: Any, ret: Callable[[Any], Any]) -> Any:
    x = L.ones(2, 3, requires_grad=True)
    x.register_hook(ret)
    (x * 2).sum().backward()


def _inplace_saved(L: Any) -> Any:
    x = L.ones(3, requires_grad=True)
    y = x * 1
    z = y.sin()  # saves y
    y.add_(1)
    z.sum().backward()


def _function(L: Any, mode: str) -> Any:
    class Fn(L.autograd.Function):
        @staticmethod
        def forward(ctx: Any, x: Any, y: Any) -> Any:
            return x * y

        @staticmethod
        def backward(ctx: Any, g: Any) -> Any:
            if mode == "count":
                return (g,)
            if mode == "shape":
                return L.ones(5), g
            if mode == "raise":
                raise KeyError("boom")
            return "a", g

    Fn.apply(L.ones(3, requires_grad=True), L.ones(3, requires_grad=True)).sum().backward()


case("backward_twice", _twice, RuntimeError, "backward through the graph a second time")
case("backward_nonscalar", lambda L: (L.ones(2, requires_grad=True) * 2).backward(), RuntimeError,
     "implicitly created only for scalar outputs")
case("backward_grad_shape", lambda L: (L.ones(2, requires_grad=True) * 2).backward(L.ones(3)), RuntimeError,
     "Mismatch in shape")
# PyTorch casts a gradient of another dtype; cgrad refuses (the engine never promotes)
case("backward_grad_dtype", lambda L: (L.ones(2, requires_grad=True) * 2).backward(L.ones(2, dtype=L.float64)),
     TypeError, "float64", None)
case("backward_without_grad_fn", lambda L: L.ones(2).sum().backward(), RuntimeError, "does not require grad")
case("grad_of_unused_input", lambda L: L.autograd.grad(L.ones(2, requires_grad=True).sum(),
                                                         [L.ones(2, requires_grad=True)]),
     RuntimeError, "not have been used in the graph")
case("hook_raises", lambda L: _hook(L, lambda g: 1 / 0), ZeroDivisionError, "division by zero")
case("hook_changes_shape", lambda L: _hook(L, lambda g: L.ones(4)), RuntimeError, "changed the size")
case("hook_changes_dtype", lambda L: _hook(L, lambda g: g.double()), RuntimeError, "changed the type")
case("leaf_hook_changes_shape", lambda L: _leaf_hook(L, lambda g: L.ones(3)), RuntimeError, "changed the size")
case("hook_returns_str", lambda L: _hook(L, lambda g: "x"), TypeError, "hook must return None or a Tensor", None)
case("register_hook_without_grad", lambda L: L.ones(2).register_hook(lambda g: g), RuntimeError,
     "doesn't require gradient")
case("inplace_modified_saved_tensor", _inplace_saved, RuntimeError, "modified by an inplace operation")
case("inplace_on_leaf", lambda L: L.ones(2, requires_grad=True).mul_(2), RuntimeError, "leaf Variable")
case("requires_grad_on_int", lambda L: L.ones(2, dtype=L.int64).requires_grad_(), RuntimeError,
     "only Tensors of floating point dtype can require gradients")
case("function_wrong_count", lambda L: _function(L, "count"), RuntimeError, "incorrect number of gradients")
case("function_wrong_shape", lambda L: _function(L, "shape"), RuntimeError, "invalid gradient at index 0")
case("function_raises", lambda L: _function(L, "raise"), KeyError, "boom")
# PyTorch raises RuntimeError("expected Variable or None (got str)")
case("function_returns_str", lambda L: _function(L, "type"), TypeError, "gradient of type str", RuntimeError)


# ------------------------------------------------------------ checkpoints: safetensors (cgrad.utils.safetensors)

def _entry(dtype: str = "F32", shape: Any = (2,), offs: Any = (0, 8)) -> Any:
    return {"dtype": dtype, "shape": list(shape), "data_offsets": list(offs)}


def _file(header: Any, data: bytes = b"", n: Any = None) -> bytes:
    text = json.dumps(header).encode() if isinstance(header, (dict, list)) else header
    return struct.pack("<Q", len(text) if n is None else n) + text + data


def _load_bytes(data: bytes) -> Callable[[Any], Any]:
    """Load `data` from a BytesIO, from a file path memory-mapped (mmap=True) and from a file
    path read into memory (the default); all must raise."""
    def run(L: Any) -> Any:
        L = L.utils.safetensors
        try:
            L.load(io.BytesIO(data))
        except ValueError:
            pass
        else:
            raise AssertionError("loading from a BytesIO did not raise")
        fd, path = tempfile.mkstemp(suffix=".safetensors")
        try:
            os.write(fd, data)
            os.close(fd)
            try:
                L.load(path, mmap=True)
            except ValueError:
                pass
            else:
                raise AssertionError("loading with mmap=True did not raise")
            return L.load(path)
        finally:
            os.unlink(path)
    return run


VALID = _file({"a": _entry(shape=(4,), offs=(0, 16))}, struct.pack("<4f", 1, 2, 3, 4))
CHECKPOINTS = [
    ("empty_file", b"", "fewer than the 8-byte"),
    ("truncated_length", b"\x05\x00\x00", "fewer than the 8-byte"),
    ("truncated_header", VALID[:20], "runs past the end"),
    ("truncated_data", VALID[:-4], "beyond the data section"),
    ("header_length_beyond_file", _file({"a": _entry()}, b"\0" * 8, n=1000), "runs past the end"),
    ("header_length_huge", struct.pack("<Q", (1 << 64) - 1) + b"{}", "exceeds the limit"),
    ("bad_header_json", _file(b"{not json"), "not valid UTF-8 JSON"),
    ("header_not_utf8", _file(b'{"\xff": 1}'), "not valid UTF-8 JSON"),
    ("header_not_object", _file([1, 2]), "not an object"),
    ("entry_missing_field", _file({"a": {"dtype": "F32", "shape": [2]}}, b"\0" * 8), "exactly dtype"),
    ("offsets_out_of_range", _file({"a": _entry(offs=(0, 16))}, b"\0" * 8), "beyond the data section"),
    ("offsets_overlapping", _file({"a": _entry(), "b": _entry(offs=(4, 12))}, b"\0" * 12), "overlap"),
    ("offsets_reversed", _file({"a": _entry(offs=(8, 0))}, b"\0" * 8), "increasing pair"),
    ("offsets_huge", _file({"a": _entry(offs=(1 << 63, (1 << 63) + 8))}, b"\0" * 8), "beyond the data section"),
    ("unknown_dtype", _file({"a": _entry(dtype="F128")}, b"\0" * 8), "unknown dtype 'F128'"),
    ("unsupported_dtype", _file({"a": _entry(dtype="C64")}, b"\0" * 8), "C64 is not supported"),
    ("shape_bytes_mismatch", _file({"a": _entry(shape=(3,))}, b"\0" * 8), "needs 12"),
    ("shape_negative", _file({"a": _entry(shape=(-2,))}, b"\0" * 8), "non-negative integers"),
    ("shape_overflow", _file({"a": _entry(shape=(BIG, BIG))}, b"\0" * 8), "overflows"),
    ("bool_bytes", _file({"a": _entry(dtype="BOOL", offs=(0, 2))}, b"\x01\x07"), "other than 0 and 1"),
    ("structure_unknown_node", _file({"__metadata__": {"cgrad.structure": '{"pickle": "os.system"}'}}),
     "unknown node kind"),
    ("structure_deep", _file({"__metadata__": {"cgrad.structure": '{"l": [' * 100000 + "]}" * 100000}}),
     "nested too deeply|not valid JSON"),
]
for cname, data, match in CHECKPOINTS:
    # torch.load reads pickles, not safetensors: no parity check
    case(f"load_{cname}", _load_bytes(data), ValueError, "invalid checkpoint: .*(" + match + ")", None)

def _zip_with(names: List[str]) -> bytes:
    import zipfile
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        for n in names:
            z.writestr(n, b"\x80\x02}q\x00.")
    return buf.getvalue()


# other formats are named, whatever the source (torch.load reads them: no parity check)
FOREIGN = [
    ("torch_zip", _zip_with(["archive/data.pkl", "archive/version", "archive/data/0"]), "PyTorch .pt checkpoint"),
    ("torch_legacy", b"\x80\x02\x8a\x0al\xfc\x9cF\xf9 j\xa8P\x19.\x80\x02M\xe9\x03.", "legacy PyTorch"),
    ("pickle", b"\x80\x04\x95\x05\x00\x00\x00\x00\x00\x00\x00}\x94.", "Python pickle"),
    ("npz", _zip_with(["a.npy"]), "NumPy .npz"),
]
for fname, data, match in FOREIGN:
    case(f"load_foreign_{fname}", _load_bytes(data), ValueError, f"this is an? {match}.*not a safetensors file", None)
case("load_dev_zero", lambda L: L.utils.safetensors.load("/dev/zero"), ValueError, "header length 0", None)
case("load_dev_zero_mmap", lambda L: L.load("/dev/zero", mmap=True), ValueError, "mmap=True needs a regular file",
     None)
# a zip archive, so that torch gets as far as its own mmap check
case("load_mmap_file_object", lambda L: L.load(io.BytesIO(FOREIGN[0][1]), mmap=True), ValueError,
     "must be a file path in order to use the mmap argument", True)

case("load_int_object", lambda L: L.load(42), TypeError, "path or a binary file object", None)
case("load_none", lambda L: L.load(None), TypeError, "path or a binary file object", None)
case("load_text_file_object", lambda L: L.load(io.StringIO("abc")), TypeError, "binary mode", None)
case("load_missing_path", lambda L: L.load("/nonexistent/dir/ckpt.safetensors"), FileNotFoundError,
     "No such file", None)
case("load_directory", lambda L: L.load(tempfile.gettempdir()), IsADirectoryError, "Is a directory", None)
case("save_unsupported_object", lambda L: L.save({"f": lambda: 0}, io.BytesIO()), pickle.PicklingError,
     "lambda", None)
case("save_to_int", lambda L: L.save({"a": L.ones(2)}, 42), TypeError, "path or a binary file object", None)
case("save_meta_tensor", lambda L: L.save(L.ones(2, device="meta"), io.BytesIO()), ValueError, "meta device", None)


# ------------------------------------------------------------ checkpoints: PyTorch's format (cgrad.load)

SIDE_EFFECT = os.path.join(tempfile.gettempdir(), f"cgrad-hostile-pickle-{os.getpid()}")


class _Evil:
    """Pickles as a call of os.system that would create SIDE_EFFECT."""

    def __reduce__(self) -> Any:
        return (os.system, (f"touch {SIDE_EFFECT}",))


def _torch_zip(pkl: bytes, records: Any = (), compress: bool = False) -> bytes:
    import zipfile
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED) as z:
        z.writestr("archive/data.pkl", pkl)
        z.writestr("archive/version", b"3\n")
        for name, data, how in records:
            z.writestr(f"archive/{name}", data, compress_type=how)
    return buf.getvalue()


def _load_evil(L: Any) -> Any:
    for path in (SIDE_EFFECT,):
        if os.path.exists(path):
            os.unlink(path)
    data = _torch_zip(pickle.dumps({"a": _Evil()}, protocol=2))
    try:
        L.load(io.BytesIO(data))
    finally:
        assert not os.path.exists(SIDE_EFFECT), "the malicious pickle ran"


def _storage_pickle(numel: int, size: Any = None, stride: Any = None) -> bytes:
    """A pickle of one float32 tensor on storage '0' of numel elements (protocol 2, as torch.save writes)."""
    size = (numel,) if size is None else size
    stride = (1,) if stride is None else stride
    sz = b"".join(b"\x8a\x08" + struct.pack("<q", v) for v in size)
    st = b"".join(b"\x8a\x08" + struct.pack("<q", v) for v in stride)
    return (b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n((X\x07\x00\x00\x00storagectorch\nFloatStorage\n"
            b"X\x01\x00\x00\x000X\x03\x00\x00\x00cpu\x8a\x08" + struct.pack("<q", numel) + b"tQK\x00("
            + sz + b"t(" + st + b"t\x89ccollections\nOrderedDict\n)RtR.")


TORCH_CHECKPOINTS = [
    # a deflated data.pkl that would expand to 300 MiB (a zip bomb): refused by its declared size
    ("zip_bomb", lambda: _torch_zip(b"\x80\x02]." + b"\0" * (300 << 20), compress=True), RuntimeError,
     "more than the 268435456 allowed"),
    ("zip_truncated", lambda: _torch_zip(_storage_pickle(4), [("data/0", b"\0" * 16, 0)])[:-30], RuntimeError,
     "not a readable zip archive, or it is truncated"),
    ("storage_truncated", lambda: _torch_zip(_storage_pickle(4), [("data/0", b"\0" * 12, 0)]), RuntimeError,
     "is truncated: it holds 12 bytes, and its storage of 4 elements needs 16"),
    ("storage_missing", lambda: _torch_zip(_storage_pickle(4)), RuntimeError, "has no record 'archive/data/0'"),
    ("storage_compressed", lambda: _torch_zip(_storage_pickle(4), [("data/0", b"\0" * 16, 8)]), RuntimeError,
     "is compressed"),
    ("tensor_beyond_storage", lambda: _torch_zip(_storage_pickle(4, (1 << 40,)), [("data/0", b"\0" * 16, 0)]),
     pickle.UnpicklingError, "reaches element 1099511627775 of a storage of 4 elements"),
    ("tensor_negative_stride", lambda: _torch_zip(_storage_pickle(4, (2,), (-1,)), [("data/0", b"\0" * 16, 0)]),
     pickle.UnpicklingError, "negative offset, size or stride"),
    ("storage_huge_numel", lambda: _torch_zip(_storage_pickle(1 << 60), [("data/0", b"\0" * 16, 0)]), RuntimeError,
     "needs 4611686018427387904"),
    ("pickle_truncated", lambda: _torch_zip(_storage_pickle(4)[:-9], [("data/0", b"\0" * 16, 0)]),
     pickle.UnpicklingError, "corrupt or truncated"),
    ("not_a_checkpoint", lambda: b"hello world, not a checkpoint", pickle.UnpicklingError, "invalid load key"),
]
for tname, make, texc, tmatch in TORCH_CHECKPOINTS:
    case(f"torch_load_{tname}", lambda L, m=make: L.load(io.BytesIO(m())), texc, tmatch, None)
case("torch_load_malicious_pickle", _load_evil, pickle.UnpicklingError, "Unsupported global: GLOBAL (posix|os).system")


# ------------------------------------------------------------ optimizer, module and data-loader arguments

def _params(L: Any) -> Any:
    return [L.zeros(3, requires_grad=True)]


OPTIM_ARGS = [
    ("SGD", "lr", {"lr": -1.0}, "Invalid learning rate"),
    ("SGD", "momentum", {"lr": 0.1, "momentum": -1.0}, "Invalid momentum"),
    ("SGD", "weight_decay", {"lr": 0.1, "weight_decay": -1.0}, "Invalid weight_decay"),
    ("SGD", "nesterov", {"lr": 0.1, "nesterov": True}, "Nesterov momentum requires"),
    ("Adam", "lr", {"lr": -1.0}, "Invalid learning rate"),
    ("Adam", "beta1", {"betas": (1.5, 0.9)}, "Invalid beta parameter at index 0"),
    ("Adam", "beta2", {"betas": (0.9, -0.1)}, "Invalid beta parameter at index 1"),
    ("Adam", "eps", {"eps": -1.0}, "Invalid epsilon"),
    ("AdamW", "weight_decay", {"weight_decay": -1.0}, "Invalid weight_decay"),
    ("RMSprop", "alpha", {"alpha": -1.0}, "Invalid alpha"),
    ("RMSprop", "momentum", {"momentum": -1.0}, "Invalid momentum"),
    ("Adagrad", "lr_decay", {"lr_decay": -1.0}, "Invalid lr_decay"),
    ("Adagrad", "initial_accumulator", {"initial_accumulator_value": -1.0}, "Invalid initial_accumulator_value"),
]
for oname, what, kwargs, match in OPTIM_ARGS:
    case(f"optim_{oname}_{what}", lambda L, o=oname, kw=kwargs: getattr(L.optim, o)(_params(L), **kw), ValueError,
         match)


def _two_groups(L: Any) -> Any:
    p = L.zeros(3, requires_grad=True)
    return L.optim.SGD([{"params": [p]}, {"params": [p]}], lr=0.1)


def _bad_optim_state(L: Any) -> Any:
    opt = L.optim.SGD(_params(L), lr=0.1)
    sd = opt.state_dict()
    sd["param_groups"] = sd["param_groups"] * 2
    return opt.load_state_dict(sd)


def _closure_raises(L: Any) -> Any:
    def closure() -> Any:
        raise KeyError("closure")
    return L.optim.SGD(_params(L), lr=0.1).step(closure)


def _with_grad(L: Any, value: float) -> Any:
    p = L.zeros(3, requires_grad=True)
    p.grad = L.full((3,), value)
    return [p]


case("optim_empty_params", lambda L: L.optim.SGD([], lr=0.1), ValueError, "empty parameter list")
case("optim_tensor_not_iterable", lambda L: L.optim.SGD(L.zeros(3, requires_grad=True), lr=0.1), TypeError,
     "should be an iterable of Tensors or dicts")
case("optim_non_tensor_param", lambda L: L.optim.Adam([L.zeros(3, requires_grad=True), 3.0]), TypeError,
     "can only optimize Tensors")
case("optim_non_leaf_param", lambda L: L.optim.Adam([L.zeros(3, requires_grad=True) * 2]), ValueError,
     "non-leaf")
case("optim_param_in_two_groups", _two_groups, ValueError, "more than one parameter group")
case("optim_load_state_dict_groups", _bad_optim_state, ValueError, "different number of parameter groups")
case("optim_closure_raises", _closure_raises, KeyError, "closure")
case("lr_scheduler_not_optimizer", lambda L: L.optim.lr_scheduler.StepLR(3, 1), TypeError, "not an Optimizer")
case("clip_grad_norm_nonfinite", lambda L: L.nn.utils.clip_grad_norm_(_with_grad(L, float("inf")), 1.0,
                                                                        error_if_nonfinite=True),
     RuntimeError, "non-finite")
case("clip_grad_norm_bad_norm_type", lambda L: L.nn.utils.clip_grad_norm_(_with_grad(L, 1.0), 1.0, norm_type="x"),
     ValueError, "could not convert")
case("linear_negative_features", lambda L: L.nn.Linear(-1, 3), RuntimeError, "negative")
case("linear_forward_shapes", lambda L: L.nn.Linear(3, 2)(L.zeros(4, 5)), RuntimeError, "cannot be multiplied")
case("conv2d_groups_divide", lambda L: L.nn.Conv2d(3, 4, 3, groups=2), ValueError, "divisible by groups")
case("conv2d_same_strided", lambda L: L.nn.Conv2d(3, 4, 3, padding="same", stride=2), ValueError,
     "padding='same' is not supported for strided")
case("conv2d_bad_padding_string", lambda L: L.nn.Conv2d(3, 4, 3, padding="foo"), ValueError,
     "Invalid padding string 'foo'")
case("conv2d_bad_padding_mode", lambda L: L.nn.Conv2d(3, 4, 3, padding_mode="bogus"), ValueError,
     "padding_mode must be one of")
case("conv2d_forward_channels", lambda L: L.nn.Conv2d(3, 4, 3)(L.zeros(1, 2, 8, 8)), RuntimeError,
     "to have 3 channels, but got 2")
case("dropout_p", lambda L: L.nn.Dropout(p=1.5), ValueError, "dropout probability has to be between 0 and 1")
case("dropout_functional_p", lambda L: F(L).dropout(L.zeros(3), p=-0.5), ValueError, "dropout probability")
case("embedding_padding_idx", lambda L: L.nn.Embedding(10, 3, padding_idx=20), AssertionError,
     "Padding_idx must be within num_embeddings")
case("batchnorm_rank", lambda L: L.nn.BatchNorm2d(3)(L.zeros(2, 3)), ValueError, r"expected 4D input \(got 2D")
case("batchnorm_channels", lambda L: L.nn.BatchNorm2d(3)(L.zeros(2, 4, 2, 2)), RuntimeError, "4 elements")
case("layernorm_shape", lambda L: L.nn.LayerNorm(5)(L.zeros(2, 4)), RuntimeError, "normalized_shape")
case("mha_heads_divide", lambda L: L.nn.MultiheadAttention(10, 3), AssertionError,
     "embed_dim must be divisible by num_heads")
case("lstm_dropout", lambda L: L.nn.LSTM(4, 8, dropout=2.0), ValueError, "dropout should be a number in range")
case("lstm_input_size", lambda L: L.nn.LSTM(4, 8)(L.zeros(5, 2, 3)), RuntimeError,
     r"input.size\(-1\) must be equal to input_size")
case("maxpool_module_kernel_too_big", lambda L: L.nn.MaxPool2d(5)(L.zeros(1, 1, 2, 2)), RuntimeError,
     "output size is too small")
case("load_state_dict_missing", lambda L: L.nn.Linear(2, 2).load_state_dict({}), RuntimeError,
     "Missing key.*weight")
case("load_state_dict_size", lambda L: L.nn.Linear(2, 2).load_state_dict(
    {"weight": L.zeros(3, 2), "bias": L.zeros(2)}), RuntimeError, "size mismatch for weight")
case("load_state_dict_non_tensor", lambda L: L.nn.Linear(2, 2).load_state_dict({"weight": 3, "bias": L.zeros(2)}),
     RuntimeError, "expected torch.Tensor or Tensor-like")
case("register_parameter_non_param", lambda L: L.nn.Module().register_parameter("w", L.zeros(2)), TypeError,
     "cannot assign")
case("register_buffer_dotted_name", lambda L: L.nn.Module().register_buffer("a.b", L.zeros(2)), KeyError,
     r"can\\?'t contain")  # KeyError's str() quotes the message
case("add_module_empty_name", lambda L: L.nn.Module().add_module("", L.nn.ReLU()), KeyError, "empty string")
case("dataloader_batch_size_zero", lambda L: L.utils.data.DataLoader([1, 2], batch_size=0), ValueError,
     "batch_size should be a positive integer")
case("dataloader_negative_workers", lambda L: L.utils.data.DataLoader([1, 2], num_workers=-1), ValueError,
     "num_workers option should be non-negative")


def _nested(depth: int) -> Any:
    v: Any = [1.0]
    for _ in range(depth):
        v = [v]
    return v


BY_NAME = {c.name: c for c in CASES}
assert len(BY_NAME) == len(CASES), "case names must be unique"

"""Op table: elementwise math (unary, binary, comparisons, logic, n-ary, activations)."""
from .core import INT_DTYPES, OpInfo, binary_samples, unary_samples

OPS = [
    OpInfo("add", binary_samples(), dtypes=("float32", "float64", "int64", "int32", "uint8", "bool"), inplace=True),
    OpInfo("sub", binary_samples(), dtypes=("float32", "float64", "int64", "int32"), inplace=True),
    OpInfo("mul", binary_samples(), dtypes=("float32", "float64", "int64", "int32", "bool"), inplace=True),
    OpInfo("div", binary_samples(lo2=0.5, hi2=2.0), dtypes=("float32", "float64", "int64"), inplace=True),
    OpInfo("neg", unary_samples(), dtypes=("float32", "float64", "int64", "int32"), inplace=True),
    OpInfo("exp", unary_samples(), dtypes=("float32", "float64", "int64"), inplace=True),
    OpInfo("eq", binary_samples(lo=-1, hi=1), dtypes=("float32", "int64", "bool"), grad=False),
    OpInfo("ne", binary_samples(lo=-1, hi=1), dtypes=("float32", "int64", "bool"), grad=False),
    OpInfo("lt", binary_samples(), dtypes=("float32", "int64"), grad=False),
    OpInfo("le", binary_samples(), dtypes=("float32", "int64"), grad=False),
    OpInfo("gt", binary_samples(), dtypes=("float32", "int64"), grad=False),
    OpInfo("ge", binary_samples(), dtypes=("float32", "int64"), grad=False),
]
_ = INT_DTYPES

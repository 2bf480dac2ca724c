"""The op_db entries (tests/python/test_opdb.py) cgrad does not pass yet.

MISSING: in scope, but cgrad has no callable under the name. KNOWN_FAILURES:
cgrad has the callable, and some sample fails, with the reason. Both lists are
strict: an entry that resolves, or passes, fails its test until it is removed
from the list, so they stay true as ops land."""

MISSING = {
}

KNOWN_FAILURES = {
    "arange": "out= with an integer out tensor and a fractional step raises TypeError; PyTorch raises ValueError",
    "as_strided.partial_views": "autograd through as_strided of a non-contiguous view is NotImplementedError",
    "baddbmm": "integer inputs with fractional beta / alpha: PyTorch truncates them, cgrad refuses them",
    "bernoulli": "the output of bernoulli(p) does not require grad when p does (PyTorch: a zero gradient)",
    "gather":
        "an empty index of another rank than the input: PyTorch returns an empty result, cgrad raises ShapeMismatch",
    "narrow":
        "a tensor start: a 1-element non-0-d one raises TypeError (PyTorch RuntimeError); a 0-d bool one is accepted",
    "nn.functional.adaptive_avg_pool2d":
        "a 2-D input with a 2-D output_size raises ShapeMismatch; PyTorch raises ValueError",
    "nn.functional.adaptive_max_pool2d":
        "a 2-D input with a 2-D output_size raises ShapeMismatch; PyTorch raises ValueError",
    "nn.functional.avg_pool1d": "integer dtypes are not supported",
    "nn.functional.avg_pool2d": "integer dtypes are not supported",
    "nn.functional.batch_norm": "a 1-D empty input is refused",
    "nn.functional.bilinear": "integer dtypes are not supported",
    "nn.functional.conv1d": "integer dtypes are not supported",
    "nn.functional.conv2d": "integer dtypes are not supported",
    "nn.functional.conv3d": "integer dtypes are not supported",
    "nn.functional.conv_transpose1d": "integer dtypes are not supported",
    "nn.functional.conv_transpose2d": "integer dtypes are not supported",
    "nn.functional.conv_transpose3d": "integer dtypes are not supported",
    "nn.functional.embedding": "scale_grad_by_freq=True and sparse=True are NotImplementedError",
    "nn.functional.hardtanh": "integer dtypes are not supported",
    "nn.functional.max_pool2d": "integer dtypes are not supported",
    "nn.functional.relu6": "integer dtypes are not supported",
    "nn.functional.rms_norm": "a negative eps gives different values",
    "nn.functional.softsign": "integer dtypes are not supported",
    "norm.nuc": "the nuclear norm needs an SVD (issue 17)",
}

"""The op_db entries (tests/python/test_opdb.py) cgrad does not pass yet.

MISSING: in scope, but cgrad has no callable under the name. KNOWN_FAILURES:
cgrad has the callable, and some sample fails, with the reason. Both lists are
strict: an entry that resolves, or passes, fails its test until it is removed
from the list, so they stay true as ops land."""

MISSING = {
}

KNOWN_FAILURES = {
    "nn.functional.embedding": "sparse=True is NotImplementedError (cgrad has no sparse tensors)",
    "norm.nuc": "the nuclear norm needs an SVD (issue 17)",
}

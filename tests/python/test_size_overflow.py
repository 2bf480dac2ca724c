"""The size-overflow audit (issue 22): every op that takes a size, an offset,
a scale or a pad, fed with 2**31, 2**32, 2**61, 2**62, 2**63 - 1 and
negatives. Each op runs all its values in one forked child (cgrad in one fork
server, PyTorch in another, each under an address-space limit so a merely large
allocation fails cleanly instead of swapping); the child must not die by a
signal, and cgrad must raise where PyTorch raises, or else give PyTorch's
result shape. A child that dies is re-run one value at a time, so the failure
names the case. Run as a script (`--serve cgrad|torch`) it is the fork server."""
import json
import os
import resource
import subprocess
import sys
from typing import Any, Callable, Dict, List, Optional, Tuple

import pytest

from forked import run_forked

VALUES: List[int] = [2**31, 2**32, 2**61, 2**62, 2**63 - 1, -1, -2**31, -2**63]
CHILD_TIMEOUT_S = 120  # the machine is shared: be generous
HEADROOM = 4 << 30  # address space a child may add to what the server holds

Case = Callable[[Any, Any, int], Any]


def _x(L: Any, *shape: int) -> Any:
    return L.zeros(*shape)


# name -> (fn(L, F, v), whether PyTorch is run too: False where torch would grind through a huge valid input)
OPS: Dict[str, Tuple[Case, bool]] = {
    # views: sizes, strides, offsets, bounds
    "as_strided_size": (lambda L, F, v: _x(L, 4).as_strided((v,), (1,)), True),
    "as_strided_stride": (lambda L, F, v: _x(L, 4).as_strided((4,), (v,)), True),
    "as_strided_stride_sum": (lambda L, F, v: _x(L, 4).as_strided((3,), (v,)).sum(), True),
    "as_strided_huge_stride_sum": (lambda L, F, v: _x(L, 4).as_strided((3,), (v + 2**40 if v > 0 else v,)).sum(), True),
    "as_strided_offset": (lambda L, F, v: _x(L, 4).as_strided((1,), (1,), v), True),
    "as_strided_offset_sum": (lambda L, F, v: _x(L, 4).as_strided((2,), (1,), v).sum(), True),
    "as_strided_size_stride": (lambda L, F, v: _x(L, 4).as_strided((v, 2), (0, v)), True),
    "narrow_start": (lambda L, F, v: _x(L, 4).narrow(0, v, 1), True),
    "narrow_length": (lambda L, F, v: _x(L, 4).narrow(0, 2, v), True),
    "select": (lambda L, F, v: _x(L, 4).select(0, v), True),
    "getitem_int": (lambda L, F, v: _x(L, 4)[v], True),
    "getitem_slice_start": (lambda L, F, v: _x(L, 4)[v:], True),
    "getitem_slice_stop": (lambda L, F, v: _x(L, 4)[1:v], True),
    "getitem_slice_step": (lambda L, F, v: _x(L, 4)[1::v], True),
    "view": (lambda L, F, v: _x(L, 4).view(v, -1), True),
    "reshape": (lambda L, F, v: _x(L, 4).reshape(v), True),
    "reshape_two": (lambda L, F, v: _x(L, 4).reshape(v, v), True),
    "expand": (lambda L, F, v: _x(L, 1).expand(v), True),
    "expand_two": (lambda L, F, v: _x(L, 1, 1).expand(v, v), True),
    "expand_topk": (lambda L, F, v: _x(L, 1).expand(v).topk(1), False),
    "expand_sort": (lambda L, F, v: _x(L, 1).expand(v).sort(), False),
    "expand_contiguous": (lambda L, F, v: _x(L, 1).expand(v).contiguous(), False),
    "unfold_size": (lambda L, F, v: _x(L, 4).unfold(0, v, 1), True),
    "unfold_step": (lambda L, F, v: _x(L, 4).unfold(0, 2, v), True),
    "unflatten": (lambda L, F, v: _x(L, 4).unflatten(0, (v, -1)), True),
    "unflatten_two": (lambda L, F, v: _x(L, 4).unflatten(0, (v, v)), True),
    "diagonal": (lambda L, F, v: _x(L, 3, 3).diagonal(v), True),
    "split": (lambda L, F, v: _x(L, 4).split(v), True),
    "tril": (lambda L, F, v: _x(L, 3, 3).tril(v), True),
    "roll": (lambda L, F, v: _x(L, 4).roll(v), True),
    # copies whose output size is a product
    "repeat": (lambda L, F, v: _x(L, 2).repeat(v), True),
    "repeat_two": (lambda L, F, v: _x(L, 2).repeat(v, v), True),
    "tile": (lambda L, F, v: _x(L, 2).tile((v,)), True),
    "cat_expanded": (lambda L, F, v: L.cat([_x(L, 1).expand(v), _x(L, 1).expand(v)]), True),
    "stack_expanded": (lambda L, F, v: L.stack([_x(L, 1).expand(v), _x(L, 1).expand(v)]), True),
    # factories
    "zeros": (lambda L, F, v: L.zeros(v), True),
    "empty_two": (lambda L, F, v: L.empty(v, v), True),
    "full": (lambda L, F, v: L.full((v, 2), 1.0), True),
    "arange": (lambda L, F, v: L.arange(v), True),
    "arange_step": (lambda L, F, v: L.arange(0, 10, v), True),
    "linspace": (lambda L, F, v: L.linspace(0, 1, v), True),
    "eye": (lambda L, F, v: L.eye(v), True),
    "eye_m": (lambda L, F, v: L.eye(2, v), True),
    "randperm": (lambda L, F, v: L.randperm(v), True),
    "multinomial": (lambda L, F, v: L.multinomial(L.ones(2), v, replacement=True), True),
    "one_hot": (lambda L, F, v: F.one_hot(L.tensor([0, 1]), v), True),
    # sort family
    "topk": (lambda L, F, v: _x(L, 4).topk(v), True),
    "kthvalue": (lambda L, F, v: _x(L, 4).kthvalue(v), True),
    # nn: pads, scales, windows
    "pad_constant": (lambda L, F, v: F.pad(_x(L, 1, 1, 3), (v, 0)), True),
    "pad_constant_right": (lambda L, F, v: F.pad(_x(L, 1, 1, 3), (1, v)), True),
    "pad_reflect": (lambda L, F, v: F.pad(_x(L, 1, 1, 3), (v, 0), mode="reflect"), True),
    "pad_replicate": (lambda L, F, v: F.pad(_x(L, 1, 1, 3), (v, 0), mode="replicate"), True),
    "pad_replicate_both": (lambda L, F, v: F.pad(_x(L, 1, 1, 3), (v, v), mode="replicate"), True),
    "pad_circular": (lambda L, F, v: F.pad(_x(L, 1, 1, 3), (v, 0), mode="circular"), True),
    "interpolate_size": (lambda L, F, v: F.interpolate(_x(L, 1, 1, 3), size=v), True),
    "interpolate_linear_size": (lambda L, F, v: F.interpolate(_x(L, 1, 1, 3), size=v, mode="linear"), True),
    "interpolate_bicubic_size": (lambda L, F, v: F.interpolate(_x(L, 1, 1, 3, 3), size=(2, v), mode="bicubic"), True),
    "interpolate_scale": (lambda L, F, v: F.interpolate(_x(L, 1, 1, 3), scale_factor=float(v)), True),
    "pixel_shuffle": (lambda L, F, v: F.pixel_shuffle(_x(L, 1, 4, 2, 2), v), True),
    "pixel_unshuffle": (lambda L, F, v: F.pixel_unshuffle(_x(L, 1, 1, 4, 4), v), True),
    "conv1d_stride": (lambda L, F, v: F.conv1d(_x(L, 1, 1, 4), _x(L, 1, 1, 2), stride=v), True),
    "conv1d_padding": (lambda L, F, v: F.conv1d(_x(L, 1, 1, 4), _x(L, 1, 1, 2), padding=v), True),
    "conv1d_dilation": (lambda L, F, v: F.conv1d(_x(L, 1, 1, 4), _x(L, 1, 1, 2), dilation=v), True),
    "conv1d_groups": (lambda L, F, v: F.conv1d(_x(L, 1, 1, 4), _x(L, 1, 1, 2), groups=v), True),
    "conv_transpose1d_stride": (lambda L, F, v: F.conv_transpose1d(_x(L, 1, 1, 4), _x(L, 1, 1, 2), stride=v), True),
    "conv_transpose1d_padding": (lambda L, F, v: F.conv_transpose1d(_x(L, 1, 1, 4), _x(L, 1, 1, 2), padding=v), True),
    "conv_transpose1d_dilation": (lambda L, F, v: F.conv_transpose1d(_x(L, 1, 1, 4), _x(L, 1, 1, 2), dilation=v),
                                  True),
    "max_pool1d_kernel": (lambda L, F, v: F.max_pool1d(_x(L, 1, 1, 4), v), False),  # torch 2.13 hangs at 2**62
    "max_pool1d_stride": (lambda L, F, v: F.max_pool1d(_x(L, 1, 1, 4), 2, stride=v), True),
    "max_pool1d_stride_ceil": (lambda L, F, v: F.max_pool1d(_x(L, 1, 1, 4), 2, stride=v, ceil_mode=True), True),
    "max_pool1d_padding": (lambda L, F, v: F.max_pool1d(_x(L, 1, 1, 4), 2, padding=v), True),
    "max_pool1d_dilation": (lambda L, F, v: F.max_pool1d(_x(L, 1, 1, 4), 2, dilation=v), True),
    "avg_pool1d_kernel": (lambda L, F, v: F.avg_pool1d(_x(L, 1, 1, 4), v), True),
    "avg_pool1d_stride": (lambda L, F, v: F.avg_pool1d(_x(L, 1, 1, 4), 2, stride=v), True),
    "adaptive_avg_pool1d": (lambda L, F, v: F.adaptive_avg_pool1d(_x(L, 1, 1, 4), v), True),
    "adaptive_max_pool1d": (lambda L, F, v: F.adaptive_max_pool1d(_x(L, 1, 1, 4), v), True),
}


def _describe(r: Any) -> Any:
    if isinstance(r, (tuple, list)):
        return [_describe(e) for e in r]
    shape = getattr(r, "shape", None)
    return list(shape) if shape is not None else type(r).__name__


def _run_values(lib: str, op: str, values: List[int]) -> List[Dict[str, Any]]:
    """In the child: run op at each value and describe what happened."""
    L = __import__(lib)
    F = L.nn.functional
    fn = OPS[op][0]
    out = []
    for v in values:
        try:
            out.append({"value": v, "shape": _describe(fn(L, F, v))})
        except Exception as e:  # noqa: BLE001 - every exception is reported
            out.append({"value": v, "raised": type(e).__name__, "message": str(e)[:300]})
    return out


def _vm_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def _in_child(lib: str, op: str, values: List[int]) -> Dict[str, Any]:
    def child() -> Dict[str, Any]:
        if not os.environ.get("CGRAD_SANITIZED"):  # ASan reserves huge address space: it limits malloc instead
            limit = _vm_bytes() + HEADROOM
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        return {"cases": _run_values(lib, op, values)}
    return run_forked(child, CHILD_TIMEOUT_S)


def _serve(lib: str) -> None:
    """Fork server: one request per stdin line, JSON {op, values}; one JSON reply per line."""
    __import__(lib)
    import cgrad.nn.functional  # noqa: F401  (both libraries spell it nn.functional)
    if lib == "torch":
        import torch
        torch.set_num_threads(1)
    for line in sys.stdin:
        req = json.loads(line)
        sys.stdout.write(json.dumps(_in_child(lib, req["op"], req["values"])) + "\n")
        sys.stdout.flush()


class _Server:
    def __init__(self, lib: str) -> None:
        env = dict(os.environ)
        if env.get("CGRAD_SANITIZED"):  # a too-large malloc returns NULL under ASan, as under the rlimit
            env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":max_allocation_size_mb=4096"
        here = os.path.dirname(os.path.abspath(__file__))
        self.lib = lib
        self.proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "--serve", lib],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, cwd=here, env=env)

    def run(self, op: str, values: List[int]) -> Dict[str, Any]:
        assert self.proc.stdin and self.proc.stdout
        self.proc.stdin.write(json.dumps({"op": op, "values": values}) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        assert line, f"{self.lib} fork server died (exit {self.proc.poll()})"
        return json.loads(line)

    def close(self) -> None:
        assert self.proc.stdin
        self.proc.stdin.close()
        self.proc.wait(timeout=CHILD_TIMEOUT_S)


@pytest.fixture(scope="module")
def servers() -> Any:
    s = {"cgrad": _Server("cgrad")}
    try:
        import torch  # noqa: F401
        s["torch"] = _Server("torch")
    except ImportError:
        pass
    yield s
    for v in s.values():
        v.close()


def _outcomes(server: _Server, op: str) -> Optional[List[Dict[str, Any]]]:
    """All values of op in one child; if it died, each value alone, so the report names the case (cgrad
    only: a PyTorch child that dies just leaves no reference)."""
    rep = server.run(op, VALUES)
    if "cases" in rep:
        return rep["cases"]
    if server.lib != "cgrad":
        return None
    out = []
    for v in VALUES:
        one = server.run(op, [v])
        out.append(one["cases"][0] if "cases" in one else dict(one, value=v, died=True))
    return out


# PyTorch errors that come from its own narrowing or wrapping, on inputs with a well-defined answer that cgrad
# gives: avg_pool's int32 stride, x[1::2**63-1] (one element), max_pool1d(ceil_mode, stride=2**63-1) (one
# window), roll by -2**63 (a multiple of the size).
TORCH_ARTIFACTS = ("cannot be converted to type int without overflow", "Storage size calculation overflowed",
                   "Invalid computed output size: -1", "SymIntArrayRef expected to contain only concrete")


def _torch_int32_limit(message: str) -> bool:
    return any(a in message for a in TORCH_ARTIFACTS)


def _fmt(v: int) -> str:
    for k in (31, 32, 61, 62):
        if abs(v) == 2**k:
            return ("-" if v < 0 else "") + f"2**{k}"
    return "2**63-1" if v == 2**63 - 1 else str(v)


@pytest.mark.parametrize("op", sorted(OPS))
def test_size_overflow(servers: Dict[str, _Server], op: str) -> None:
    mine = _outcomes(servers["cgrad"], op)
    assert mine is not None
    theirs: Optional[List[Dict[str, Any]]] = None
    if OPS[op][1] and "torch" in servers:
        theirs = _outcomes(servers["torch"], op)
    problems = []
    for k, c in enumerate(mine):
        name = f"{op}({_fmt(c['value'])})"
        if c.get("died") or "hang" in c or "signal" in c or "exit" in c:
            problems.append(f"{name}: the child died: {c}")
            continue
        if theirs is None:
            continue  # no PyTorch reference: not crashing is the whole check
        t = theirs[k]
        if "raised" in t and "raised" not in c and not _torch_int32_limit(t["message"]):
            problems.append(f"{name}: PyTorch raised {t['raised']}({t['message'][:120]!r}), cgrad returned {c['shape']}")
        elif "raised" not in t and "raised" not in c and t["shape"] != c["shape"]:
            problems.append(f"{name}: shape {c['shape']}, PyTorch {t['shape']}")
    assert not problems, "\n".join(problems)


def test_the_issue_cases_raise_clearly(servers: Dict[str, _Server]) -> None:
    """The cases issue 22 names: each raises, with a message naming the op."""
    for op, v, word in [("as_strided_stride", 2**62 - 1, "as_strided"), ("as_strided_offset", 2**62, "as_strided"),
                        ("pad_replicate", 2**61, "pad"), ("interpolate_size", 2**61, "interpolate"),
                        ("expand_topk", 2**61, "topk"), ("pixel_shuffle", 2**32, "pixel_shuffle"),
                        ("narrow_length", 2**63 - 1, "narrow")]:
        c = servers["cgrad"].run(op, [v])["cases"][0]
        assert "raised" in c, f"{op}({v}) returned {c.get('shape')}"
        assert word in c["message"], f"{op}({v}): message {c['message']!r} does not name {word}"


def test_large_valid_views_still_work(servers: Dict[str, _Server]) -> None:
    """A size that is merely large is fine as a view: expand to 2**40 or 2**63 - 1 elements."""
    for v in (2**40, 2**63 - 1):
        c = servers["cgrad"].run("expand", [v])["cases"][0]
        assert c.get("shape") == [v], c


if __name__ == "__main__" and len(sys.argv) == 3 and sys.argv[1] == "--serve":
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    _serve(sys.argv[2])

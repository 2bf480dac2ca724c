"""cgrad.save / cgrad.load in PyTorch's format, against real PyTorch both ways:
files written by one are loaded by the other (state dicts of models and
optimizers, nested containers, views sharing storage, every dtype, the legacy
pre-1.6 format), weights_only's allowlist and safe globals, whole objects with
weights_only=False, map_location, mmap, and damaged archives."""
import argparse
import collections
import io
import os
import pickle
import struct
import zipfile

import numpy as np
import pytest
import torch

import cgrad
from cgrad import serialization

DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8", "uint8", "bool",
          "uint16", "uint32", "uint64"]


def sample(lib, dtype, shape=(2, 3)):
    n = int(np.prod(shape))
    vals = np.array([(i * 7) % 11 - 3 for i in range(n)], dtype=np.float64).reshape(shape)
    if dtype == "bool":
        arr = vals > 0
    elif dtype.startswith("uint"):
        arr = np.abs(vals).astype(np.int64)
    elif dtype.startswith(("float", "bfloat")):
        arr = vals / 4
    else:
        arr = vals.astype(np.int64)
    t = lib.tensor(arr.tolist(), dtype=lib.float64 if dtype.startswith(("float", "bfloat")) else None)
    return t.to(getattr(lib, dtype))


def values(t):
    return t.detach().to(torch.float64 if isinstance(t, torch.Tensor) else cgrad.float64).tolist()


def same(c, t):
    assert isinstance(c, cgrad.Tensor) and isinstance(t, torch.Tensor)
    assert str(c.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
    assert tuple(c.shape) == tuple(t.shape) and c.stride() == t.stride() and c.storage_offset() == t.storage_offset()
    assert values(c) == values(t)
    assert c.requires_grad == t.requires_grad


def cg_to_torch(obj, tmp_path, **kw):
    p = tmp_path / "from_cgrad.pt"
    cgrad.save(obj, p, **kw)
    return torch.load(p)


def torch_to_cg(obj, tmp_path, **kw):
    p = tmp_path / "from_torch.pt"
    torch.save(obj, p, **kw)
    return cgrad.load(p)


@pytest.mark.parametrize("legacy", [False, True])
@pytest.mark.parametrize("dtype", DTYPES)
def test_every_dtype_both_ways(dtype, legacy, tmp_path):
    kw = {"_use_new_zipfile_serialization": False} if legacy else {}
    if legacy and dtype.startswith("uint") and dtype != "uint8":  # PyTorch cannot read these back either
        with pytest.raises(RuntimeError, match="legacy format"):
            cgrad.save({"x": sample(cgrad, dtype)}, io.BytesIO(), **kw)
        return
    for shape in [(), (0,), (2, 3), (1, 0, 3)]:
        c, t = sample(cgrad, dtype, shape), sample(torch, dtype, shape)
        same(c, cg_to_torch({"x": c}, tmp_path, **kw)["x"])
        same(torch_to_cg({"x": t}, tmp_path, **kw)["x"], t)


@pytest.mark.parametrize("legacy", [False, True])
def test_views_share_storage_both_ways(legacy, tmp_path):
    kw = {"_use_new_zipfile_serialization": False} if legacy else {}
    base_c = cgrad.arange(24.0).reshape(2, 3, 4)
    base_t = torch.arange(24.0).reshape(2, 3, 4)
    views = lambda b: {"base": b, "T": b.transpose(0, 2), "step": b[:, ::2, 1::2], "row": b[1, 2], "flat": b.view(-1)}
    got_t = cg_to_torch(views(base_c), tmp_path, **kw)
    got_c = torch_to_cg(views(base_t), tmp_path, **kw)
    for k in views(base_c):
        same(got_c[k], views(base_t)[k])
        same(views(base_c)[k], got_t[k])
    got_c["row"][1] = 100.0  # one storage: a write through one view shows in the others
    got_t["row"][1] = 100.0
    assert got_c["base"][1, 2, 1].item() == 100.0 == got_t["base"][1, 2, 1].item()
    assert got_c["T"][1, 2, 1].item() == 100.0 == got_t["T"][1, 2, 1].item()


def _models(lib):
    lib.manual_seed(0)
    m = lib.nn.Sequential(lib.nn.Conv2d(1, 4, 3), lib.nn.BatchNorm2d(4), lib.nn.ReLU(), lib.nn.Flatten(),
                          lib.nn.Linear(4 * 4 * 4, 3))
    opt = lib.optim.Adam(m.parameters(), lr=1e-2)
    x = lib.ones(2, 1, 6, 6)
    m(x).sum().backward()
    opt.step()
    return m, opt


def test_model_and_optimizer_state_dicts_both_ways(tmp_path):
    mc, oc = _models(cgrad)
    mt, ot = _models(torch)
    # copy the weights so that both sides hold the same numbers
    mt.load_state_dict({k: torch.tensor(np.array(v.tolist()), dtype=torch.float32) if v.dtype != cgrad.int64
                        else torch.tensor(v.tolist()) for k, v in mc.state_dict().items()})
    ck_c = {"model": mc.state_dict(), "optim": oc.state_dict(), "epoch": 3, "args": {"lr": 1e-2, "name": "run"}}
    ck_t = {"model": mt.state_dict(), "optim": ot.state_dict(), "epoch": 3, "args": {"lr": 1e-2, "name": "run"}}
    in_torch = cg_to_torch(ck_c, tmp_path)
    assert isinstance(in_torch["model"], collections.OrderedDict) and list(in_torch["model"]) == list(ck_t["model"])
    for k, v in in_torch["model"].items():
        same(mc.state_dict()[k], v)
    mt.load_state_dict(in_torch["model"])  # what cgrad saved drives a real PyTorch model
    ot.load_state_dict(in_torch["optim"])
    assert in_torch["epoch"] == 3 and in_torch["args"] == ck_t["args"]
    in_cgrad = torch_to_cg(ck_t, tmp_path)
    for k, v in ck_t["model"].items():
        same(in_cgrad["model"][k], v)
    mc.load_state_dict(in_cgrad["model"])
    oc.load_state_dict(in_cgrad["optim"])
    st_c, st_t = in_cgrad["optim"]["state"], ck_t["optim"]["state"]
    assert sorted(st_c) == sorted(st_t)
    for i in st_c:
        for name in ("exp_avg", "exp_avg_sq", "step"):
            same(st_c[i][name], st_t[i][name])
    assert in_cgrad["optim"]["param_groups"][0]["lr"] == 1e-2


def test_parameters_sizes_dtypes_devices_and_containers(tmp_path):
    obj_c = {"p": cgrad.nn.Parameter(cgrad.ones(2)), "frozen": cgrad.nn.Parameter(cgrad.ones(1), requires_grad=False),
             "g": cgrad.ones(2, requires_grad=True), "s": cgrad.Size([2, 3]), "d": cgrad.bfloat16, "d2": cgrad.bfloat16,
             "dev": cgrad.device("cpu"), "t": (1, 2.5, None, "x", b"raw", True), "set": {1, 2}, "c": 1 + 2j,
             "od": collections.OrderedDict(a=1), "nested": [[{"k": cgrad.zeros(1)}]]}
    got = cg_to_torch(obj_c, tmp_path)
    assert isinstance(got["p"], torch.nn.Parameter) and got["p"].requires_grad
    assert isinstance(got["frozen"], torch.nn.Parameter) and not got["frozen"].requires_grad
    assert got["g"].requires_grad and got["g"].is_leaf
    assert got["s"] == torch.Size([2, 3]) and got["d"] is torch.bfloat16 and got["dev"] == torch.device("cpu")
    assert got["t"] == (1, 2.5, None, "x", b"raw", True) and got["set"] == {1, 2} and got["c"] == 1 + 2j
    assert isinstance(got["od"], collections.OrderedDict)
    obj_t = {"p": torch.nn.Parameter(torch.ones(2)), "s": torch.Size([2, 3]), "d": torch.bfloat16,
             "dev": torch.device("cpu"), "t": (1, b"raw"), "set": {1, 2}}
    back = torch_to_cg(obj_t, tmp_path)
    assert isinstance(back["p"], cgrad.nn.Parameter) and back["p"].requires_grad
    assert back["s"] == cgrad.Size([2, 3]) and isinstance(back["s"], cgrad.Size)
    assert back["d"] is cgrad.bfloat16 and back["dev"] == cgrad.device("cpu")
    assert back["t"] == (1, b"raw") and back["set"] == {1, 2}


def test_tensor_attributes_and_subclasses(tmp_path):
    t = cgrad.ones(2)
    t.note = "hello"
    got = cg_to_torch({"t": t}, tmp_path)
    assert got["t"].note == "hello"
    tt = torch.ones(2)
    tt.note = "hi"
    assert torch_to_cg({"t": tt}, tmp_path)["t"].note == "hi"


def test_the_archive_is_what_pytorch_writes(tmp_path):
    p = tmp_path / "model.pt"
    cgrad.save({"a": cgrad.ones(3), "b": cgrad.zeros(5, dtype=cgrad.int64)}, p)
    with zipfile.ZipFile(p) as z:
        names = z.namelist()
        assert {"model/data.pkl", "model/version", "model/byteorder", "model/data/0", "model/data/1",
                "model/.format_version", "model/.storage_alignment"} <= set(names)
        assert z.read("model/byteorder") == b"little" and z.read("model/version") == b"3\n"
        raw = p.read_bytes()
        for name in ("model/data/0", "model/data/1"):
            info = z.getinfo(name)
            assert info.compress_type == zipfile.ZIP_STORED
            n, m = struct.unpack("<HH", raw[info.header_offset + 26:info.header_offset + 30])
            assert (info.header_offset + 30 + n + m) % 64 == 0  # storages 64-byte aligned, for mmap
    buf = io.BytesIO()
    cgrad.save({"a": cgrad.ones(3)}, buf)
    assert zipfile.ZipFile(io.BytesIO(buf.getvalue())).namelist()[0] == "archive/data.pkl"
    buf2 = io.BytesIO()
    cgrad.save({"a": cgrad.ones(3)}, buf2)
    assert buf.getvalue() == buf2.getvalue()  # deterministic


def test_weights_only_refuses_code_and_allows_safe_globals(tmp_path):
    m = cgrad.nn.Linear(3, 2)
    p = tmp_path / "whole.pt"
    cgrad.save(m, p)
    with pytest.raises(pickle.UnpicklingError, match=r"Weights only load failed.*Unsupported global: GLOBAL "
                                                     r"cgrad\.nn\.modules\.linear\.Linear.*add_safe_globals"):
        cgrad.load(p)
    assert serialization.get_unsafe_globals_in_checkpoint(p) == ["cgrad.nn.modules.linear.Linear"]
    with serialization.safe_globals([cgrad.nn.Linear]):
        assert serialization.get_safe_globals() == [cgrad.nn.Linear]
        back = cgrad.load(p)
    assert serialization.get_safe_globals() == []
    assert isinstance(back, cgrad.nn.Linear) and values(back.weight) == values(m.weight)
    serialization.add_safe_globals([cgrad.nn.Linear])
    try:
        assert isinstance(cgrad.load(p), cgrad.nn.Linear)
    finally:
        serialization.clear_safe_globals()
    with pytest.raises(pickle.UnpicklingError):
        cgrad.load(p)
    assert isinstance(cgrad.load(p, weights_only=False), cgrad.nn.Linear)


def test_whole_objects_with_weights_only_false(tmp_path):
    ns = argparse.Namespace(lr=0.1, layers=[1, 2])
    arr = np.arange(6.0).reshape(2, 3)
    p = tmp_path / "objs.pt"
    cgrad.save({"args": ns, "arr": arr, "model": cgrad.nn.Sequential(cgrad.nn.Linear(2, 2), cgrad.nn.ReLU())}, p)
    got = cgrad.load(p, weights_only=False)
    assert got["args"] == ns and np.array_equal(got["arr"], arr)
    assert isinstance(got["model"][0], cgrad.nn.Linear)
    # a whole PyTorch model saved by PyTorch becomes the cgrad model, and computes the same
    torch.manual_seed(0)
    tm = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Tanh(), torch.nn.Linear(3, 2))
    torch.save({"model": tm, "args": ns}, tmp_path / "tm.pt")
    cm = cgrad.load(tmp_path / "tm.pt", weights_only=False)["model"]
    assert isinstance(cm, cgrad.nn.Sequential) and isinstance(cm[1], cgrad.nn.Tanh)
    x = np.linspace(-1, 1, 8).reshape(2, 4).tolist()
    assert np.allclose(values(cm(cgrad.tensor(x))), values(tm(torch.tensor(x))), atol=1e-6)


def test_a_torch_name_cgrad_lacks_is_named(tmp_path):
    p = tmp_path / "q.pt"
    torch.save({"s": torch.ones(2).to_sparse()}, p)
    with pytest.raises(NotImplementedError, match="sparse tensor"):
        cgrad.load(p)
    torch.save({"f": torch.distributions.Normal}, p)  # issue 17: no cgrad.distributions yet
    with pytest.raises((AttributeError, ModuleNotFoundError), match="gap in cgrad's PyTorch coverage"):
        cgrad.load(p, weights_only=False)
    torch.save({"c": torch.ones(2, dtype=torch.complex64)}, p)
    with pytest.raises(NotImplementedError, match="complex64"):
        cgrad.load(p)


def _craft(location="cpu", byteorder=b"little", data=struct.pack("<2f", 1.5, -2.0), crc_ok=True):
    """A checkpoint of one float32 tensor of 2 elements, written by hand."""
    pkl = (b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n((X\x07\x00\x00\x00storagectorch\nFloatStorage\n"
           b"X\x01\x00\x00\x000X" + struct.pack("<I", len(location)) + location.encode() + b"K\x02tQK\x00K\x02"
           b"\x85K\x01\x85\x89ccollections\nOrderedDict\n)RtR.")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("a/data.pkl", pkl)
        z.writestr("a/byteorder", byteorder)
        z.writestr("a/data/0", data)
        z.writestr("a/version", b"3\n")
    raw = buf.getvalue()
    if not crc_ok:
        raw = raw.replace(data, bytes(reversed(data)), 1)
    return raw


def test_map_location(tmp_path):
    assert cgrad.load(io.BytesIO(_craft())).tolist() == [1.5, -2.0]
    if cgrad.cuda.is_available():  # the tensor goes back to its CUDA device
        t = cgrad.load(io.BytesIO(_craft("cuda:0")))
        assert t.device == cgrad.device("cuda", 0) and t.tolist() == [1.5, -2.0]
        with pytest.raises(RuntimeError, match="CUDA device 99.*map_location"):
            cgrad.load(io.BytesIO(_craft("cuda:99")))
    else:
        with pytest.raises(RuntimeError, match="cuda:0.*map_location='cpu'"):
            cgrad.load(io.BytesIO(_craft("cuda:0")))
    for ml in ("cpu", cgrad.device("cpu"), {"cuda:0": "cpu"}, lambda storage, loc: storage,
               lambda storage, loc: storage.cpu()):
        assert cgrad.load(io.BytesIO(_craft("cuda:0")), map_location=ml).tolist() == [1.5, -2.0]
    assert cgrad.load(io.BytesIO(_craft()), map_location="meta").device.type == "meta"
    seen = []
    cgrad.load(io.BytesIO(_craft("cuda:1")), map_location=lambda s, loc: seen.append((s.size(), loc)) or s)
    assert seen == [(2, "cuda:1")]
    with pytest.raises(TypeError, match="map_location"):
        cgrad.load(io.BytesIO(_craft()), map_location=3)


def test_big_endian_files_are_swapped():
    t = cgrad.load(io.BytesIO(_craft(byteorder=b"big", data=struct.pack(">2f", 1.5, -2.0))))
    assert t.tolist() == [1.5, -2.0]


def test_damaged_archives():
    with pytest.raises(RuntimeError, match="CRC"):
        cgrad.load(io.BytesIO(_craft(crc_ok=False)))
    raw = _craft()
    for cut in (10, len(raw) // 2, len(raw) - 5):
        with pytest.raises((RuntimeError, pickle.UnpicklingError, EOFError)):
            cgrad.load(io.BytesIO(raw[:cut]))
    # two central-directory entries pointing at one record's data: refused before reading
    with zipfile.ZipFile(io.BytesIO(raw)) as z:
        info = z.getinfo("a/data/0")
    cd_start = raw.index(b"PK\x01\x02")
    entry = raw.index(b"PK\x01\x02" + raw[raw.index(b"PK\x01\x02") + 4:], cd_start)
    dup_at = raw.index(b"a/data/0", cd_start) - 46
    dup = bytearray(raw[dup_at:dup_at + 46 + len("a/data/0")])
    dup[46:] = b"a/data/1"
    eocd = raw.rindex(b"PK\x05\x06")
    n, size, off = struct.unpack("<HII", raw[eocd + 10:eocd + 20])
    new_eocd = raw[eocd:eocd + 8] + struct.pack("<HHII", n + 1, n + 1, size + len(dup), off) + raw[eocd + 20:]
    forged = raw[:eocd] + bytes(dup) + new_eocd
    assert entry >= 0 and info.file_size == 8
    with pytest.raises(RuntimeError, match="overlap"):
        cgrad.load(io.BytesIO(forged))


def test_file_objects_pipes_and_mmap(tmp_path):
    sd = {"w": cgrad.arange(1000.0), "b": cgrad.ones(3, dtype=cgrad.int64)}
    p = tmp_path / "ck.pt"
    cgrad.save(sd, p)
    with open(p, "rb") as fh:
        assert values(cgrad.load(fh)["w"]) == values(sd["w"])
    r, w = os.pipe()
    data = p.read_bytes()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        with os.fdopen(w, "wb") as out:
            out.write(data)
        os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as src:
        assert values(cgrad.load(src)["w"]) == values(sd["w"])
    os.waitpid(pid, 0)
    mapped = cgrad.load(p, mmap=True)
    assert values(mapped["w"]) == values(sd["w"]) and values(mapped["b"]) == [1, 1, 1]
    legacy = tmp_path / "legacy.pt"
    cgrad.save(sd, legacy, _use_new_zipfile_serialization=False)
    with pytest.raises(RuntimeError, match="mmap can only be used with files saved with"):
        cgrad.load(legacy, mmap=True)
    with pytest.raises(RuntimeError, match="mmap can only be used"):
        torch.load(legacy, mmap=True)
    t_file = tmp_path / "t.pt"
    torch.save({"w": torch.arange(1000.0)}, t_file)
    assert values(cgrad.load(t_file, mmap=True)["w"]) == list(map(float, range(1000)))


def test_safetensors_checkpoints_of_earlier_cgrad_still_load(tmp_path):
    p = tmp_path / "old.safetensors"
    cgrad.utils.safetensors.save({"model": {"w": cgrad.ones(2)}, "step": 4}, p)
    got = cgrad.load(p)
    assert got["step"] == 4 and got["model"]["w"].tolist() == [1.0, 1.0]
    cgrad.utils.safetensors.save_file({"w": cgrad.ones(2)}, tmp_path / "flat.safetensors", metadata={"k": "v"})
    from safetensors.torch import load_file
    assert load_file(tmp_path / "flat.safetensors")["w"].tolist() == [1.0, 1.0]
    assert cgrad.utils.safetensors.load_file(tmp_path / "flat.safetensors")["w"].tolist() == [1.0, 1.0]


def test_bad_arguments(tmp_path):
    with pytest.raises(ValueError, match="pickle_protocol"):
        cgrad.save({}, io.BytesIO(), pickle_protocol=1)
    with pytest.raises(NotImplementedError, match="pickle_module"):
        cgrad.save({}, io.BytesIO(), pickle_module=object())
    with pytest.raises(RuntimeError, match="pickle_module"):
        cgrad.load(io.BytesIO(), pickle_module=object(), weights_only=True)
    with pytest.raises(TypeError, match="binary mode"):
        cgrad.save({}, io.StringIO())
    with pytest.raises(EOFError):
        cgrad.load(io.BytesIO(b""))
    a = cgrad.arange(4.0)
    with pytest.raises(RuntimeError, match="dtypes float32 and int32 that view the same storage"):
        cgrad.save([a, a.view(cgrad.int32)], io.BytesIO())
    for proto in (2, 3, 4, 5):
        buf = io.BytesIO()
        cgrad.save({"a": cgrad.ones(2)}, buf, pickle_protocol=proto)
        buf.seek(0)
        # PyTorch's weights-only reader knows no protocol-4 frames
        assert torch.load(buf, weights_only=proto < 4)["a"].tolist() == [1.0, 1.0]
        buf.seek(0)
        assert cgrad.load(buf)["a"].tolist() == [1.0, 1.0]

"""Checkpoints against what happens to their files: a loaded checkpoint must
keep its data when the file is overwritten by cgrad.save, truncated or
rewritten in place by another process (default load, mmap=True, and
load_state_dict(assign=True)); saving must be atomic (a process killed at a
random moment mid-save leaves the old checkpoint whole); lengths are checked
before they are read (/dev/zero, pipes that lie). Each case that could crash
the process (SIGBUS) runs in a child, so a crash fails the case by name."""
import json
import os
import pickle
import random
import signal
import stat
import subprocess
import sys
import textwrap
import threading
import time

import pytest

import cgrad

TIMEOUT_S = 180  # the machine is shared: be generous
LINUX = sys.platform.startswith("linux")
MODES = {"default": "", "mmap_false": ", mmap=False", "mmap_true": ", mmap=True"}


def run_child(code, tmp_path, timeout=TIMEOUT_S):
    """Run `code` in a fresh interpreter (cgrad imported, P = a checkpoint path in tmp_path);
    the last line it prints is JSON. A death by signal fails with the signal's name."""
    script = tmp_path / "child.py"
    script.write_text("import json, os, sys, warnings\nimport cgrad\nP = " + repr(str(tmp_path / "ck.st")) + "\n"
                      + textwrap.dedent(code))
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=timeout)
    if proc.returncode < 0:
        pytest.fail(f"the child died with {signal.Signals(-proc.returncode).name}\n{proc.stderr[-3000:]}")
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


# ---------------------------------------------------------------- loaded tensors vs. later changes to the file

DISTURB = {
    # cgrad.save over the same path, bigger and then much smaller than what was loaded
    "save_overwrite": "cgrad.save({'w': cgrad.zeros(1 << 20)}, P); cgrad.save({'w': cgrad.zeros(4)}, P)",
    # another process truncates the file (to 10 bytes, then to 0)
    "external_truncate": ("import subprocess; subprocess.run([sys.executable, '-c', "
                          "f'import os; os.truncate({P!r}, 10); os.truncate({P!r}, 0)'], check=True)"),
    # another process rewrites it in place (same inode: open 'r+b', then 'wb')
    "external_rewrite": ("import subprocess; subprocess.run([sys.executable, '-c', "
                         "f'f = open({P!r}, \"r+b\"); f.write(b\"\\\\xff\" * 4096); f.close(); "
                         "open({P!r}, \"wb\").write(b\"junk\")'], check=True)"),
    # this process truncates it
    "own_truncate": "os.truncate(P, 10)",
    # deleted, then a new file under the name
    "unlink": "os.unlink(P); open(P, 'wb').write(b'x' * 100)",
}


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("how", list(DISTURB))
def test_loaded_tensors_survive_changes_to_the_file(how, mode, tmp_path):
    rep = run_child(f"""
        cgrad.save({{'w': cgrad.ones(1 << 20), 'i': cgrad.arange(1000), 'nested': [cgrad.full((3,), 2.0)]}}, P)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            best = cgrad.load(P{MODES[mode]})
        best['w'][5] = 7.0  # a write before the change is kept
        {DISTURB[how]}
        out = {{"w": best['w'].sum().item(), "i": best['i'].sum().item(), "nested": best['nested'][0].tolist(),
               "w5": best['w'][5].item(), "warnings": [str(w.message) for w in caught]}}
        best['w'].add_(1.0)  # and the tensors stay writable
        out["after_add"] = best['w'].sum().item()
        print(json.dumps(out))
    """, tmp_path)
    assert rep["w"] == (1 << 20) + 6 and rep["w5"] == 7.0
    assert rep["i"] == sum(range(1000)) and rep["nested"] == [2.0, 2.0, 2.0]
    assert rep["after_add"] == 2 * (1 << 20) + 6
    assert rep["warnings"] == []  # mmap=True got its lease on this local file


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("how", ["save_overwrite", "external_truncate", "external_rewrite"])
def test_load_state_dict_assign_survives_changes_to_the_file(how, mode, tmp_path):
    rep = run_child(f"""
        cgrad.manual_seed(0)
        src = cgrad.nn.Linear(512, 256)
        cgrad.save(src.state_dict(), P)
        ref_w, ref_b = src.weight.detach().sum().item(), src.bias.detach().sum().item()
        model = cgrad.nn.Linear(512, 256)
        model.load_state_dict(cgrad.load(P{MODES[mode]}), assign=True)
        {DISTURB[how]}
        out = model(cgrad.ones(2, 512)).sum()
        out.backward()
        print(json.dumps({{"w": model.weight.detach().sum().item(), "b": model.bias.detach().sum().item(),
                          "ref_w": ref_w, "ref_b": ref_b, "grad": model.weight.grad is not None}}))
    """, tmp_path)
    assert rep["w"] == rep["ref_w"] and rep["b"] == rep["ref_b"] and rep["grad"]


# ---------------------------------------------------------------- mmap=True

@pytest.mark.skipif(not LINUX, reason="file leases are Linux-only")
def test_mmap_true_maps_the_file_under_a_lease_and_copies_out_on_truncation(tmp_path):
    rep = run_child("""
        import time
        from cgrad import _leasemap
        cgrad.save({'a': cgrad.arange(4_000_000, dtype=cgrad.float32), 'b': cgrad.ones(10)}, P)
        size = os.path.getsize(P)
        ck = cgrad.load(P, mmap=True)
        one_mapping = abs(ck['a'].data_ptr() - ck['b'].data_ptr()) <= size
        leased = _leasemap.leased_mappings()
        ptr = ck['a'].data_ptr()
        ck['a'][0] = -1.0
        t0 = time.monotonic()
        os.truncate(P, 0)  # waits until the watcher has copied the mapping out
        waited = time.monotonic() - t0
        print(json.dumps({"one_mapping": one_mapping, "leased_before": leased,
                          "leased_after": _leasemap.leased_mappings(), "same_ptr": ck['a'].data_ptr() == ptr,
                          "a0": ck['a'][0].item(), "a_last": ck['a'][-1].item(), "b": ck['b'].sum().item(),
                          "waited": waited, "size_now": os.path.getsize(P)}))
    """, tmp_path)
    assert rep["one_mapping"] and rep["leased_before"] == 1
    assert rep["leased_after"] == 0 and rep["same_ptr"]  # copied in place: the same addresses
    assert rep["a0"] == -1.0 and rep["a_last"] == 3_999_999.0 and rep["b"] == 10.0
    assert rep["size_now"] == 0 and rep["waited"] < 30


@pytest.mark.skipif(not LINUX, reason="file leases are Linux-only")
def test_mmap_true_survives_truncation_after_fork(tmp_path):
    """A forked child (a DataLoader worker) takes its own lease on the inherited mapping."""
    rep = run_child("""
        cgrad.save({'w': cgrad.ones(1 << 20)}, P)
        ck = cgrad.load(P, mmap=True)
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(w)
            os.read(r, 1)  # until the parent has truncated the file
            code = 0 if ck['w'].sum().item() == (1 << 20) else 1
            os._exit(code)
        os.close(r)
        import time; time.sleep(0.5)  # the child is set up
        os.truncate(P, 0)
        parent_ok = ck['w'].sum().item() == (1 << 20)
        os.write(w, b"x")
        _, status = os.waitpid(pid, 0)
        print(json.dumps({"parent_ok": parent_ok, "child_status": status}))
    """, tmp_path)
    assert rep["parent_ok"] and rep["child_status"] == 0


@pytest.mark.skipif(not LINUX, reason="file leases are Linux-only")
def test_mmap_true_reads_into_memory_with_a_warning_when_no_lease_can_be_taken(tmp_path):
    rep = run_child("""
        cgrad.save({'w': cgrad.ones(1000)}, P)
        from cgrad import _leasemap
        held = open(P, 'r+b')  # open for writing: the kernel refuses a read lease
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            ck = cgrad.load(P, mmap=True)
        held.truncate(0)
        held.close()
        print(json.dumps({"sum": ck['w'].sum().item(), "leased": _leasemap.leased_mappings(),
                          "warnings": [(w.category.__name__, str(w.message)) for w in caught]}))
    """, tmp_path)
    assert rep["sum"] == 1000.0 and rep["leased"] == 0
    assert len(rep["warnings"]) == 1 and rep["warnings"][0][0] == "UserWarning"
    assert "read into memory" in rep["warnings"][0][1] and "open for writing" in rep["warnings"][0][1]


def test_mmap_true_needs_a_path_and_a_regular_file(tmp_path):
    import io
    buf = io.BytesIO()
    cgrad.save({"a": cgrad.ones(2)}, buf)
    buf.seek(0)
    with pytest.raises(ValueError, match="must be a file path"):
        cgrad.load(buf, mmap=True)
    with pytest.raises(ValueError, match="needs a regular file"):
        cgrad.load("/dev/zero", mmap=True)


@pytest.mark.skipif(not LINUX, reason="file leases are Linux-only")
def test_mmap_true_releases_its_lease_when_the_tensors_go(tmp_path):
    rep = run_child("""
        import gc, time
        from cgrad import _leasemap
        cgrad.save({'w': cgrad.ones(100)}, P)
        ck = cgrad.load(P, mmap=True)
        before = _leasemap.leased_mappings()
        view = ck['w'][10:20]
        del ck
        gc.collect()
        still = _leasemap.leased_mappings()  # the view keeps the mapping
        del view
        gc.collect()
        time.sleep(0.2)
        t0 = time.monotonic()
        open(P, 'r+b').close()  # no lease left to break: no wait
        print(json.dumps({"before": before, "still": still, "after": _leasemap.leased_mappings(),
                          "open_s": time.monotonic() - t0}))
    """, tmp_path)
    assert rep["before"] == 1 and rep["still"] == 1 and rep["after"] == 0
    assert rep["open_s"] < 1.0


# ---------------------------------------------------------------- atomic saving

SAVER = """
import os, sys
import cgrad
path, n = sys.argv[1], int(sys.argv[2])
k = 0
while True:
    k += 1
    cgrad.save({'w': cgrad.full((n,), float(k)), 'step': k, 'tail': cgrad.full((1000,), float(k))}, path)
    print(k, flush=True)
"""


def check_whole(path, n):
    ck = cgrad.load(path)
    k = ck["step"]
    w = ck["w"]
    assert w.shape == (n,) and w.min().item() == w.max().item() == float(k), "a mix of two checkpoints"
    assert ck["tail"].min().item() == float(k)
    return k


def test_save_is_atomic_under_sigkill(tmp_path):
    n = 8 << 20  # 32 MiB of float32
    path = tmp_path / "ck.st"
    t0 = time.monotonic()
    cgrad.save({"w": cgrad.full((n,), 0.0), "step": 0, "tail": cgrad.full((1000,), 0.0)}, path)
    dt = time.monotonic() - t0  # one save here; the kills land within the next few
    saver = tmp_path / "saver.py"
    saver.write_text(SAVER)
    rng = random.Random(1234)
    seen = set()
    for _ in range(6):
        proc = subprocess.Popen([sys.executable, str(saver), str(path), str(n)], stdout=subprocess.PIPE, text=True)
        proc.stdout.readline()  # one save done: the next ones are under way
        time.sleep(rng.uniform(0.0, 4 * dt))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
        seen.add(check_whole(path, n))
        names = sorted(os.listdir(tmp_path))
        extra = [x for x in names if x not in ("ck.st", "saver.py")]
        # only an unnamed O_TMPFILE is written; a name exists just between link and rename
        assert all(x.startswith(".ck.st.") and x.endswith(".tmp") for x in extra), names
        for x in extra:
            os.unlink(tmp_path / x)
    assert len(seen) > 1  # the kills landed at different points


def test_save_replaces_the_file_and_keeps_its_mode(tmp_path):
    path = tmp_path / "ck.st"
    cgrad.save({"a": cgrad.ones(3)}, path)
    os.chmod(path, 0o640)
    ino = os.stat(path).st_ino
    cgrad.save({"a": cgrad.zeros(3)}, path)
    st = os.stat(path)
    assert st.st_ino != ino  # a new file renamed over the old one
    assert stat.S_IMODE(st.st_mode) == 0o640
    assert cgrad.load(path)["a"].tolist() == [0.0, 0.0, 0.0]
    assert sorted(os.listdir(tmp_path)) == ["ck.st"]


def test_save_through_a_symlink_replaces_the_target(tmp_path):
    target = tmp_path / "real.st"
    link = tmp_path / "link.st"
    cgrad.save({"a": cgrad.ones(2)}, target)
    link.symlink_to(target)
    cgrad.save({"a": cgrad.zeros(2)}, link)
    assert link.is_symlink()
    assert cgrad.load(target)["a"].tolist() == [0.0, 0.0]
    assert sorted(os.listdir(tmp_path)) == ["link.st", "real.st"]


def test_failed_save_leaves_the_old_file_and_no_temp_files(tmp_path, monkeypatch):
    from cgrad import serialization
    path = tmp_path / "ck.st"
    cgrad.save({"a": cgrad.ones(2), "b": cgrad.ones(3)}, path)
    calls = []

    def failing(t):
        calls.append(t)
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        return original(t)

    original = serialization._storage_bytes
    monkeypatch.setattr(serialization, "_storage_bytes", failing)
    with pytest.raises(OSError, match="No space"):
        cgrad.save({"a": cgrad.zeros(2), "b": cgrad.zeros(3)}, path)
    assert len(calls) == 2
    monkeypatch.undo()
    assert cgrad.load(path)["a"].tolist() == [1.0, 1.0]
    assert sorted(os.listdir(tmp_path)) == ["ck.st"]
    with pytest.raises(pickle.PicklingError, match="lambda"):
        cgrad.save({"a": lambda: 0}, path)
    assert sorted(os.listdir(tmp_path)) == ["ck.st"] and cgrad.load(path)["b"].tolist() == [1.0] * 3


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write any file")
def test_save_refuses_a_read_only_checkpoint(tmp_path):
    path = tmp_path / "ck.st"
    cgrad.save({"a": cgrad.ones(2)}, path)
    os.chmod(path, 0o444)
    with pytest.raises(PermissionError, match="not writable"):
        cgrad.save({"a": cgrad.zeros(2)}, path)
    assert cgrad.load(path)["a"].tolist() == [1.0, 1.0]


def test_save_errors_name_the_problem(tmp_path):
    with pytest.raises(FileNotFoundError, match="cannot create a new file in"):
        cgrad.save({"a": cgrad.ones(2)}, tmp_path / "missing" / "ck.st")
    with pytest.raises(IsADirectoryError):
        cgrad.save({"a": cgrad.ones(2)}, tmp_path)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_save_to_and_load_from_a_pipe(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = {}

    def reader():
        got["data"] = fifo.read_bytes()

    th = threading.Thread(target=reader)
    th.start()
    cgrad.save({"a": cgrad.arange(5.0)}, fifo)  # written in place: the pipe stays a pipe
    th.join(TIMEOUT_S)
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)

    def writer(data):
        with open(fifo, "wb") as fh:
            fh.write(data)

    th = threading.Thread(target=writer, args=(got["data"],))
    th.start()
    assert cgrad.load(fifo)["a"].tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]  # a stream of unknown size
    th.join(TIMEOUT_S)


# ---------------------------------------------------------------- lengths checked before reading

def test_dev_zero_fails_after_eight_bytes(tmp_path):
    rep = run_child("""
        import resource, time
        rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        t0 = time.monotonic()
        try:
            from cgrad.utils import safetensors as st
            st.load('/dev/zero')
            err = None
        except ValueError as e:
            err = str(e)
        with open('/proc/self/io') as fh:
            io_ = dict(line.split(': ') for line in fh.read().splitlines())
        print(json.dumps({"err": err, "s": time.monotonic() - t0,
                          "rss_mb": (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss0) / 1024}))
    """, tmp_path)
    assert rep["err"] and "header length 0" in rep["err"]
    assert rep["s"] < 5 and rep["rss_mb"] < 50
    with pytest.raises(pickle.UnpicklingError, match="not a PyTorch checkpoint"):
        cgrad.load("/dev/zero")  # the first bytes tell: nothing more is read


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs named pipes")
def test_a_pipe_that_ends_early_fails_without_reading_the_declared_size(tmp_path):
    """The header declares 4 GiB; the pipe delivers 100 bytes and closes."""
    rep = run_child("""
        import resource, struct, threading
        fifo = P + '.pipe'
        os.mkfifo(fifo)
        header = json.dumps({'a': {'dtype': 'U8', 'shape': [1 << 32], 'data_offsets': [0, 1 << 32]}}).encode()
        def writer():
            with open(fifo, 'wb') as fh:
                fh.write(struct.pack('<Q', len(header)) + header + b'\\x01' * 100)
        th = threading.Thread(target=writer); th.start()
        rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        try:
            cgrad.load(fifo)  # safetensors, streamed: the declared size is never read whole
            err = None
        except (ValueError, MemoryError) as e:
            err = f"{type(e).__name__}: {e}"
        th.join()
        print(json.dumps({"err": err,
                          "rss_mb": (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss0) / 1024}))
    """, tmp_path)
    assert rep["err"] and "ValueError" in rep["err"] and "stream ended after" in rep["err"], rep
    assert rep["rss_mb"] < 200


def test_header_claims_beyond_the_file_fail_before_reading(tmp_path):
    import struct
    path = tmp_path / "lie.st"
    header = json.dumps({"a": {"dtype": "F32", "shape": [1 << 38], "data_offsets": [0, 1 << 40]}}).encode()
    path.write_bytes(struct.pack("<Q", len(header)) + header + b"\0" * 64)
    t0 = time.monotonic()
    with pytest.raises(ValueError, match="beyond the data section"):
        cgrad.load(path)
    assert time.monotonic() - t0 < 5


# ---------------------------------------------------------------- other formats are named

def test_pytorch_checkpoints_are_named_by_the_safetensors_reader(tmp_path):
    import io
    torch = pytest.importorskip("torch")
    from cgrad.utils import safetensors as st
    sd = {"w": torch.ones(3)}
    torch.save(sd, tmp_path / "zip.pt")
    torch.save(sd, tmp_path / "legacy.pt", _use_new_zipfile_serialization=False)
    for name, kind in (("zip.pt", "PyTorch .pt checkpoint (zip archive with data.pkl"),
                       ("legacy.pt", "legacy PyTorch .pt checkpoint (pickle")):
        p = tmp_path / name
        for src in (p, io.BytesIO(p.read_bytes())):
            with pytest.raises(ValueError, match=r"this is an? " + kind.replace("(", r"\(").replace(".", r"\.")) as e:
                st.load(src)
            assert "not a safetensors file" in str(e.value) and "cgrad.load reads" in str(e.value)
            if isinstance(src, io.BytesIO):
                src.seek(0)
            assert cgrad.load(src)["w"].tolist() == [1.0, 1.0, 1.0]

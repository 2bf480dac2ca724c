"""`python -m cgrad.compat` and cgrad.install_as_torch(): PyTorch programs run
unmodified, with `import torch` and every torch.* submodule resolving to
cgrad's module objects, gaps named in ImportError / AttributeError messages,
torch.__version__ reporting the PyTorch API level, and the installed PyTorch
never imported. Programs run in subprocesses (this process has the real torch
imported as the oracle); the README's own python blocks are among them."""
import operator
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import torch

import cgrad

ROOT = Path(__file__).resolve().parents[2]
REAL_TORCH_DIR = str(Path(torch.__file__).resolve().parent)


def _run(args, tmp_path, code=None, name="script.py", timeout=240):
    """Run `python -m cgrad.compat ARGS` in tmp_path (code written to tmp_path/name first)."""
    if code is not None:
        (tmp_path / name).write_text(textwrap.dedent(code))
    env = dict(os.environ, REAL_TORCH_DIR=REAL_TORCH_DIR)
    return subprocess.run([sys.executable, "-m", "cgrad.compat", *args], cwd=tmp_path, capture_output=True,
                          text=True, timeout=timeout, env=env)


def _ok(res):
    assert res.returncode == 0, f"exit {res.returncode}\nstdout:\n{res.stdout}\nstderr:\n{res.stderr}"
    return res.stdout


# Every python block of the README runs with its `import torch` unchanged.
README_BLOCKS = re.findall(r"^```python\n(.*?)^```", (ROOT / "README.md").read_text(), re.S | re.M)


def test_the_readme_has_python_blocks_in_import_torch_style():
    assert len(README_BLOCKS) >= 2
    for block in README_BLOCKS:
        assert "import cgrad as torch" not in block
        assert re.search(r"^import torch$", block, re.M), block


@pytest.mark.parametrize("block", README_BLOCKS, ids=[f"block{i}" for i in range(len(README_BLOCKS))])
def test_readme_python_block_runs_under_the_launcher(block, tmp_path):
    check = textwrap.dedent("""
        import os, sys
        assert sys.modules["torch"].__file__.startswith(os.path.dirname(sys.modules["cgrad"].__file__))
        assert not [m for m in sys.modules.values()
                    if (getattr(m, "__file__", None) or "").startswith(os.environ["REAL_TORCH_DIR"])]
        print("README-BLOCK-OK")
    """)
    out = _ok(_run(["readme_block.py"], tmp_path, block + "\n" + check, name="readme_block.py"))
    assert "README-BLOCK-OK" in out


SUBMODULES_SCRIPT = """
    import os, pickle, sys
    import torch
    import torch.nn as nn
    import torch.nn.functional as F
    import torch.nn.init
    import torch.optim.lr_scheduler
    import torch.autograd.function
    import torch.utils.data
    from torch import optim
    from torch.utils.data import DataLoader, TensorDataset, Dataset
    from torch.utils.data.sampler import RandomSampler
    from torch.utils.data.dataloader import DataLoader as DL2
    from torch.nn.modules.activation import MultiheadAttention
    from torch.nn.modules.linear import NonDynamicallyQuantizableLinear
    from torch.nn.parameter import Parameter
    from torch.optim.optimizer import Optimizer
    from torch.optim.lr_scheduler import StepLR
    from torch.autograd import Function
    from torch.nn.parallel import DataParallel, DistributedDataParallel
    import torch.cuda, torch.backends.cudnn, torch.amp
    import cgrad

    assert nn is cgrad.nn and F is cgrad.nn.functional and torch.nn.init is cgrad.nn.init
    assert torch.optim.lr_scheduler is cgrad.optim.lr_scheduler and optim is cgrad.optim
    assert torch.utils.data is cgrad.utils.data and DataLoader is DL2 is cgrad.utils.data.DataLoader
    assert sys.modules["torch.nn.functional"] is cgrad.nn.functional
    assert torch.Tensor is cgrad.Tensor and torch.nn.Linear is cgrad.nn.Linear
    assert MultiheadAttention is cgrad.nn.MultiheadAttention
    assert issubclass(NonDynamicallyQuantizableLinear, nn.Linear)
    assert Parameter is cgrad.nn.Parameter and Optimizer is cgrad.optim.Optimizer and Function is cgrad.autograd.Function
    assert torch.backends.cudnn is cgrad.backends.cudnn and torch.cuda is cgrad.cuda
    # cgrad's own modules keep their names and specs; the facade is torch
    assert cgrad.nn.__name__ == "cgrad.nn" and cgrad.nn.__spec__.name == "cgrad.nn"
    assert torch.__name__ == "torch" and torch.__spec__.name == "torch"

    # a real training step through the torch names
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    assert isinstance(model[0].weight, torch.Tensor) and isinstance(model[0].weight, nn.Parameter)
    opt = optim.SGD(model.parameters(), lr=0.1)
    sched = StepLR(opt, step_size=1, gamma=0.5)
    ds = TensorDataset(torch.randn(16, 4), torch.randint(0, 2, (16,)))
    for x, y in DataLoader(ds, batch_size=8, sampler=RandomSampler(ds)):
        loss = F.cross_entropy(model(x), y)
        opt.zero_grad(); loss.backward(); opt.step(); sched.step()
    assert abs(opt.param_groups[0]["lr"] - 0.025) < 1e-12

    # pickling through the torch names works and gives cgrad objects back
    m2 = pickle.loads(pickle.dumps(model))
    assert type(m2) is cgrad.nn.Sequential and torch.equal(m2[0].weight, model[0].weight)
    t = pickle.loads(pickle.dumps(torch.arange(3)))
    assert type(t) is cgrad.Tensor and t.tolist() == [0, 1, 2]

    # the real torch is nowhere
    real = os.environ["REAL_TORCH_DIR"]
    assert not [n for n, m in sys.modules.items() if (getattr(m, "__file__", None) or "").startswith(real)]
    assert torch.__file__ == cgrad.__file__
    print("SUBMODULES-OK", sys.argv[1:], __name__)
"""


def test_a_script_with_many_torch_submodule_imports(tmp_path):
    out = _ok(_run(["script.py", "--lr", "0.1"], tmp_path, SUBMODULES_SCRIPT))
    assert "SUBMODULES-OK ['--lr', '0.1'] __main__" in out


def test_missing_submodule_is_an_import_error_naming_the_gap(tmp_path):
    out = _ok(_run(["script.py"], tmp_path, """
        import torch
        for name in ("torch.distributed", "torch.fx", "torch.nn.foo_bar"):
            try:
                __import__(name)
            except ModuleNotFoundError as e:
                assert isinstance(e, ImportError) and e.name == name, (e, e.name)
                assert f"No module named '{name}'" in str(e) and "gap in cgrad's PyTorch coverage" in str(e), e
                print("GAP", name)
            else:
                raise AssertionError(name + " imported")
        try:  # Python's own message for a from-import of a missing name, naming the cgrad module
            from torch.nn import FooLayer
        except ImportError as e:
            assert "cannot import name 'FooLayer' from 'cgrad.nn'" in str(e), e
            print("GAP from-import")
        import importlib.util
        assert importlib.util.find_spec("torch") is not None
    """))
    assert out.count("GAP") == 4


def test_missing_attribute_is_an_attribute_error_naming_it(tmp_path):
    out = _ok(_run(["script.py"], tmp_path, """
        import torch
        import torch.nn
        for owner, name in ((torch, "foo_not_there"), (torch.nn, "FooLayer"), (torch.nn.functional, "foo_fn"),
                            (torch.optim, "FooOptim")):
            full = owner.__name__.replace("cgrad", "torch", 1) + "." + name
            try:
                getattr(owner, name)
            except AttributeError as e:
                assert f"cgrad does not provide {full}" in str(e), e
                print("MISSING", full)
            assert not hasattr(owner, name)
            assert getattr(owner, name, 42) == 42
        # dunder probes stay plain AttributeErrors (hasattr-style checks by libraries)
        assert not hasattr(torch.nn, "__wrapped__") and not hasattr(torch, "__wrapped__")
        # a cgrad subpackage is reachable as an attribute without its own import, as torch.nn.parallel is
        assert torch.nn.parallel.DataParallel is torch.nn.DataParallel
        # from torch import * still works and brings functions and dtypes, not submodules
        ns = {}
        exec("from torch import *", ns)
        assert ns["zeros"] is torch.zeros and ns["float32"] is torch.float32 and "nn" not in ns
        exec("from torch.nn import *", ns)
        assert ns["Linear"] is torch.nn.Linear
        print("ATTR-OK")
    """))
    assert out.count("MISSING") == 4 and "ATTR-OK" in out


def test_cgrad_imports_are_unaffected(tmp_path):
    out = _ok(_run(["script.py"], tmp_path, """
        import torch
        import cgrad, cgrad.nn
        try:
            import cgrad.nn.foo_bar
        except ModuleNotFoundError as e:
            assert e.name == "cgrad.nn.foo_bar" and "gap" not in str(e), e
        from cgrad.nn import Linear
        assert Linear is torch.nn.Linear
        assert cgrad.__version__ == "0.1.0" and cgrad.version.__version__ == "0.1.0"
        print("CGRAD-OK")
    """))
    assert "CGRAD-OK" in out


def test_versions_under_the_launcher(tmp_path):
    out = _ok(_run(["script.py"], tmp_path, """
        import importlib.metadata
        import torch, torch.version, cgrad
        from torch.torch_version import TorchVersion
        v = torch.__version__
        assert isinstance(v, str) and isinstance(v, TorchVersion) and v == "2.13.0"
        assert v >= (2, 0) and v > "1.13" and v < (3,) and v >= "2.13.0rc1" and v == (2, 13)
        assert torch.version.__version__ == v and torch.version.cuda is None and torch.version.hip is None
        assert torch.version.git_version == cgrad.version.git_version and torch.version.debug is False
        assert cgrad.__version__ == "0.1.0" and str(cgrad.version.torch_api) == "2.13.0"
        assert importlib.metadata.version("torch") == "2.13.0"
        print("VERSION-OK")
    """))
    assert "VERSION-OK" in out


def test_module_and_code_forms(tmp_path):
    pkg = tmp_path / "mypkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "train.py").write_text("import sys, torch\nprint('MOD', torch.ones(2).sum().item(), sys.argv[1:], __name__)\n")
    assert "MOD 2.0 ['x'] __main__" in _ok(_run(["-m", "mypkg.train", "x"], tmp_path))
    assert "CODE 3 ['y']" in _ok(_run(["-c", "import sys, torch; print('CODE', torch.arange(3).numel(), sys.argv[1:])",
                                       "y"], tmp_path))


def test_script_folder_is_on_the_path_and_exit_status_passes_through(tmp_path):
    sub = tmp_path / "proj"
    sub.mkdir()
    (sub / "helper.py").write_text("VALUE = 7\n")
    (sub / "main.py").write_text("import sys, torch, helper\nprint('HELPER', helper.VALUE)\nsys.exit(3)\n")
    res = _run([str(sub / "main.py")], tmp_path)
    assert res.returncode == 3 and "HELPER 7" in res.stdout
    res = _run(["script.py"], tmp_path, "import torch\nraise ValueError('boom')\n")
    assert res.returncode == 1 and "ValueError: boom" in res.stderr


def test_usage_errors(tmp_path):
    res = _run([], tmp_path)
    assert res.returncode == 2 and "usage: python -m cgrad.compat" in res.stderr
    res = _run(["no_such_script.py"], tmp_path)
    assert res.returncode == 2 and "no_such_script.py" in res.stderr
    res = _run(["-m"], tmp_path)
    assert res.returncode == 2 and "argument expected" in res.stderr
    assert "usage" in _ok(_run(["--help"], tmp_path))


def test_install_as_torch_from_inside_a_program(tmp_path):
    (tmp_path / "prog.py").write_text(textwrap.dedent("""
        import cgrad
        cgrad.install_as_torch()
        cgrad.install_as_torch()  # idempotent
        import torch, torch.nn.functional as F
        assert torch.nn.functional is F is cgrad.nn.functional and torch.ones is cgrad.ones
        assert cgrad.compat.is_installed()
        print("HOOK-OK")
    """))
    res = subprocess.run([sys.executable, "prog.py"], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert res.returncode == 0 and "HOOK-OK" in res.stdout, res.stderr


def test_install_as_torch_refuses_when_the_real_torch_is_imported():
    assert sys.modules["torch"] is torch  # this process uses PyTorch as the oracle
    with pytest.raises(RuntimeError, match="install_as_torch: the real torch is imported already"):
        cgrad.install_as_torch()
    assert sys.modules["torch"] is torch


def test_cgrad_version_has_the_fields_of_torch_version_on_a_cpu_build():
    import torch.version as tv
    mine = {k for k in vars(cgrad.version) if not k.startswith("_")}
    theirs = {k for k, v in vars(tv).items() if not k.startswith("_") and not callable(v)}
    assert theirs <= mine, theirs - mine
    for k in ("cuda", "hip", "rocm", "xpu", "debug"):
        assert getattr(cgrad.version, k) == getattr(tv, k), k
    assert cgrad.version.__version__ == cgrad.__version__ == "0.1.0"
    g = cgrad.version.git_version
    assert g == "Unknown" or re.fullmatch(r"[0-9a-f]{40}", g)


VERSION_CASES = ["2.13.0", "2.13", (2, 13), (2, 13, 0), [2, 13, 1], (2, 1), (3,), "2.13.0rc1", "2.13.0a1",
                 "2.13.0.dev20260101", "2.13.0.post1", "2.13.0+cpu", "2.14", "1.13.1", "10.0", "2!1.0", "parrot"]


@pytest.mark.parametrize("version", ["2.13.0", "2.13.0+cpu", "2.13.0rc2", "1.10.0a0", "2.13.0.dev1"])
def test_torch_version_compares_as_torchs(version):
    from torch.torch_version import TorchVersion as Theirs
    mine, theirs = cgrad.torch_version.TorchVersion(version), Theirs(version)
    assert isinstance(mine, str) and str(mine) == version and hash(mine) == hash(version)
    for other in VERSION_CASES:
        for op in (operator.eq, operator.lt, operator.le, operator.gt, operator.ge):
            assert op(mine, other) == op(theirs, other), (version, op, other)
        # torch's != is str's (so TorchVersion('2.13.0') != '2.13' and == '2.13' both hold); cgrad's is "not =="
        assert (mine != other) is (not (mine == other))
    with pytest.raises(TypeError):
        mine < 3  # noqa: B015
    assert (mine == 3) is False

"""The type stubs (python/cgrad/_C.pyi, __init__.pyi) are up to date with
the extension: every Tensor method and module function is named there."""
import importlib.util
import sys
from pathlib import Path

import cgrad

ROOT = Path(__file__).resolve().parents[2]


def _generator():
    spec = importlib.util.spec_from_file_location("gen_stubs", ROOT / "tools" / "gen_stubs.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_stubs_are_current():
    gen = _generator()
    pkg = Path(cgrad.__file__).parent
    assert (pkg / "_C.pyi").read_text() == gen.generate(), "run tools/gen_stubs.py"
    assert (pkg / "__init__.pyi").read_text() == gen.generate_package(), "run tools/gen_stubs.py"


def test_stub_names_every_method_and_function():
    text = (Path(cgrad.__file__).parent / "_C.pyi").read_text()
    for name in dir(cgrad._C._TensorBase):
        if not name.startswith("__") and callable(getattr(cgrad._C._TensorBase, name)):
            assert f"def {name}(" in text, name
    for name, obj in vars(cgrad._C).items():
        if not name.startswith("__") and callable(obj) and not isinstance(obj, type):
            assert f"def {name}(" in text, name


def test_mypy_accepts_a_typical_script(tmp_path):
    api = __import__("pytest").importorskip("mypy.api")
    script = tmp_path / "use.py"
    script.write_text("import cgrad\nx = cgrad.ones(2, 3)\ny = (x * 2).sum(dim=0)\nn: int = y.numel()\n")
    out, err, status = api.run([str(script), "--ignore-missing-imports", "--no-error-summary",
                                f"--python-executable={sys.executable}"])
    assert status == 0, out + err

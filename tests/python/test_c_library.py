"""The engine as a C library, as the Python package ships it: the header compiles as
C11 and as C++, the engine exports exactly the CG_API functions of the public
headers, the version macros agree with the build and with cg_version(), and a C
program built with `python -m cgrad --cflags --libs` links and runs the package's
engine."""
import ctypes
import os
import re
import shutil
import subprocess
import sys

import pytest

import cgrad
from cgrad import _engine

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HEADERS = ["cgrad.h", "cgrad_elementwise_ops.h", "cgrad_op_ids.h"]

needs_cc = pytest.mark.skipif(shutil.which("gcc") is None or shutil.which("g++") is None,
                              reason="needs gcc and g++")


def _public_functions():
    names = set()
    for h in HEADERS:
        text = open(os.path.join(cgrad.get_include(), h)).read()
        text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
        names |= set(re.findall(r"CG_API\b[^;{]*?\b(cg_\w+)\s*\(", text, flags=re.S))
    return names


def test_the_headers_are_in_the_include_folder():
    assert all(os.path.isfile(os.path.join(cgrad.get_include(), h)) for h in HEADERS)
    assert os.path.isfile(os.path.join(cgrad.get_lib_dir(), "libcgrad.so"))


@pytest.mark.skipif(shutil.which("nm") is None, reason="needs nm")
def test_every_engine_build_exports_exactly_the_public_api():
    public = _public_functions()
    assert len(public) > 300
    for lib in _engine.engines().values():
        out = subprocess.run(["nm", "-D", "--defined-only", os.path.join(cgrad.get_lib_dir(), lib)],
                             capture_output=True, text=True, check=True).stdout
        exported = {line.split()[-1] for line in out.splitlines() if len(line.split()) == 3}
        assert exported - public == set(), f"{lib} exports symbols the headers do not declare"
        assert public - exported == set(), f"{lib} lacks functions the headers declare"


def test_versions_agree():
    text = open(os.path.join(cgrad.get_include(), "cgrad.h")).read()
    major, minor, patch = (int(re.search(rf"#define CG_VERSION_{k} (\d+)", text).group(1))
                           for k in ("MAJOR", "MINOR", "PATCH"))
    string = re.search(r'#define CG_VERSION_STRING "([^"]+)"', text).group(1)
    assert string == f"{major}.{minor}.{patch}" == cgrad.__version__ == cgrad.version.__version__
    meson = open(os.path.join(ROOT, "meson.build")).read()
    assert re.search(r"version : '([^']+)'", meson).group(1) == string
    lib = _engine._handles[-1]
    lib.cg_version.restype = ctypes.c_char_p
    assert lib.cg_version().decode() == string
    out = subprocess.run([sys.executable, "-m", "cgrad", "--version"], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == string


@needs_cc
@pytest.mark.parametrize("lang", ["c11", "c++11", "c++17"])
def test_the_header_compiles_as_c_and_cpp(lang, tmp_path):
    src = tmp_path / ("t.c" if lang.startswith("c1") else "t.cpp")
    src.write_text('#include "cgrad.h"\nint main(void) { return cg_version() == 0; }\n')
    cc = "gcc" if lang.startswith("c1") else "g++"
    subprocess.run([cc, f"-std={lang}", "-Wall", "-Wextra", "-Werror", "-pedantic", f"-I{cgrad.get_include()}",
                    "-fsyntax-only", str(src)], check=True, capture_output=True, text=True)


C_PROGRAM = r"""
#include <stdio.h>
#include <string.h>
#include "cgrad.h"

int main(void) {
    if (strcmp(cg_version(), CG_VERSION_STRING) != 0) return 1;
    int64_t shape[2] = {2, 2};
    cg_tensor *a = cg_arange(0, 4, 1, CG_DTYPE_F32, cg_cpu());
    cg_tensor *m = cg_reshape(a, 2, shape);
    cg_tensor *p = cg_matmul(m, m);
    if (!p) {
        fprintf(stderr, "%s\n", cg_last_error_message());
        return 2;
    }
    double v[4];
    for (int i = 0; i < 4; i++) cg_tensor_get_flat(p, i, &v[i]);
    printf("%s %g %g %g %g\n", cg_version(), v[0], v[1], v[2], v[3]);
    cg_tensor *bad = cg_matmul(a, p); /* (4) @ (2,2): an error, not a crash */
    printf("%d %s\n", bad == NULL, bad ? "" : cg_status_name(cg_last_error()));
    cg_tensor_release(p);
    cg_tensor_release(m);
    cg_tensor_release(a);
    return 0;
}
"""


@needs_cc
@pytest.mark.parametrize("lang", ["c", "c++"])
def test_a_program_built_with_the_package_flags_runs_its_engine(lang, tmp_path):
    flags = subprocess.run([sys.executable, "-m", "cgrad", "--cflags", "--libs"], capture_output=True, text=True,
                           check=True).stdout.split()
    src = tmp_path / ("prog.c" if lang == "c" else "prog.cpp")
    src.write_text(C_PROGRAM)
    exe = tmp_path / "prog"
    cc = ["gcc", "-std=c11"] if lang == "c" else ["g++", "-std=c++17"]
    subprocess.run(cc + ["-Wall", "-Wextra", "-Werror", str(src), "-o", str(exe)] + flags, check=True,
                   capture_output=True, text=True)
    out = subprocess.run([str(exe)], capture_output=True, text=True, check=True, env={"PATH": os.environ["PATH"]})
    lines = out.stdout.splitlines()
    assert lines[0] == f"{cgrad.__version__} 2 3 6 11"
    assert lines[1].startswith("1 ")


def test_the_flags_command_needs_an_option():
    r = subprocess.run([sys.executable, "-m", "cgrad"], capture_output=True, text=True)
    assert r.returncode == 2 and "usage" in r.stderr


def test_the_c_api_reference_is_current():
    import importlib.util
    spec = importlib.util.spec_from_file_location("gen_c_api_doc", os.path.join(ROOT, "tools", "gen_c_api_doc.py"))
    gen = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen)
    text = open(os.path.join(ROOT, "docs", "c-api.md")).read()
    assert text == gen.generate(), "run tools/gen_c_api_doc.py"
    for name in sorted(_public_functions()):  # every exported function is in the reference
        assert name + "(" in text, name

"""The engine's include graph holds its layering (docs/engine.md, "Layers").

Each folder under src/ is a layer and may include headers only from the
layers listed for it here; the public headers (include/) include only each
other. A lower layer that includes a higher one fails this test. Pure file
reading: no build needed.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SRC = ROOT / "src"

# layer -> the layers its files may include (its own always allowed)
ALLOWED: dict[str, set[str]] = {
    "core": set(),
    "autograd": {"core"},
    "backend": {"core"},  # the loop types and backends know nothing of autograd or ops
    "dispatch": {"core", "autograd", "backend"},
    "ops": {"core", "autograd", "dispatch"},
    "optim": {"core", "autograd", "dispatch"},  # optimizer steps reach the backend through kernel entries
    "engine": {"core", "autograd", "backend", "dispatch", "ops", "optim"},
    "io": {"core"},  # checkpoint files: the public API, and core's checked arithmetic
}

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def layer_of(path: Path) -> str:
    return path.relative_to(SRC).parts[0]


def quoted_includes(path: Path) -> list[Path]:
    """The files a source's #include "..." lines resolve to (relative to the file, then include/)."""
    out = []
    for name in INCLUDE.findall(path.read_text()):
        local = (path.parent / name).resolve()
        out.append(local if local.exists() else (ROOT / "include" / name).resolve())
    return out


def engine_sources() -> list[Path]:
    return sorted(p for p in SRC.rglob("*") if p.suffix in (".c", ".h", ".def"))


def test_every_folder_is_a_known_layer() -> None:
    assert {layer_of(p) for p in engine_sources()} == set(ALLOWED)


@pytest.mark.parametrize("path", engine_sources(), ids=lambda p: str(p.relative_to(SRC)))
def test_includes_point_down(path: Path) -> None:
    mine = layer_of(path)
    for inc in quoted_includes(path):
        assert inc.exists(), f"{path.relative_to(ROOT)} includes a missing file {inc}"
        if inc.is_relative_to(ROOT / "include"):
            continue  # the public API: every layer may use it
        assert inc.is_relative_to(SRC), f"{path.relative_to(ROOT)} includes {inc} outside src/ and include/"
        theirs = layer_of(inc)
        if theirs == mine:
            continue
        assert theirs in ALLOWED[mine], (
            f"{path.relative_to(ROOT)} (layer {mine}) includes {inc.relative_to(ROOT)} (layer {theirs}); "
            f"{mine} may include only {sorted(ALLOWED[mine] | {mine})}")


# the device seam (Note [Backends]): above the backend, code names no device and runs no loop of its own
DEVICE_BLIND = ["ops", "optim", "autograd"]
NO_DEVICE_CODE = re.compile(r"\b(cg_is_meta|cg_parallel_for)\s*\(")


@pytest.mark.parametrize("layer", DEVICE_BLIND)
def test_no_device_branches_or_cpu_loops_above_the_backend(layer: str) -> None:
    """No meta branch and no thread-pool loop in ops, optim or autograd: their compute goes through
    the backend (runners and kernel entries), so every device runs them the same way."""
    for path in sorted((SRC / layer).rglob("*")):
        if path.suffix in (".c", ".h"):
            hits = NO_DEVICE_CODE.findall(path.read_text())
            assert not hits, f"{path.relative_to(ROOT)} calls {sorted(set(hits))}"


def test_public_headers_include_only_public_headers() -> None:
    for path in sorted((ROOT / "include").glob("*.h")):
        for inc in quoted_includes(path):
            assert inc.is_relative_to(ROOT / "include"), f"{path.name} includes {inc}"


def test_nothing_below_the_binding_includes_python() -> None:
    for path in engine_sources():
        assert "Python.h" not in path.read_text(), f"{path.relative_to(ROOT)} includes Python.h"


def test_every_folder_lists_its_own_sources() -> None:
    """One meson.build per source folder, naming exactly the .c files in it."""
    for folder in [p.parent for p in SRC.rglob("*.c")] + [ROOT / "tests" / "c", ROOT / "python" / "cgrad" / "_C"]:
        build = folder / "meson.build"
        assert build.exists(), f"{folder.relative_to(ROOT)} has no meson.build"
        listed = set(re.findall(r"'([^'/]+\.c)'", build.read_text()))
        on_disk = {p.name for p in folder.glob("*.c")}
        if folder.name == "core":
            on_disk.discard("cpu_features.c")
            listed.discard("cpu_features.c")
        assert listed == on_disk, f"{build.relative_to(ROOT)}: listed {sorted(listed ^ on_disk)} differ from the folder"

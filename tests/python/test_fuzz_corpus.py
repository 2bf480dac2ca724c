"""Replays every saved fuzz input (tests/fuzz/corpus/<target>/) through its
target once, so what the fuzzers found stays a regression test. A target
raises on a crash or on a mismatch with PyTorch / the safetensors library."""
from __future__ import annotations

import os
import sys

import pytest

FUZZ_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "fuzz")
sys.path.insert(0, FUZZ_DIR)
import targets  # noqa: E402 - tests/fuzz is put on the path just above

CORPUS = os.path.join(FUZZ_DIR, "corpus")


def _files(name: str) -> list:
    d = os.path.join(CORPUS, name)
    return sorted(os.listdir(d)) if os.path.isdir(d) else []


@pytest.mark.parametrize("name", sorted(targets.TARGETS))
def test_corpus_replays(name: str) -> None:
    files = _files(name)
    assert files, f"tests/fuzz/corpus/{name} is empty: run python tests/fuzz/run.py --write-seeds"
    for f in files:
        with open(os.path.join(CORPUS, name, f), "rb") as fh:
            data = fh.read()
        try:
            targets.TARGETS[name](data)
        except Exception as e:
            raise AssertionError(f"corpus/{name}/{f}: {type(e).__name__}: {e}") from e


@pytest.mark.parametrize("name", sorted(targets.TARGETS))
def test_seeds_are_saved(name: str) -> None:
    """The hand-made seeds are in the corpus (run.py --write-seeds puts them there)."""
    on_disk = set()
    for f in _files(name):
        with open(os.path.join(CORPUS, name, f), "rb") as fh:
            on_disk.add(fh.read())
    missing = [k for k, s in enumerate(targets.seeds()[name]) if s not in on_disk]
    assert not missing, f"seeds {missing} of {name} are not in tests/fuzz/corpus/{name}"

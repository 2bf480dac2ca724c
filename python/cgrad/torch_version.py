"""TorchVersion (as torch.torch_version.TorchVersion): a version string that
also compares, by PEP 440 rules, with other version strings, with tuples such
as (2, 13) and with packaging.version.Version objects. cgrad reports the
PyTorch release whose API it follows with it (cgrad.version.torch_api, and
torch.__version__ under cgrad.compat); the parser is cgrad's own, so no
packaging import is needed."""
from __future__ import annotations

import re
from typing import Any, Iterable, Optional, Tuple

__all__ = ["TorchVersion"]

_PEP440 = re.compile(
    r"""^\s*v?(?:(?P<epoch>\d+)!)?(?P<release>\d+(?:\.\d+)*)
    (?:[-_.]?(?P<pre_l>alpha|a|beta|b|preview|pre|c|rc)[-_.]?(?P<pre_n>\d+)?)?
    (?:-(?P<post_n1>\d+)|[-_.]?(?P<post_l>post|rev|r)[-_.]?(?P<post_n2>\d+)?)?
    (?:[-_.]?(?P<dev_l>dev)[-_.]?(?P<dev_n>\d+)?)?
    (?:\+(?P<local>[a-z0-9]+(?:[-_.][a-z0-9]+)*))?\s*$""", re.I | re.X)

_PRE_RANK = {"a": 0, "alpha": 0, "b": 1, "beta": 1, "c": 2, "rc": 2, "pre": 2, "preview": 2}
_LOW, _HIGH = (0,), (2,)  # stand-ins for -infinity / +infinity in the sort key


def _sort_key(text: str) -> Optional[Tuple[Any, ...]]:
    """The PEP 440 ordering key of `text`, or None when it is not a valid version."""
    m = _PEP440.match(text)
    if m is None:
        return None
    release = [int(p) for p in m.group("release").split(".")]
    while len(release) > 1 and release[-1] == 0:
        release.pop()
    pre_l, post_l = m.group("pre_l"), m.group("post_l")
    post_n = m.group("post_n1") or m.group("post_n2")
    has_post = post_l is not None or m.group("post_n1") is not None
    has_dev = m.group("dev_l") is not None
    if pre_l is not None:
        pre = (1, _PRE_RANK[pre_l.lower()], int(m.group("pre_n") or 0))
    elif has_dev and not has_post:
        pre = _LOW  # 1.0.dev1 sorts before 1.0a1
    else:
        pre = _HIGH
    post = (1, int(post_n or 0)) if has_post else _LOW
    dev = (1, int(m.group("dev_n") or 0)) if has_dev else _HIGH
    local: Tuple[Any, ...] = _LOW
    if m.group("local"):
        local = (1, tuple((1, int(s), "") if s.isdigit() else (0, 0, s.lower())
                          for s in re.split(r"[-_.]", m.group("local"))))
    return (int(m.group("epoch") or 0), tuple(release), pre, post, dev, local)


def _key_of(other: Any) -> Optional[Tuple[Any, ...]]:
    """The sort key of a comparand: a string, a tuple / list of parts, or a Version-like object."""
    if isinstance(other, str):
        return _sort_key(other)
    if hasattr(other, "release") and hasattr(other, "epoch"):  # packaging.version.Version
        return _sort_key(str(other))
    if isinstance(other, Iterable):
        return _sort_key(".".join(str(p) for p in other))
    return None


class TorchVersion(str):
    """A str that compares as a version: TorchVersion('2.13.0') >= (2, 1), > '2.13.0rc1', == '2.13'.
    Comparands that are not versions fall back to plain string comparison."""

    __slots__ = ()

    def _compare(self, other: Any, op: str) -> Any:
        mine, theirs = _sort_key(self), _key_of(other)
        if mine is None or theirs is None:
            return getattr(str, op)(self, other)
        return getattr(mine, op)(theirs)

    def __eq__(self, other: object) -> Any:
        return self._compare(other, "__eq__")

    def __ne__(self, other: object) -> Any:
        return self._compare(other, "__ne__")

    def __lt__(self, other: Any) -> Any:
        return self._compare(other, "__lt__")

    def __le__(self, other: Any) -> Any:
        return self._compare(other, "__le__")

    def __gt__(self, other: Any) -> Any:
        return self._compare(other, "__gt__")

    def __ge__(self, other: Any) -> Any:
        return self._compare(other, "__ge__")

    __hash__ = str.__hash__

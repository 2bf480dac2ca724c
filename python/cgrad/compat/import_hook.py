"""install_as_torch(): an import hook on sys.meta_path through which `import
torch` and every `import torch.X.Y` resolve to cgrad, so a PyTorch program runs
unmodified (Note [cgrad as torch]).

Note [cgrad as torch]
`torch` itself is a facade module: a copy of cgrad's namespace whose
__version__ (and torch.version.__version__, the one other facade) reports the
PyTorch release whose API cgrad follows (cgrad.version.torch_api), because
libraries compare torch.__version__ to choose code paths; cgrad.__version__
stays cgrad's own. Every other `torch.X.Y` is the very module object
`cgrad.X.Y` (registered in sys.modules under both names), so classes,
functions and isinstance checks are shared. The finder comes first on
sys.meta_path, so an installed PyTorch is never imported. A `torch.X` that
cgrad lacks is a ModuleNotFoundError naming it as a gap in cgrad's coverage;
a missing attribute of torch or of a module reached through it is an
AttributeError saying so (a module-level __getattr__, which also imports a
cgrad subpackage on first attribute access, as `torch.nn.parallel` works
without its own import in PyTorch). The loader hands the import system the
existing module and gives it its own __spec__ back afterwards (the import
system sets the alias's spec on it), so cgrad's relative imports and
`import cgrad.X` are unaffected. importlib.metadata also finds a `torch`
distribution of version torch_api through the same finder."""
from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.metadata
import importlib.util
import sys
import types
from typing import Any, Callable, Iterable, Optional, Sequence

__all__ = ["install_as_torch", "is_installed"]

_PREFIX = "torch"


def _torch_name(cgrad_name: str) -> str:
    return _PREFIX + cgrad_name[len("cgrad"):]


def _cgrad_name(torch_name: str) -> str:
    return "cgrad" + torch_name[len(_PREFIX):]


def _missing_attribute(owner: str, name: str) -> AttributeError:
    return AttributeError(f"module '{owner}' has no attribute '{name}': cgrad does not provide {owner}.{name} "
                          f"(a gap in cgrad's PyTorch coverage; cgrad stands in for torch here)")


def _make_getattr(module: types.ModuleType, torch_name: str,
                  fallback: Optional[types.ModuleType] = None) -> Callable[[str], Any]:
    """A module-level __getattr__ for `module` seen as `torch_name`: names added to `fallback` later,
    then a cgrad subpackage of that name (imported now), else an AttributeError naming the gap."""
    cgrad_name = _cgrad_name(torch_name)

    def __getattr__(name: str) -> Any:
        if name.startswith("__") and name.endswith("__"):
            raise AttributeError(f"module '{torch_name}' has no attribute '{name}'")
        if fallback is not None and name in vars(fallback):
            return vars(fallback)[name]
        if name.isidentifier() and hasattr(module, "__path__"):
            sub = f"{cgrad_name}.{name}"
            if sub in sys.modules or importlib.util.find_spec(sub) is not None:
                mod = importlib.import_module(sub)
                _alias(mod)
                return mod
        raise _missing_attribute(torch_name, name)

    return __getattr__


def _alias(module: types.ModuleType) -> types.ModuleType:
    """Register cgrad module `module` as its torch name too and give it the missing-attribute hook;
    returns what sys.modules holds under the torch name."""
    tname = _torch_name(module.__name__)
    held = sys.modules.get(tname)
    if held is not None:
        return held
    sys.modules[tname] = module
    if "__getattr__" not in vars(module):
        module.__getattr__ = _make_getattr(module, tname)  # type: ignore[method-assign]
    return module


def _facade(source: types.ModuleType, name: str, version: str) -> types.ModuleType:
    """A module named `name` holding a copy of `source`'s namespace with __version__ = version."""
    mod = types.ModuleType(name, source.__doc__)
    for k, v in vars(source).items():
        if not (k.startswith("__") and k.endswith("__")):
            setattr(mod, k, v)
    mod.__version__ = version  # type: ignore[attr-defined]
    mod.__file__ = getattr(source, "__file__", None)
    if hasattr(source, "__path__"):
        mod.__path__ = list(source.__path__)  # type: ignore[attr-defined]
    public = [k for k, v in vars(source).items() if not k.startswith("_") and not isinstance(v, types.ModuleType)]
    mod.__all__ = sorted(getattr(source, "__all__", public))  # type: ignore[attr-defined]
    mod.__getattr__ = _make_getattr(source, name, fallback=source)  # type: ignore[attr-defined]
    return mod


class _AliasLoader(importlib.abc.Loader):
    """Loads an alias by handing over an existing module object."""

    def __init__(self, module: types.ModuleType) -> None:
        self.module = module
        self.spec = getattr(module, "__spec__", None)

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        return self.module

    def exec_module(self, module: types.ModuleType) -> None:
        if self.spec is not None:
            module.__spec__ = self.spec  # the import system set the alias's spec; cgrad's own comes back


class _TorchDistribution(importlib.metadata.Distribution):
    """importlib.metadata's view of the stand-in: a `torch` distribution of version cgrad.version.torch_api."""

    def __init__(self, version: str) -> None:
        self._meta = f"Metadata-Version: 2.1\nName: torch\nVersion: {version}\nSummary: cgrad standing in for torch\n"

    def read_text(self, filename: str) -> Optional[str]:
        return self._meta if filename in ("METADATA", "PKG-INFO") else None

    def locate_file(self, path: Any) -> Any:
        import pathlib
        import cgrad
        return pathlib.Path(cgrad.__file__).parent / str(path)


class _TorchFinder(importlib.abc.MetaPathFinder):
    """Finds `torch` (the facade) and `torch.X.Y` (cgrad.X.Y) before any other finder."""

    def __init__(self, top: types.ModuleType, version_facade: types.ModuleType, api_version: str) -> None:
        self.top, self.version_facade, self.api_version = top, version_facade, api_version

    def find_spec(self, fullname: str, path: Optional[Sequence[str]] = None,
                  target: Optional[types.ModuleType] = None) -> Optional[importlib.machinery.ModuleSpec]:
        if fullname != _PREFIX and not fullname.startswith(_PREFIX + "."):
            return None
        if fullname == _PREFIX:
            return importlib.machinery.ModuleSpec(fullname, _AliasLoader(self.top), is_package=True)
        if fullname == _PREFIX + ".version":
            return importlib.machinery.ModuleSpec(fullname, _AliasLoader(self.version_facade))
        cname = _cgrad_name(fullname)
        if cname not in sys.modules and importlib.util.find_spec(cname) is None:
            raise ModuleNotFoundError(
                f"No module named '{fullname}': {fullname} is a gap in cgrad's PyTorch coverage (cgrad stands in "
                f"for torch here and has no {cname})", name=fullname)
        module = importlib.import_module(cname)
        if "__getattr__" not in vars(module):
            module.__getattr__ = _make_getattr(module, fullname)  # type: ignore[attr-defined]
        return importlib.machinery.ModuleSpec(fullname, _AliasLoader(module), is_package=hasattr(module, "__path__"))

    def find_distributions(self, context: Any = importlib.metadata.DistributionFinder.Context()
                           ) -> Iterable[importlib.metadata.Distribution]:
        name = getattr(context, "name", None)
        if name is None or name.lower().replace("-", "_") == _PREFIX:
            return [_TorchDistribution(self.api_version)]
        return []


def is_installed() -> bool:
    """True once install_as_torch() has run in this process."""
    return any(isinstance(f, _TorchFinder) for f in sys.meta_path)


def install_as_torch() -> None:
    """Make `import torch` and every `import torch.X` resolve to cgrad in this process, even where PyTorch
    is installed (Note [cgrad as torch]). Idempotent; refused (RuntimeError) when the real torch is imported
    already, since modules holding it could not be redirected."""
    if is_installed():
        return
    held = sys.modules.get(_PREFIX)
    if held is not None:
        raise RuntimeError("install_as_torch: the real torch is imported already (sys.modules['torch'] is "
                           f"{held!r}); call it before anything imports torch, or run the program under "
                           "`python -m cgrad.compat`")
    import cgrad
    from cgrad import version
    top = _facade(cgrad, _PREFIX, version.torch_api)
    vfacade = _facade(version, _PREFIX + ".version", version.torch_api)
    top.version = vfacade  # type: ignore[attr-defined]
    finder = _TorchFinder(top, vfacade, version.torch_api)
    sys.meta_path.insert(0, finder)
    top.__spec__ = importlib.machinery.ModuleSpec(_PREFIX, _AliasLoader(top), is_package=True)
    top.__loader__ = top.__spec__.loader
    top.__package__ = _PREFIX
    vfacade.__spec__ = importlib.machinery.ModuleSpec(_PREFIX + ".version", _AliasLoader(vfacade))
    vfacade.__loader__ = vfacade.__spec__.loader
    vfacade.__package__ = _PREFIX
    sys.modules[_PREFIX] = top
    sys.modules[_PREFIX + ".version"] = vfacade
    for name, mod in list(sys.modules.items()):
        if name.startswith("cgrad.") and isinstance(mod, types.ModuleType) and name != "cgrad.version":
            _alias(mod)


"""The launcher behind `python -m cgrad.compat`: installs the torch import hook,
then runs a script as `python script.py` would (as __main__, sys.argv set,
the script's folder first on sys.path), a module as `python -m module`, or a
string as `python -c code`."""
from __future__ import annotations

import os
import runpy
import sys
import types
from typing import List, Optional

from .import_hook import install_as_torch

USAGE = """usage: python -m cgrad.compat script.py [args...]
       python -m cgrad.compat -m module [args...]
       python -m cgrad.compat -c code [args...]

Runs a PyTorch program on cgrad: `import torch` and every `torch.*` import
resolve to cgrad (a torch.X that cgrad lacks is an ImportError naming it)."""


def main(argv: Optional[List[str]] = None) -> int:
    """Run the program named by argv (default sys.argv[1:]); returns the exit status for usage errors,
    0 after the program finished (its own sys.exit passes through as SystemExit)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(USAGE, file=sys.stdout if args else sys.stderr)
        return 0 if args else 2
    mode = args[0]
    if mode in ("-m", "-c") and len(args) < 2:
        print(f"cgrad.compat: argument expected for the {mode} option\n\n{USAGE}", file=sys.stderr)
        return 2
    if mode.startswith("-") and mode not in ("-m", "-c"):
        print(f"cgrad.compat: unknown option {mode}\n\n{USAGE}", file=sys.stderr)
        return 2
    install_as_torch()
    if mode == "-m":
        sys.argv = [args[1]] + args[2:]  # runpy puts the module's path in argv[0]
        runpy.run_module(args[1], run_name="__main__", alter_sys=True)
    elif mode == "-c":
        sys.argv = ["-c"] + args[2:]
        main_module = types.ModuleType("__main__")
        main_module.__builtins__ = __builtins__  # type: ignore[attr-defined]
        sys.modules["__main__"] = main_module
        exec(compile(args[1], "<string>", "exec"), vars(main_module))  # noqa: S102 - the user's -c program
    else:
        script = args[0]
        if not os.path.exists(script):
            print(f"cgrad.compat: can't open file {os.path.abspath(script)!r}: no such file", file=sys.stderr)
            return 2
        sys.argv = args
        directory = os.path.dirname(os.path.abspath(script))
        if sys.path and sys.path[0] in ("", os.getcwd()):
            sys.path[0] = directory
        else:
            sys.path.insert(0, directory)
        runpy.run_path(script, run_name="__main__")
    return 0

"""`python -m cgrad --cflags --libs`: the compiler and linker flags for a C program or
extension that uses this package's engine (like pkg-config); `--version` prints the release."""
from __future__ import annotations

import argparse
import sys
from typing import List, Optional


def main(argv: Optional[List[str]] = None) -> int:
    p = argparse.ArgumentParser(prog="python -m cgrad", description=__doc__.split("\n")[0])
    p.add_argument("--cflags", action="store_true", help="the compiler flags (-I for cgrad.h)")
    p.add_argument("--libs", action="store_true", help="the linker flags (-L, run path, -lcgrad and the BLAS)")
    p.add_argument("--version", action="store_true", help="the release of this cgrad")
    args = p.parse_args(argv)
    from . import _c_library, version
    out: List[str] = []
    if args.version:
        out.append(version.__version__)
    if args.cflags:
        out += _c_library.compile_flags()
    if args.libs:
        out += _c_library.link_flags()
    if not out:
        p.print_usage(sys.stderr)
        return 2
    print(" ".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())

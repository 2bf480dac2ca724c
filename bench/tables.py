"""Tables of results, one per suite and thread setting, built from the JSON form of the
cases (record.Case.to_dict) so the child processes and the parent print the same thing:
case | unit | cgrad | PyTorch | NumPy | C limit | cgrad/PyTorch | cgrad/NumPy | of C limit |
target | met, leaving out the columns no case of the suite has."""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence

from bench.record import LIBRARIES, TITLES

TIME_SCALES = {"us": 1e6, "ms": 1e3, "s": 1.0}
UNIT_TITLES = {"us": "µs"}
RATIO_NOTE = ("cgrad/X: cgrad's time (or memory) / X's, from medians — below 1 cgrad is ahead; "
              "of C limit: cgrad's best repeat's throughput / the C code's best repeat's.")


def _best(result: dict) -> float:
    return result["min"] if result["library"] == "native" else result["median"]


def cell_value(result: dict, show: str) -> float:
    """What a cell shows for `show` (a time unit, the measured unit, or a derived key)."""
    if show in TIME_SCALES:
        return _best(result) * TIME_SCALES[show]
    if show == result["unit"]:
        return _best(result)
    return result["derived"][show]


def fmt_number(v: Optional[float]) -> str:
    if v is None or v != v:
        return "—"
    a = abs(v)
    if a >= 100:
        return f"{v:.0f}"
    if a >= 10:
        return f"{v:.1f}"
    if a >= 1:
        return f"{v:.2f}"
    return f"{v:.3g}"


def fmt_cell(result: Optional[dict], show: str) -> str:
    if result is None:
        return ""
    text = fmt_number(cell_value(result, show))
    if result["repeats"] > 1 and result["library"] != "native" and result["median"] > 0:
        spread = (result["max"] - result["min"]) / 2 / result["median"]
        text += f" ±{spread:.0%}" if spread < 1 else " ±>100%"
    return text


def fmt_ratio(v: Optional[float]) -> str:
    if v is None:
        return ""
    return f"{v:.3f}" if v < 0.1 else f"{v:.2f}"


def fmt_met(met: Optional[bool]) -> str:
    return {True: "yes", False: "NO", None: ""}[met]


def rows(cases: Sequence[dict]) -> List[Dict[str, str]]:
    """One dict per case, keyed by column title, and the header as the first row."""
    libs = [lib for lib in LIBRARIES if any(lib in c["results"] for c in cases)]
    columns = ["case", "unit"] + [TITLES[lib] for lib in libs]
    if "torch" in libs:
        columns.append("cgrad/PyTorch")
    if "numpy" in libs:
        columns.append("cgrad/NumPy")
    if "native" in libs:
        columns.append("of C limit")
    if any(c["target"] for c in cases):
        columns += ["target", "met"]
    table = [{col: col for col in columns}]
    for c in cases:
        row = {"case": c["case"], "unit": UNIT_TITLES.get(c["show"], c["show"])}
        for lib in libs:
            row[TITLES[lib]] = fmt_cell(c["results"].get(lib), c["show"])
        row["cgrad/PyTorch"] = fmt_ratio(c["ratio_torch"])
        row["cgrad/NumPy"] = fmt_ratio(c["ratio_numpy"])
        row["of C limit"] = "" if c["limit_fraction"] is None else f"{c['limit_fraction']:.0%}"
        row["target"] = c["target"] or ""
        row["met"] = fmt_met(c["met"])
        table.append({col: row[col] for col in columns})
    return table


def text_table(cases: Sequence[dict]) -> str:
    """An aligned plain-text table (case left-aligned, figures right-aligned)."""
    table = rows(cases)
    columns = list(table[0])
    widths = {col: max(len(r[col]) for r in table) for col in columns}
    lines = []
    for i, r in enumerate(table):
        cells = [r[col].ljust(widths[col]) if col in ("case", "unit", "target") else r[col].rjust(widths[col])
                 for col in columns]
        lines.append("  ".join(cells).rstrip())
        if i == 0:
            lines.append("  ".join("-" * widths[col] for col in columns))
    return "\n".join(lines)


def markdown_table(cases: Sequence[dict]) -> str:
    table = rows(cases)
    columns = list(table[0])
    align = ["---" if col in ("case", "unit", "target", "met") else "---:" for col in columns]
    lines = ["| " + " | ".join(table[0][col] for col in columns) + " |", "|" + "|".join(align) + "|"]
    for r in table[1:]:
        lines.append("| " + " | ".join(r[col].replace("|", "\\|") for col in columns) + " |")
    return "\n".join(lines)


def threads_line(in_effect: Dict[str, object]) -> str:
    return ", ".join(f"{k} {v}" for k, v in in_effect.items())

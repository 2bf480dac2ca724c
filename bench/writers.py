"""Output files: the run as JSON, the same as Markdown (machine description, then one table
per suite and thread setting), and the README section between the bench markers."""
from __future__ import annotations

import json
import os
from typing import List

from bench import suites, tables

README_BEGIN = "<!-- bench:begin -->"
README_END = "<!-- bench:end -->"
SCHEMA_VERSION = 1


def write_json(run: dict, path: str) -> None:
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        json.dump(run, f, indent=1, ensure_ascii=False)
        f.write("\n")


def markdown(run: dict, level: int = 1) -> str:
    """The run as Markdown; `level` is the heading level of the title."""
    h = "#" * level
    lines: List[str] = [f"{h} cgrad benchmarks", ""]
    lines.append(f"`{run['command']}` — {run['created']}, {run['elapsed_s'] / 60:.1f} min"
                 + (" (quick mode)" if run["quick"] else "") + ".")
    lines += ["", f"{h}# Machine", ""]
    machine = run["settings"][0]["machine"] if run["settings"] else {}
    lines += [f"- {key}: {value}" for key, value in machine.items()]
    for s in run["settings"]:
        lines.append(f"- {s['label']}: {tables.threads_line(s['threads_in_effect'])}")
    lines += ["", tables.RATIO_NOTE]
    for name in run["suites"]:
        suite = suites.get(name)
        lines += ["", f"{h}# {suite.TITLE}", "", f"{suite.ABOUT}."]
        for s in run["settings"]:
            cases = [c for c in s["cases"] if c["suite"] == name]
            errors = [e for e in s["errors"] if e["suite"] == name]
            info = next((x for x in s["suites"] if x["name"] == name), None)
            when = (f" ({info['elapsed_s']:.0f} s, 1-min load average {info['load_avg'][0]:.1f} -> "
                    f"{info['load_avg'][1]:.1f})") if info else ""
            lines += ["", f"{h}## {s['label']}{when}", ""]
            if cases:
                lines.append(tables.markdown_table(cases))
            elif errors:
                lines.append(f"Failed: `{errors[0]['error'].strip().splitlines()[-1]}`")
            else:
                lines.append("Skipped (see the run's output).")
    return "\n".join(lines) + "\n"


def write_markdown(run: dict, path: str) -> None:
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(markdown(run))


def update_readme(run: dict, path: str) -> None:
    """Replaces what lies between the bench markers with the run's Markdown (headings
    from level 3, inside the README's `## Performance` section)."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    begin, end = text.find(README_BEGIN), text.find(README_END)
    if begin < 0 or end < begin:
        raise ValueError(f"{path}: markers {README_BEGIN} ... {README_END} not found")
    body = markdown(run, level=3)
    text = text[:begin + len(README_BEGIN)] + "\n" + body + text[end:]
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)

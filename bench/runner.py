"""Runs suites under one thread setting inside this process (the child side of the CLI):
imports the libraries with the setting, runs each suite, prints its table as soon as it
is done, and returns the setting's JSON form (machine, threads in effect, cases, errors)."""
from __future__ import annotations

import os
import sys
import time
import traceback
from typing import Optional, Sequence

from bench import libs as libs_mod
from bench import machine, suites, tables
from bench import threads as threads_mod
from bench.context import Context
from bench.harness import Settings


def run_setting(names: Sequence[str], threads: Optional[int], quick: bool,
                settings: Optional[Settings] = None, out=sys.stdout) -> dict:
    libs = libs_mod.load(threads)
    if settings is None:
        settings = Settings.quick() if quick else Settings()
    ctx = Context(libs, settings, quick)
    in_effect = threads_mod.in_effect(libs)
    label = threads_mod.label(threads)
    load, cores = os.getloadavg()[0], os.cpu_count() or 1
    if load > cores / 2:
        print(f"  warning: 1-min load average {load:.1f} on {cores} cores before the run: other processes "
              "share the cores, so the figures (multi-threaded ones most) will be noisy", file=out)
    if libs.native is None:
        print("  note: build/libbench_native.so is missing (run `ninja -C build`): no C limits", file=out)
    setting = {"threads": threads, "label": label, "threads_in_effect": in_effect,
               "machine": machine.describe(libs), "load_avg_start": round(load, 2),
               "suites": [], "cases": [], "errors": []}
    start = time.perf_counter()
    for name in names:
        suite = suites.get(name)
        t0 = time.perf_counter()
        load_before = os.getloadavg()[0]
        try:
            cases = [c.to_dict() for c in suite.run(ctx)]
        except Exception:
            message = traceback.format_exc()
            setting["errors"].append({"suite": name, "error": message})
            print(f"\n== {suite.TITLE} [{label}]: FAILED\n{message}", file=out, flush=True)
            continue
        elapsed = time.perf_counter() - t0
        # The 1-minute load average before and after: above ~1 on top of our own threads,
        # other processes shared the cores and the figures are noisier.
        load = [round(load_before, 2), round(os.getloadavg()[0], 2)]
        setting["suites"].append({"name": name, "elapsed_s": elapsed, "load_avg": load})
        setting["cases"].extend(cases)
        if cases:
            print(f"\n== {suite.TITLE} [{label}: {tables.threads_line(in_effect)}] "
                  f"({elapsed:.0f} s, load average {load[0]:.1f} -> {load[1]:.1f})", file=out)
            print(f"   {suite.ABOUT}", file=out)
            print(tables.text_table(cases), file=out, flush=True)
    setting["elapsed_s"] = time.perf_counter() - start
    return setting

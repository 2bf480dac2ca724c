"""cgrad's benchmarks, side by side with PyTorch and NumPy in one process (`make bench`,
`python -m bench --help`). Layout: harness.py (timing), record.py (results, targets),
tables.py / writers.py (output), machine.py (the machine description), threads.py /
libs.py / native_lib.py (thread settings, the libraries, the C limits of native/),
context.py / models.py (what suites share), runner.py / cli.py / memory_child.py
(processes), suites/ (one file per suite)."""

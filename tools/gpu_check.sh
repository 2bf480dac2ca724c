#!/usr/bin/env bash
# tools/gpu_check.sh — the GPU check, one prepared run on a machine with an
# NVIDIA GPU (docs/engine.md, "CUDA"): builds cgrad there with the CUDA kernel
# library (-Dgpu=enabled), runs the CUDA C tests (every op table row, the
# reductions, the products, softmax, casts, memory) and the CUDA pytest files
# (every op of tests/python/opinfo on cuda against the CPU, the cgrad.cuda
# namespace, a model trained on cuda), then the CUDA benchmark against
# PyTorch CUDA where the machine has it. Writes $OUT/gpu_check.log (everything)
# and $OUT/summary.txt (one line per step, with its closing counts).
#
# The machine has no network: tools/gpu_carry.sh prepares gpu-carry/ here
# (wheels and Debian packages), which travels with the tree. Each step has a
# time limit so the whole run stays inside 8 minutes.
#   device run:  bash tools/gpu_check.sh      (carry: ["gpu-carry"])
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/gpu_check}
mkdir -p "$OUT"
LOG=$OUT/gpu_check.log
SUM=$OUT/summary.txt
: >"$LOG"
: >"$SUM"
T0=$(date +%s)
PY=${GPU_PYTHON:-}
[ -n "$PY" ] || for p in /opt/torch/.venv/bin/python3 python3; do command -v "$p" >/dev/null && PY=$p && break; done

note() { echo "$*" | tee -a "$SUM" >>"$LOG"; }
# step NAME LIMIT_S CMD...: runs CMD with output to the log; the summary gets the status, the time and
# the lines that close a test run ("N passed, M failed", pytest's last line)
step() {
    local name=$1 limit=$2 t=$(date +%s) rc
    shift 2
    echo "==== $name: $*" >>"$LOG"
    timeout "$limit" "$@" >"$OUT/.step" 2>&1
    rc=$?
    cat "$OUT/.step" >>"$LOG"
    local tail
    tail=$(grep -E '^[0-9]+ passed, [0-9]+ failed$|^=+ .*(passed|failed|skipped|error).* =+$|^(cuda|cgrad).*ratio|TFLOP|GB/s' "$OUT/.step" | tail -8 | tr '\n' ';')
    note "$name: rc=$rc ($(($(date +%s) - t)) s) $tail"
    rm -f "$OUT/.step"
    return $rc
}

note "gpu_check $(git rev-parse --short HEAD 2>/dev/null) $(date -u +%FT%TZ)"
note "$(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 | head -1)"
note "nvcc: $(nvcc --version 2>/dev/null | tail -2 | head -1); python: $($PY --version 2>&1)"

# Debian packages the image lacks (cJSON, pkg-config): unpacked into / as the device notes advise for
# plain libraries; ldconfig makes libcjson visible
if ! pkg-config --exists libcjson 2>/dev/null; then
    for f in gpu-carry/debs/*.deb; do [ -f "$f" ] && dpkg -x "$f" / >>"$LOG" 2>&1; done
    ldconfig 2>>"$LOG"
fi
pkg-config --exists libcjson || note "libcjson is still missing (run tools/gpu_carry.sh and carry gpu-carry)"

# a virtualenv over the image's Python (its numpy, pytest, torch stay visible) with the carried wheels
VENV=.venv-gpu
step venv 120 bash -c "rm -rf $VENV && $PY -m venv --system-site-packages $VENV && \
  $VENV/bin/python -m pip install -q --no-index --find-links gpu-carry/wheels 'meson>=1.1' 'meson-python>=0.15' \
  'scipy-openblas32>=0.3.29'" || { note "ABORT: no build environment"; exit 1; }

# the build: the package (editable, in build-gpu) with the CUDA kernel library required
step build 300 $VENV/bin/python -m pip install -q --no-index --no-build-isolation --no-deps \
  --config-settings=builddir=build-gpu --config-settings=setup-args=-Dgpu=enabled -e . \
  || { tail -60 "$LOG" >"$OUT/build_tail.txt"; note "ABORT: the build failed (build_tail.txt)"; exit 1; }
ls -la build-gpu/libcgrad_cuda.so >>"$LOG" 2>&1

# CUDA libraries from the image's NVIDIA wheels (cuBLAS): blas.cu loads them by name
CUBLAS_DIR=$($VENV/bin/python -c 'import nvidia.cublas, os; print(os.path.join(list(nvidia.cublas.__path__)[0], "lib"))' 2>/dev/null)
[ -n "$CUBLAS_DIR" ] && export CGRAD_CUBLAS_DIR=$CUBLAS_DIR LD_LIBRARY_PATH=$CUBLAS_DIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
note "cuBLAS from: ${CUBLAS_DIR:-the dynamic loader path}"

step c-tests 120 build-gpu/cgrad_tests cuda
step pytest-cuda 240 $VENV/bin/python -m pytest -q -rs -p no:cacheprovider tests/python/test_cuda.py \
  tests/python/test_cuda_ops.py
# what is not on cuda yet: the skip reasons of the op cases, counted
grep -E '^SKIPPED .*not on cuda yet' "$LOG" | sed 's/^SKIPPED \[\([0-9]*\)\] [^:]*:[0-9]*: not on cuda yet: /\1 /' \
  | sort -k2 | head -200 >"$OUT/not_on_cuda.txt"
[ -f bench/cuda_bench.py ] && step bench 90 $VENV/bin/python bench/cuda_bench.py
note "total $(($(date +%s) - T0)) s"

#!/usr/bin/env bash
# tools/gpu_carry.sh — prepares gpu-carry/ (git-ignored), what tools/gpu_check.sh
# needs on a GPU machine that has no network: the Python wheels its image lacks
# (meson-python and its dependencies, meson, scipy-openblas32) for its Python
# (3.12 by default: GPU_PY=3.x to change), and the Debian packages of cJSON and
# pkg-config. Run it here, where PyPI and Debian are reachable, then hand
# gpu-carry to the GPU machine with the tree (the device tool's `carry`).
set -euo pipefail
cd "$(dirname "$0")/.."
PYV=${GPU_PY:-3.12}
PIP=${PIP:-.venv/bin/python -m pip}
rm -rf gpu-carry && mkdir -p gpu-carry/wheels gpu-carry/debs
$PIP download -q --disable-pip-version-check --only-binary=:all: --python-version "$PYV" \
  --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64 \
  --platform any -d gpu-carry/wheels 'meson>=1.1' 'meson-python>=0.15' 'pyproject-metadata' 'packaging' \
  'scipy-openblas32>=0.3.29'
(cd gpu-carry/debs && apt-get download -q libcjson1 libcjson-dev pkgconf pkgconf-bin libpkgconf3 pkg-config >/dev/null)
du -sh gpu-carry

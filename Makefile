# Makefile — the project's entry points. Every target builds what it needs in
# this checkout (a virtualenv in .venv for the build tools, build dirs under
# build*/) and installs missing Debian packages when running as root.
#   make test        build the engine, run the C tests, install the Python
#                    package into .venv (with PyTorch as the test oracle) and run pytest
#   make test-asan   the C tests built with AddressSanitizer + UBSan
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
DEB_PACKAGES := libopenblas-dev pkg-config gcc
DATA_PACKAGES := dataset-fashion-mnist

.PHONY: all deps data data-if-possible build test test-c test-py py-install test-asan example-c demo bench clean

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

# Debian packages (OpenBLAS headers + library, pkg-config, gcc).
deps: $(VENV)/.deps-ok
$(VENV)/.deps-ok:
	$(call apt_ensure,$(DEB_PACKAGES),exit 1)
	@test -x $(VBIN)/python || $(PYTHON) -m venv $(VENV)
	$(VBIN)/python -m pip install -q --disable-pip-version-check 'meson>=1.1' 'meson-python>=0.15' ninja
	@touch $@

build/build.ninja: | deps
	$(MESON) setup build --buildtype=release

build: deps build/build.ninja
	$(NINJA) -C build

test: test-c test-py

test-c: build
	./build/cgrad_tests

# The package, editable (rebuilt on import when sources change) in build-py/,
# with the test extra (pytest, numpy, torch==2.13.0).
py-install: $(VENV)/.py-ok
$(VENV)/.py-ok: $(VENV)/.deps-ok pyproject.toml
	$(VBIN)/python -m pip install -q --disable-pip-version-check --no-build-isolation \
	  --config-settings=builddir=build-py -e '.[test]'
	@touch $@

test-py: py-install data-if-possible
	$(VBIN)/python -m pytest -q tests/python

# The Fashion-MNIST files (Debian package dataset-fashion-mnist). The demo needs
# them; the tests use them when they can be installed and skip the
# integration test otherwise.
data:
	$(call apt_ensure,$(DATA_PACKAGES),exit 1)

data-if-possible:
	$(call apt_ensure,$(DATA_PACKAGES),true)

build-asan/build.ninja: | deps
	$(MESON) setup build-asan --buildtype=debug -Db_sanitize=address,undefined -Db_lundef=false -Dpython=false

test-asan: deps build-asan/build.ninja
	$(NINJA) -C build-asan
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:allocator_may_return_null=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  LSAN_OPTIONS=suppressions=$(CURDIR)/tests/c/lsan.supp ./build-asan/cgrad_tests

example-c: build
	./build/mlp_example

demo: py-install data
	$(VBIN)/python -m cgrad.examples.fashion_mnist

# Both thread settings, each in its own process; results in bench/results/latest.{json,md}.
# Without the dataset (and not root) the main-job suite is skipped with a line saying so.
THREADS ?= 1
bench: py-install build data-if-possible
	$(VBIN)/python -m bench $(if $(SUITE),--suite $(SUITE)) --threads default $(THREADS)

clean:
	rm -rf build build-asan build-py

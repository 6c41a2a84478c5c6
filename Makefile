# ICLR 2026 in Miniature. `make book` builds the book; `make test` runs every test. Both set up their environment.
PYTHON  ?= python3
VENV    := .venv
PY      := $(VENV)/bin/python
SCALE   ?= ci
JOBS    ?= 2
BUILD   := $(PY) -m repro.book build --scale $(SCALE) --jobs $(JOBS)
# The executed notebooks are re-run by nbval; progress bars stay silent there as in the build.
export REPRO_BUILD := 1
# Bytecode is compiled when a module is first imported and kept under _build/pycache, for every process make starts
# (kernels included), never beside the sources: compiling only what the book imports costs about 7 s once, against
# about 35 s to compile every installed package up front (issue 43).
unexport PYTHONDONTWRITEBYTECODE
export PYTHONPYCACHEPREFIX := $(CURDIR)/_build/pycache

.PHONY: book chapter pdf test unit nbval nbval-and-pdf booktests env lab clean help

help:
	@echo "make book [SCALE=ci|full] [JOBS=N]   build the book into _build/html"
	@echo "make chapter C=<slug> [SCALE=...]    execute one chapter, render the book"
	@echo "make test                            unit tests, build at ci, the PDF, nbval, book tests"
	@echo "make pdf                             the book as one PDF, _build/latex/book.pdf (needs TeX, see README)"
	@echo "make lab [LAB_PORT=8888]             JupyterLab: every chapter's .md opens as a notebook"
	@echo "make clean                           remove _build, .venv and node_modules"

# The virtual environment is rebuilt whenever the lock file or the package metadata changes. uv installs the lock
# (the same packages pip would, in parallel; bytecode is left to first import, see PYTHONPYCACHEPREFIX above); it
# honours pip's find-links (a machine's local wheels, such as a CPU build of torch) through UV_FIND_LINKS.
UV_VERSION := 0.13.10
ifndef UV_FIND_LINKS
UV_FIND_LINKS := $(or $(PIP_FIND_LINKS),$(shell $(PYTHON) -m pip config get global.find-links 2>/dev/null))
endif
export UV_FIND_LINKS
$(VENV)/.stamp: requirements.lock pyproject.toml
	rm -rf $(VENV)
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip uv==$(UV_VERSION)
	$(VENV)/bin/uv pip install --quiet --python $(PY) -r requirements.lock
	$(PY) -m pip install --quiet --no-deps --no-build-isolation -e .
	touch $@

node_modules/.stamp: package-lock.json
	npm ci --no-audit --no-fund --loglevel=error
	touch $@

env: $(VENV)/.stamp node_modules/.stamp

book: env
	$(BUILD)

chapter: env
	@test -n "$(C)" || (echo "usage: make chapter C=<slug>  (slugs: ls chapters)"; exit 2)
	$(BUILD) --only $(C)

# The whole book as one PDF, from the executed notebooks of the last build (TeX from Debian: see .ci/run).
pdf: book
	$(PY) -m repro.book pdf

# JupyterLab from the lock. jupytext opens each chapter's .md as a notebook (lab/overrides.json makes that the default
# viewer) on the kernel of .venv, which imports repro. It listens on localhost, with Jupyter's token in its log.
LAB_PORT ?= 8888
LAB_ARGS ?= --ServerApp.ip=127.0.0.1
lab: env
	$(PY) -m jupyter lab --ServerApp.root_dir=$(CURDIR) --ServerApp.port=$(LAB_PORT) \
	  --LabApp.app_settings_dir=$(CURDIR)/lab $(LAB_ARGS)

# Every pytest stage runs on JOBS workers (pytest-xdist), each worker (and each notebook kernel under nbval) on one
# thread as in the build: two torch processes with two threads each on two cores spin against each other and run
# several times slower. Idle OpenMP threads sleep rather than spin (repro.book.execute.PASSIVE_WAIT says why). Each
# stage ends with its slowest tests.
ONE_THREAD := OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 NUMEXPR_NUM_THREADS=1 REPRO_THREADS=1 \
              OMP_WAIT_POLICY=PASSIVE
PYTEST  := $(ONE_THREAD) $(PY) -m pytest -q -n $(JOBS) --durations=30

# The fast unit tests; the end-to-end machinery tests (marked slow) run in booktests.
unit: env
	$(PYTEST) -m "not slow" tests/unit

# nbval re-runs every executed notebook and compares the cells tagged nbval-check-output; each notebook runs whole,
# in order, on one worker (--dist loadfile).
nbval: env
	$(PYTEST) --dist loadfile --nbval-lax --nbval-current-env _build/executed

# The book tests (claims, structure, the rendered site, the PDF) and the slow unit tests, beside each other.
booktests: env
	$(PYTEST) --dist loadfile -m "slow or book" tests/book tests/unit

# Each stage prints its seconds (`== unit took 95 s`), so a log says where the time went.
define stage
@start=$$(date +%s); $(2); status=$$?; echo "== $(1) took $$(( $$(date +%s) - start )) s"; exit $$status
endef

# The PDF is one xelatex process at a time: it is made beside nbval, its log kept in _build/pdf.log and printed after.
nbval-and-pdf: env
	@$(PY) -m repro.book pdf > _build/pdf.log 2>&1 & pdf=$$!; \
	$(MAKE) --no-print-directory nbval; nbval=$$?; \
	wait $$pdf; made=$$?; cat _build/pdf.log; echo "== the PDF (made beside nbval) exited with status $$made"; \
	test $$nbval -eq 0 && test $$made -eq 0

test: env
	$(call stage,unit,$(MAKE) --no-print-directory unit)
	$(call stage,build,$(BUILD))
	$(call stage,nbval and pdf,$(MAKE) --no-print-directory nbval-and-pdf)
	$(call stage,booktests,$(MAKE) --no-print-directory booktests)

clean:
	rm -rf _build $(VENV) node_modules

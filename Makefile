# The README's two commands: `make demo` and `make test`. Both set up .venv on a fresh machine.
SHELL := /bin/bash
# PYTHON: an interpreter >= 3.12 to build .venv with (default: scripts/find_python.sh searches)
PYTHON ?=
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# strands-robots 0.5.3 (the other distribution of `strands_robots`) in its own venv, for the
# live round-trip tests in tests/interop/test_live_upstream.py (they skip without it)
UPSTREAM := .venv-upstream
UPSTREAM_STAMP := $(UPSTREAM)/.installed
# lerobot 0.6.1 (its dataset extra) in its own venv, for the tests that read or write LeRobot's
# own files with LeRobot's own code (tests/lerobot_env.py runs code there; they skip without it).
# transformers and pydantic: SARM's annotation module (load_annotations_from_dataset) imports
# them at import. It pulls torch from PyPI, a CUDA build: 5.5 GB, 5 minutes on a quiet machine
# (18 with three other installs running).
LEROBOT := .venv-lerobot
LEROBOT_STAMP := $(LEROBOT)/.installed
export AWS_EC2_METADATA_DISABLED := true

.PHONY: demo test lint typecheck venv clean

venv: $(STAMP)

# A .venv whose interpreter is missing or older than 3.12 (e.g. left by PYTHON=python3.11) is
# rebuilt; a .venv created here whose install fails is removed, so no later run reuses it.
$(STAMP): pyproject.toml
	@python=$$(PYTHON='$(PYTHON)' scripts/find_python.sh) || exit 1; \
	if [ -e $(VENV) ] && ! scripts/find_python.sh --ok $(PY); then \
	  echo "$(VENV) does not run Python >= 3.12: rebuilding it with $$python"; rm -rf $(VENV); fi; \
	fresh=; if [ ! -x $(PY) ]; then "$$python" -m venv $(VENV) || { rm -rf $(VENV); exit 1; }; fresh=1; fi; \
	{ $(PY) -m pip install -q --upgrade pip && $(PY) -m pip install -q -e '.[dev,web,ray]'; } || { \
	  if [ -n "$$fresh" ]; then rm -rf $(VENV); echo "install failed: removed the new $(VENV)" >&2; fi; exit 1; }
	@touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/python examples/demo.py

$(UPSTREAM_STAMP):
	@python=$$(PYTHON='$(PYTHON)' scripts/find_python.sh) || exit 1; \
	{ "$$python" -m venv $(UPSTREAM) && $(UPSTREAM)/bin/python -m pip install -q 'strands-robots==0.5.3' \
	  && touch $(UPSTREAM_STAMP); } || { rm -rf $(UPSTREAM); \
	  echo "warning: strands-robots 0.5.3 could not be installed; its round-trip tests will be skipped" >&2; }

$(LEROBOT_STAMP):
	@python=$$(PYTHON='$(PYTHON)' scripts/find_python.sh) || exit 1; \
	{ "$$python" -m venv $(LEROBOT) && $(LEROBOT)/bin/python -m pip install -q 'lerobot[dataset,transformers-dep]==0.6.1' \
	  'pydantic>=2,<3' \
	  && touch $(LEROBOT_STAMP); } || { rm -rf $(LEROBOT); \
	  echo "warning: lerobot 0.6.1 could not be installed; the lerobot round-trip tests will be skipped" >&2; }

test: $(STAMP) $(UPSTREAM_STAMP) $(LEROBOT_STAMP)
	$(VENV)/bin/python -m pytest -q

lint: $(STAMP)
	$(VENV)/bin/ruff check strands_robots tests examples benchmarks
	$(VENV)/bin/ruff format --check strands_robots tests examples benchmarks

typecheck: $(STAMP)
	$(VENV)/bin/mypy strands_robots

clean:
	rm -rf $(VENV) $(UPSTREAM) $(LEROBOT) build *.egg-info

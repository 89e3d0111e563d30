# The README's two commands: `make demo` and `make test`. Both set up .venv on a fresh machine.
SHELL := /bin/bash
PYTHON ?= $(shell scripts/find_python.sh)
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
export AWS_EC2_METADATA_DISABLED := true

.PHONY: demo test lint typecheck venv clean

venv: $(STAMP)

$(STAMP): pyproject.toml
	@test -n "$(PYTHON)" || { echo "No Python >= 3.12: see the message above."; exit 1; }
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev,web,ray]'
	@touch $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/python examples/demo.py

test: $(STAMP)
	$(VENV)/bin/python -m pytest -q

lint: $(STAMP)
	$(VENV)/bin/ruff check strands_robots tests examples benchmarks
	$(VENV)/bin/ruff format --check strands_robots tests examples benchmarks

typecheck: $(STAMP)
	$(VENV)/bin/mypy strands_robots

clean:
	rm -rf $(VENV) build *.egg-info

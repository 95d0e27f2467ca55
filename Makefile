# Visage: `make run` starts everything on this machine; `make test` runs the whole suite.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run test lint bench clean-data

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	@$(PY) -c "from swap.runtime import onnxruntime_install_problem as p; m = p(); print(m) if m else None"
	touch $(STAMP)

run: $(STAMP)
	$(PY) manage.py visage_run

test: $(STAMP)
	$(VENV)/bin/lint-imports
	$(PY) -m pytest

lint: $(STAMP)
	$(VENV)/bin/ruff check .

bench: $(STAMP)
	$(PY) bench/engine.py
	$(PY) bench/moderation.py

clean-data:
	rm -rf var/

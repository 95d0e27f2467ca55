# Visage: `make run` starts everything on this machine; `make test` runs the whole suite.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

TRITON_VENV ?= var/triton-venv

.PHONY: run test lint bench clean-data triton-venv serve-triton bench-triton

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	@$(PY) -c "from swap.runtime import onnxruntime_install_problem as p; m = p(); print(m) if m else None"
	touch $(STAMP)

# `make run INFERENCE=triton`: Triton (own venv) serves the models; workers are its clients.
run: $(STAMP)
ifeq ($(INFERENCE),triton)
	$(MAKE) triton-venv
	$(PY) -m swap serve --venv $(TRITON_VENV) & trap 'kill $$!' EXIT; \
		VISAGE_INFERENCE=triton $(PY) manage.py visage_run
else
	$(PY) manage.py visage_run
endif

# Triton's own venv from Debian's /usr/bin/python3 (PyTriton's stub needs it), ~4 min the first time.
triton-venv: $(TRITON_VENV)/.installed
$(TRITON_VENV)/.installed: $(STAMP)
	$(PY) -m swap serve --setup --venv $(TRITON_VENV)
	touch $@

serve-triton: $(STAMP) triton-venv
	$(PY) -m swap serve --venv $(TRITON_VENV)

bench-triton: $(STAMP) triton-venv
	$(PY) bench/triton.py --venv $(TRITON_VENV)

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

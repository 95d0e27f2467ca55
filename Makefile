# Visage: `make run` starts everything on this machine; `make test` runs the whole suite.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

TRITON_VENV ?= var/triton-venv

.PHONY: run test lint bench clean-data triton-venv serve-triton bench-triton messages

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[all,test]'
	# MediaPipe's face detector and mesh, from the pinned mediapipe wheel (SHA-256 checked): at install
	# time like any wheel, never at job or test time.
	$(PY) -m swap models fetch mediapipe-face --models-dir var/models
	@$(PY) -c "from swap.inference.sessions import onnxruntime_install_problem as p; m = p(); print(m) if m else None"
	touch $(STAMP)

# `make run INFERENCE=triton`: visage_run starts Triton (own venv) on free ports and supervises it;
# the workers are its clients. With no model installed it says so and runs local inference.
run: $(STAMP)
ifeq ($(INFERENCE),triton)
	$(MAKE) triton-venv
	$(PY) manage.py visage_run --inference triton --triton-venv $(TRITON_VENV)
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

# --durations=25: the slowest tests, in every local run and CI log, so a slow one is seen when it lands.
test: $(STAMP)
	$(VENV)/bin/lint-imports
	$(PY) -m pytest --durations=25

lint: $(STAMP)
	$(VENV)/bin/ruff check .

# The translation catalogues (docs/concepts/languages.md): update locale/*/LC_MESSAGES/*.po from the code
# and compile the committed .mo files. Needs GNU gettext (apt-get install gettext).
messages: $(STAMP)
	$(PY) manage.py visage_makemessages

bench: $(STAMP)
	$(PY) bench/engine.py
	$(PY) bench/moderation.py

clean-data:
	rm -rf var/

# --- Container images (deploy/README.md) --------------------------------------------------------
# Dependencies are built on the host into a wheelhouse and installed offline in the images, so a
# build needs no package index. IMAGE_BASE=localhost/debian:bookworm-slim is made by
# deploy/base-image.sh (debootstrap, no registry); elsewhere use python:3.11-slim-bookworm.
PODMAN ?= podman
IMAGE_BASE ?= localhost/debian:bookworm-slim
IMAGE_PREFIX ?= localhost/visage-
IMAGE_TAG ?= latest
IMAGE_TARGETS ?= web worker gpu-worker triton
WHEELS := build/wheels
# Extra pip options for the wheelhouse, e.g. --extra-index-url https://download.pytorch.org/whl/cpu
WHEEL_PIP_ARGS ?=

.PHONY: wheelhouse images

$(WHEELS)/.built: pyproject.toml
	mkdir -p $(WHEELS)
	$(PYTHON) -m pip wheel --quiet $(WHEEL_PIP_ARGS) --wheel-dir $(WHEELS) \
		'.[cpu,gpu,video,engine,moderation,triton,triton-server]' \
		'async-timeout>=4.0.3'  # redis needs it below Python 3.11.3 (Debian 12 has 3.11.2)
	rm -f $(WHEELS)/visage-*.whl  # the images run the source from /app, not an installed copy
	touch $@

wheelhouse: $(WHEELS)/.built

images: wheelhouse
	@case "$(IMAGE_BASE)" in localhost/debian:*) BASE_IMAGE=$(IMAGE_BASE) PODMAN="$(PODMAN)" deploy/base-image.sh;; esac
	@for target in $(IMAGE_TARGETS); do \
		echo "building $(IMAGE_PREFIX)$$target:$(IMAGE_TAG)"; \
		start=$$(date +%s); \
		$(PODMAN) build --format docker --network host --build-arg BASE=$(IMAGE_BASE) --target $$target \
			-t $(IMAGE_PREFIX)$$target:$(IMAGE_TAG) -f deploy/Containerfile . || exit 1; \
		echo "built $(IMAGE_PREFIX)$$target:$(IMAGE_TAG) in $$(( $$(date +%s) - start )) s"; \
	done
	@$(PODMAN) images --filter reference='$(IMAGE_PREFIX)*'

#!/bin/sh
# Regenerate the API clients from the committed schema (run from the repository root after
# `python manage.py spectacular --validate --fail-on-warn --file docs/openapi.yaml`).
set -eu
# Python: openapi-python-client in a throwaway venv (it is not a dependency of the project).
python3 -m venv /tmp/visage-opc && /tmp/visage-opc/bin/pip install -q "openapi-python-client==0.29.1"
/tmp/visage-opc/bin/openapi-python-client generate --path docs/openapi.yaml \
  --config clients/python-generator.yaml --output-path clients/python --overwrite
# 0.29.1 forgets to import `Unset` where an operation takes two body types (POST /quotes: JSON or multipart).
# (Where it does import it, on its own line, as for an optional header parameter, nothing is added.)
grep -l " | Unset = UNSET" -r clients/python/visage_api_client/api | xargs grep -L "^from \.\.\.types import UNSET, Unset$" \
  | xargs -r sed -i 's/^from \.\.\.types import Response, UNSET$/from ...types import Response, UNSET, Unset/'
# TypeScript: types for openapi-fetch.
cd clients/typescript && npm ci --silent && npx openapi-typescript ../../docs/openapi.yaml -o schema.d.ts

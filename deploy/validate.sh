#!/usr/bin/env bash
# Validate the manifests offline: a venv in ~/.cache/kern/deploy-venv with
# kubernetes-validate (the Kubernetes OpenAPI schemas) and jsonschema.
set -euo pipefail
venv="$HOME/.cache/kern/deploy-venv"
if [ ! -x "$venv/bin/python" ]; then
	python3 -m venv "$venv"
	"$venv/bin/pip" install -q "kubernetes-validate==1.37.0" "jsonschema>=4" "PyYAML>=6"
fi
exec "$venv/bin/python" "$(dirname "$0")/validate.py"

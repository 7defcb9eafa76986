#!/usr/bin/env bash
# Create .venv and install gymforge with its dev tools. Idempotent: re-runs only when
# pyproject.toml changed. Torch is installed first, pinned to the CPU build 2.13.0, so that pip
# never resolves a multi-GB CUDA build; override with TORCH_SPEC (e.g. a CUDA wheel) if you want.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
EXTRAS=${EXTRAS:-dev}
TORCH_SPEC=${TORCH_SPEC:-torch==2.13.0}
stamp=".venv/.setup-${EXTRAS//,/-}"

if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
if [ -f "$stamp" ] && [ "$stamp" -nt pyproject.toml ]; then
    exit 0
fi
.venv/bin/python -m pip install --quiet --upgrade pip
if ! .venv/bin/python -c "import torch" 2>/dev/null; then
    .venv/bin/python -m pip install --quiet "$TORCH_SPEC"
fi
.venv/bin/python -m pip install --quiet -e ".[${EXTRAS}]"
touch "$stamp"

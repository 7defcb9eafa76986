#!/usr/bin/env bash
# Create .venv and install gymforge with its dev tools. Idempotent: re-runs only when
# pyproject.toml changed.
#
# Torch is installed first and deliberately, so that pip never picks a build by accident:
#   TORCH_SPEC       the requirement (default torch==2.13.0);
#   TORCH_INDEX_URL  the index torch comes from (default PyTorch's CPU-only index; for CUDA
#                    e.g. https://download.pytorch.org/whl/cu126, or empty for pip's own
#                    configuration, which on PyPI means the CUDA build on Linux).
# A torch wheel that pip's configured find-links already hold locally is used first (no
# download); torch's own dependencies come with the package install that follows.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
EXTRAS=${EXTRAS:-dev}
TORCH_SPEC=${TORCH_SPEC:-torch==2.13.0}
TORCH_INDEX_URL=${TORCH_INDEX_URL-https://download.pytorch.org/whl/cpu}
stamp=".venv/.setup-${EXTRAS//,/-}"

if [ ! -x .venv/bin/python ]; then
    "$PYTHON" -m venv .venv
fi
if [ -f "$stamp" ] && [ "$stamp" -nt pyproject.toml ]; then
    exit 0
fi
pip=(.venv/bin/python -m pip install --quiet)
"${pip[@]}" --upgrade pip
if ! .venv/bin/python -c "import torch" 2>/dev/null; then
    if "${pip[@]}" --no-deps --no-index "$TORCH_SPEC" 2>/dev/null; then
        echo "setup: installed $TORCH_SPEC from a local wheel"
    elif [ -n "$TORCH_INDEX_URL" ]; then
        echo "setup: installing $TORCH_SPEC from $TORCH_INDEX_URL"
        "${pip[@]}" --no-deps --index-url "$TORCH_INDEX_URL" "$TORCH_SPEC"
    else
        echo "setup: installing $TORCH_SPEC with pip's own index configuration"
        "${pip[@]}" --no-deps "$TORCH_SPEC"
    fi
fi
"${pip[@]}" -e ".[${EXTRAS}]"
touch "$stamp"

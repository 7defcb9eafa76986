#!/usr/bin/env bash
# The GPU check as one prepared script, for a bare machine with an NVIDIA GPU and a CUDA torch.
#
# Usage (repository root):  bash benchmarks/gpu_check.sh [OUT_DIR]
#
# If the folder .whl/ exists (gymnasium, simpy, pettingzoo, stable-baselines3, sb3-contrib,
# farama-notifications, pyyaml and a gymforge wheel built here with
# `python -m pip wheel --no-deps -w .whl .`), they are installed into /tmp/site first; the
# project must be installed (a wheel or `pip install -e .`), as putting the repository root on
# PYTHONPATH does not make gymforge.envs importable. Writes to OUT_DIR (default $OUT, else
# benchmarks/results/gpu): gpu_check.json/.md (python -m benchmarks.gpu_check --device cuda),
# pytest_gpu.log (`pytest -m gpu`) and environment.txt. Sized for about 8 minutes.
set -uo pipefail
cd "$(dirname "$0")/.."
out="${1:-${OUT:-benchmarks/results/gpu}}"
mkdir -p "$out"
python="${PYTHON:-python3}"
if [[ -d .whl ]]; then
    "$python" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
        --target /tmp/site .whl/*.whl || exit 1
    export PYTHONPATH=/tmp/site
fi
export PYTHONUNBUFFERED=1 PYGAME_HIDE_SUPPORT_PROMPT=1
{
    date -u +%Y-%m-%dT%H:%M:%SZ
    "$python" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda,
"device", torch.cuda.get_device_name(0) if torch.cuda.is_available() else None)'
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>&1
} > "$out/environment.txt" 2>&1
cat "$out/environment.txt"
timeout 420 "$python" -m benchmarks.gpu_check --device cuda --out "$out"
status=$?
timeout 120 "$python" -m pytest -q -m gpu -p no:cacheprovider > "$out/pytest_gpu.log" 2>&1
tail -3 "$out/pytest_gpu.log"
exit $status

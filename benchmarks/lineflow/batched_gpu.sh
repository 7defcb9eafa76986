#!/usr/bin/env bash
# The GPU measurement of benchmarks/lineflow/batched.py, as one prepared script.
#
# Usage (from the repository root, on a machine with an NVIDIA GPU):
#     bash benchmarks/lineflow/batched_gpu.sh [OUT_DIR] [extra benchmarks.lineflow.batched options]
#
# OUT_DIR defaults to $OUT, else benchmarks/results/gpu. It receives lineflow_batched_cuda.json and
# lineflow_batched_cuda.md (the torch engine on CUDA next to SimPy under SyncVectorEnv and, if
# lineflow-rl 0.5.0 is installed, the anchor on the CPU), nvidia-smi.txt, environment.txt and
# run.log. The interpreter is $PYTHON, else .venv/bin/python, else python3; it needs gymforge
# importable (an editable install, or the repository root on PYTHONPATH, which this script adds)
# and a CUDA build of torch. Without a usable GPU the benchmark says why and exits 0.
#
# Sized for about 5 minutes of device time (startup not included): 2 rounds of ~1.5 s
# measurements, B from 1 to 65,536, the warm line state taken from a B = 4096 env (on a GPU a
# step of 4096 instances costs about as much as one of 1024). Extra options override these,
# e.g. `--scenarios WT WA3`, `--repeats 3` or `--skip-memory`.
set -euo pipefail

cd "$(dirname "$0")/../.."
out="${1:-${OUT:-benchmarks/results/gpu}}"
if [[ $# -gt 0 ]]; then shift; fi
mkdir -p "$out"

python="${PYTHON:-}"
if [[ -z "$python" ]]; then
    if [[ -x .venv/bin/python ]]; then python=.venv/bin/python; else python=python3; fi
fi
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"
export PYGAME_HIDE_SUPPORT_PROMPT=1

{
    echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "python: $python ($("$python" --version 2>&1))"
    "$python" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda,
"available", torch.cuda.is_available(),
"device", torch.cuda.get_device_name(0) if torch.cuda.is_available() else None)' 2>&1 || true
    echo "nproc: $(nproc)"
} > "$out/environment.txt"
nvidia-smi > "$out/nvidia-smi.txt" 2>&1 || echo "nvidia-smi not available" > "$out/nvidia-smi.txt"
cat "$out/environment.txt"

"$python" -m benchmarks.lineflow.batched \
    --device cuda \
    --batch-sizes 1 1024 4096 16384 65536 \
    --repeats 2 \
    --target-seconds 1.5 \
    --cap-seconds 6 \
    --warm-up-batch 4096 \
    --out "$out" \
    "$@" 2>&1 | tee "$out/run.log"

#!/usr/bin/env bash
# The on-device trainer on a CUDA machine, as one prepared script (about 5 minutes).
#
# Usage (repository root, NVIDIA GPU, a CUDA build of torch):
#     bash benchmarks/train_speed_gpu.sh [OUT_DIR]
#
# If the wheels folder .whl/ exists (gymnasium, simpy, pettingzoo, stable-baselines3,
# sb3-contrib, farama-notifications and a gymforge wheel built from this checkout), they are
# installed into /tmp/site first, for a machine that has torch but not the rest. Writes to OUT_DIR
# (default $OUT, else benchmarks/results/gpu): train_speed_cuda.md/.json (python -m benchmarks.train_speed
# with --device cuda), train_run.log (a 4M-step WaitingTime run on CUDA at B=16384, its
# held-out evaluation on the SimPy engine), pytest_gpu.log and environment.txt.
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
export PYTHONUNBUFFERED=1
{
    date -u +%Y-%m-%dT%H:%M:%SZ
    "$python" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda,
"device", torch.cuda.get_device_name(0) if torch.cuda.is_available() else None)'
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv 2>&1
} > "$out/environment.txt" 2>&1
cat "$out/environment.txt"
timeout 240 "$python" -m benchmarks.train_speed --device cuda --batch-sizes 4096 16384 65536 \
    --iterations 3 --out "$out/train_speed_cuda" 2>&1 | tee "$out/train_speed.log"
timeout 120 "$python" -m gymforge.cli train LineFlow-WaitingTime-v0 --algo ppo --backend torch \
    --device cuda --n-envs 16384 --steps 4000000 --eval-every 0 --out /tmp/wt-cuda \
    --no-progress-bar 2>&1 | tee "$out/train_run.log"
timeout 60 "$python" -m gymforge.cli rollout LineFlow-WaitingTime-v0 --agent /tmp/wt-cuda \
    --episodes 3 --seed 4611686018427387904 2>&1 | tee -a "$out/train_run.log"
timeout 90 "$python" -m pytest -q -m gpu -p no:cacheprovider tests 2>&1 | tail -15 \
    | tee "$out/pytest_gpu.log"

#!/usr/bin/env bash
# The JAX engine on an accelerator, in one prepared command (about 6 minutes, at most 8; no
# network): the engine's decisions/s with observations at batch 1 to 65,536 (to 1,048,576 on an
# accelerator) and the training time of examples/jax_ppo.py's default run, on the device jax
# finds first.
#
#     bash benchmarks/jax_device_check.sh [--quick] [OUT_DIR]   # default: /tmp/jax_device_check
#
# --quick: batches 1 and 256 and 8,192 training decisions, to check the script itself on any
# machine (a CPU too) in a few minutes; its figures are no measurement.
#
# Needs the repository and a Python with jax for the device (CUDA), optax and numpy, plus the
# project's own dependencies (gymnasium, pettingzoo, pillow, safetensors); flax is not used.
# Writes OUT_DIR/jax_engine.json and OUT_DIR/ppo/ (the model file, its log and summary) and
# prints the figures. docs/jax.md says what has been measured with it.
set -euo pipefail
cd "$(dirname "$0")/.."
QUICK=0
if [ "${1:-}" = "--quick" ]; then
    QUICK=1
    shift
fi
OUT="${1:-/tmp/jax_device_check}"
mkdir -p "$OUT"
export PYTHONPATH="$PWD${PYTHONPATH:+:$PYTHONPATH}"

python - <<'PY'
import importlib.util, sys
missing = [m for m in ("jax", "optax", "numpy", "gymnasium", "pettingzoo", "PIL", "safetensors")
           if importlib.util.find_spec(m) is None]
if missing:
    sys.exit(f"jax_device_check: missing Python modules: {', '.join(missing)}")
import jax
print("jax", jax.__version__, "devices:", jax.devices())
if jax.default_backend() == "cpu":
    print("jax_device_check: no accelerator found; the figures below are the CPU's")
PY

# On an accelerator the batch goes on to 1,048,576 games (the 10^8 goal needs the widest batch
# the device holds); on a CPU it stops at 65,536.
BATCHES=$(python -c "import jax; print('1,256,4096,65536' + (',1048576' if jax.default_backend() != 'cpu' else ''))")
SECONDS_PER_ROW=3
PPO_STEPS=()
if [ "$QUICK" = 1 ]; then
    BATCHES=1,256
    SECONDS_PER_ROW=1
    PPO_STEPS=(--steps 8192 --envs 64)
fi
echo "== engine: decisions/s with observations at batch $BATCHES (compile timed apart) =="
# A timeout here must not stop the check (set -e): the rows printed so far stand.
rc=0
timeout 240 python benchmarks/jax_engine.py --batches "$BATCHES" --seconds "$SECONDS_PER_ROW" \
    --chunk 128 --pgx "" --no-numba --json "$OUT/jax_engine.json" || rc=$?
if [ "$rc" = 124 ]; then
    echo "engine: did not finish within 240 s (the rows above are the ones it measured)"
elif [ "$rc" != 0 ]; then
    echo "engine: failed with exit status $rc (the rows above are the ones it measured)"
fi

echo "== examples/jax_ppo.py, default settings (final evaluation on 200 deals) =="
rc=0
timeout 240 python examples/jax_ppo.py --eval-every 0 --final-deals 200 ${PPO_STEPS[@]+"${PPO_STEPS[@]}"} \
    --out "$OUT/ppo/model.safetensors" > "$OUT/ppo.log" 2>&1 || rc=$?
if [ "$rc" = 0 ]; then
    python - "$OUT/ppo/model_summary.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
print(f"training: {s['steps']:,} decisions in {s['train_seconds']} s wall "
      f"({s['train_cpu_seconds']} s CPU), compilation included; vs greedy "
      f"{s['vs_greedy']['win_rate']} {s['vs_greedy']['ci95']}, vs random "
      f"{s['vs_random']['win_rate']} {s['vs_random']['ci95']}")
PY
elif [ "$rc" = 124 ]; then
    echo "training: did not finish within 240 s (the 60 s goal not met); its log's end:"
    tail -n 5 "$OUT/ppo.log"
else
    echo "training: failed with exit status $rc; its log's end:"
    tail -n 20 "$OUT/ppo.log"
fi

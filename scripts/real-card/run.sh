#!/usr/bin/env bash
# The real-card check (docs/operations.md#real-card), run on a lent NVIDIA GPU machine as root in
# a copy of the working tree, with the bundle of scripts/real-card/bundle.sh carried along:
#   device run: command "bash scripts/real-card/run.sh", carry [".real-card"]
# It compares `gpustack-operator detect` with nvidia-smi and NVML's Python bindings, runs
# test/native/real-hardware.test.ts (the labels, the ResourceSlice and the CDI specs the kubelet
# plugin writes for a whole card and a share, checked against the host's device nodes) and explores
# whether an MPS daemon's per-client memory limit stops a process. Everything it prints also goes
# to $OUT/report.txt; the JSON it reads is left beside it. No step stops the others.
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT=${OUT:-$PWD/real-card-out}
mkdir -p "$OUT"
exec > >(tee "$OUT/report.txt") 2>&1
step() { printf '\n=== %s (%s)\n' "$*" "$(date -u +%T)"; }

step 'unpack the bundle'
tar -xJf .real-card/bundle.tar.xz || exit 1
export PATH="$PWD/node_modules/.bin:/usr/local/nvidia/bin:$PATH"
node --version

step 'the machine and its driver'
uname -r
nvidia-smi
nvidia-smi --query-gpu=index,name,uuid,memory.total,driver_version,compute_cap,mig.mode.current,pci.bus_id --format=csv
cat /proc/driver/nvidia/version /proc/driver/nvidia/gpus/*/information
ls -l /dev/nvidia* /dev/dri 2>&1
ldconfig -p | grep -E 'libnvidia-ml|libcuda\.so'
echo "driver folder: $(ls /usr/local/nvidia 2>&1 | tr '\n' ' ')"
# What a CDI spec would have to mount for an image without the driver's user-space libraries.
ls /usr/local/nvidia/lib64 2>&1 | grep -E '^lib(cuda|nvidia-ml|nvidia-ptxjit|nvidia-nvvm|nvidia-gpucomp)\.so\.' | tr '\n' ' '
echo "($(ls /usr/local/nvidia/lib64 2>/dev/null | wc -l) files in /usr/local/nvidia/lib64)"
nvidia-smi -q >"$OUT/nvidia-smi-q.txt"

step 'NVML through nvidia-ml-py'
python3 -c 'import importlib.metadata as m; print("nvidia-ml-py", m.version("nvidia-ml-py"))'
python3 scripts/real-card/nvml-facts.py >"$OUT/nvml.json"
cat "$OUT/nvml.json"

cli() { timeout 120 node dist/src/cli/main.js "$@"; }
step 'detect, as `gpustack-operator detect` in this process root'
NODE_NAME=real-card cli detect -o json >"$OUT/detect.json"
cat "$OUT/detect.json"
cli detect -o text
step 'detect --host-root / (the agent looks the library up under the host root, not in the loader cache)'
NODE_NAME=real-card cli detect -o json --host-root / >"$OUT/detect-host-root.json"
diff "$OUT/detect.json" "$OUT/detect-host-root.json" && echo 'same answer as without --host-root'
step 'detect --host-root /host (the host mounted elsewhere, as in the agent Pod)'
if [[ -e /dev/nvidiactl ]] && mkdir -p /host && mount --bind / /host; then
  NODE_NAME=real-card cli detect -o json --host-root /host | diff "$OUT/detect.json" - && echo 'same answer'
  umount /host
else
  echo 'no driver or no bind mount here: skipped'
fi

step 'test/native/real-hardware.test.ts'
# NVML's Python answer joins the comparison where the bindings gave one.
[[ -s $OUT/nvml.json ]] && export GPUSTACK_REAL_CARD_NVML=$OUT/nvml.json
GPUSTACK_REAL_CARD_OUT=$OUT timeout 300 node node_modules/vitest/vitest.mjs run --config scripts/real-card/vitest.config.ts
echo "vitest exit $?"
for f in labels-and-slices.json cdi-specs.json; do [[ -f $OUT/$f ]] && { echo "--- $f"; cat "$OUT/$f"; }; done

step 'MPS: is it there, does a daemon start, does CUDA_MPS_PINNED_DEVICE_MEM_LIMIT stop a process'
command -v nvidia-cuda-mps-control nvidia-cuda-mps-server || echo 'MPS binaries: not on the PATH'
nvidia-smi -q -d COMPUTE | grep -i 'compute mode'
echo '--- A: no daemon, limit 0=2G, allocate 4 GiB'
CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=2G timeout 120 python3 scripts/real-card/mps-limit.py 4
export CUDA_MPS_PIPE_DIRECTORY=/tmp/mps/pipe CUDA_MPS_LOG_DIRECTORY=/tmp/mps/log
mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
if timeout 30 nvidia-cuda-mps-control -d; then
  echo '--- daemon started'
  echo '--- B: daemon, limit 0=2G, allocate 4 GiB'
  CUDA_MPS_PINNED_DEVICE_MEM_LIMIT=0=2G timeout 120 python3 scripts/real-card/mps-limit.py 4
  echo 'get_server_list' | timeout 10 nvidia-cuda-mps-control
  echo '--- C: daemon, no limit, allocate 4 GiB'
  timeout 120 python3 scripts/real-card/mps-limit.py 4
  echo '--- daemon logs'
  tail -n 30 "$CUDA_MPS_LOG_DIRECTORY"/*.log
  echo quit | timeout 10 nvidia-cuda-mps-control
else
  echo "nvidia-cuda-mps-control -d failed: $?"
  tail -n 30 "$CUDA_MPS_LOG_DIRECTORY"/*.log 2>&1
fi
step done

"""One CUDA client of the MPS experiment in scripts/real-card/run.sh: reports the memory CUDA says
it has, then allocates plain device memory (cudaMalloc through PyTorch) 1 GiB at a time up to
argv[1] GiB and reports where it was stopped, if it was. Run with and without an MPS daemon and
CUDA_MPS_PINNED_DEVICE_MEM_LIMIT, it shows whether that limit stops a process."""
import os
import subprocess
import sys

import torch

GIB = 1024**3
goal = int(sys.argv[1])
print(f"  limit variable: {os.environ.get('CUDA_MPS_PINNED_DEVICE_MEM_LIMIT', '(unset)')}", flush=True)
free, total = torch.cuda.mem_get_info()
print(f"  cudaMemGetInfo: free {free / GIB:.2f} GiB of {total / GIB:.2f} GiB", flush=True)
held = []
try:
    for i in range(goal):
        held.append(torch.empty(GIB, dtype=torch.uint8, device="cuda"))
        torch.cuda.synchronize()
    print(f"  allocated all {goal} GiB", flush=True)
except torch.OutOfMemoryError as error:
    print(f"  stopped after {len(held)} GiB: {str(error).splitlines()[0]}", flush=True)
apps = subprocess.run(
    ["nvidia-smi", "--query-compute-apps=pid,process_name,used_memory", "--format=csv,noheader"],
    capture_output=True,
    text=True,
    check=False,
)
print(f"  nvidia-smi compute apps while holding it: {apps.stdout.strip() or apps.stderr.strip() or '(none)'}", flush=True)

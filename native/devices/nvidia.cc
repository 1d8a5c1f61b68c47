#include "enumerators.h"
#include "nvml-like.h"

namespace gpustack {
namespace {

SearchPlan NvidiaPlan() {
  // The GPU Operator's containerised driver lives under /run/nvidia/driver. The dev
  // name libnvidia-ml.so is never tried: the CUDA toolkit ships a stub of that name.
  SearchPlan plan{{"libnvidia-ml.so.1"}, {}};
  for (const char* root : {"", "/run/nvidia/driver"}) {
    for (const char* dir : {"/usr/lib64", "/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/lib64",
                            "/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu"}) {
      plan.directories.push_back(std::string(root) + dir);
    }
  }
  return plan;
}

}  // namespace

void DetectNvidia(const Environment& env, Report& report) {
  Library library;
  SearchPlan plan = NvidiaPlan();
  if (!OpenLibrary(env, plan, &library, report)) return;
  NvmlFlavor flavor{"nvml", "NVML", "DeviceGetCudaComputeCapability",
                    {"SystemGetCudaDriverVersion_v2", "SystemGetCudaDriverVersion"}, true, true};
  DetectNvmlLike(flavor, library, report);
}

}  // namespace gpustack

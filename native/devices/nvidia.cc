#include "enumerators.h"
#include "library.h"
#include "nvml-like.h"

namespace gpustack {
namespace {

SearchPlan NvidiaPlan() {
  // The dev name libnvidia-ml.so is never tried: the CUDA toolkit ships a stub of that name.
  SearchPlan plan{{"libnvidia-ml.so.1"}, {}};
  plan.directories.assign(std::begin(kSystemLibraryDirectories), std::end(kSystemLibraryDirectories));
  // Where NVIDIA's container runtime and GKE's device plugin mount the driver's libraries.
  plan.directories.emplace_back("/usr/local/nvidia/lib64");
  // The GPU Operator's containerised driver lives under /run/nvidia/driver.
  for (const char* dir : kSystemLibraryDirectories) plan.directories.push_back(std::string("/run/nvidia/driver") + dir);
  return plan;
}

}  // namespace

void DetectNvidia(const DetectContext& context, Report& report) {
  Library library;
  if (!OpenLibrary(context, NvidiaPlan(), &library, report)) return;
  NvmlFlavor flavor{"nvml", "NVML", "DeviceGetCudaComputeCapability",
                    {"SystemGetCudaDriverVersion_v2", "SystemGetCudaDriverVersion"}, true, true, true};
  DetectNvmlLike(flavor, library, report);
}

}  // namespace gpustack

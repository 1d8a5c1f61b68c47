#include "enumerators.h"
#include "environment.h"
#include "library.h"
#include "nvml-like.h"

namespace gpustack {

void DetectIluvatar(const DetectContext& context, Report& report) {
  std::string root = InstallRoot(context.env, {"COREX_HOME"}, "/usr/local/corex");
  SearchPlan plan{{"libixml.so"}, {root + "/lib64", root + "/lib"}};
  Library library;
  if (!OpenLibrary(context, plan, &library, report)) return;
  // libixml exports NVML's own names; resolving them through this handle (never the
  // global scope) keeps them apart from a real libnvidia-ml in the same process.
  // gpustack probes IXML's unversioned CUDA-version symbol first.
  NvmlFlavor flavor{"nvml", "IXML", "DeviceGetCudaComputeCapability",
                    {"SystemGetCudaDriverVersion", "SystemGetCudaDriverVersion_v2"}, false, false};
  DetectNvmlLike(flavor, library, report);
}

}  // namespace gpustack

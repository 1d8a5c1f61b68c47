#include "enumerators.h"
#include "environment.h"
#include "library.h"
#include "rocm-smi.h"

namespace gpustack {

void DetectHygon(const DetectContext& context, Report& report) {
  // Hygon's DTK ("hyhal") ships its own build of ROCm SMI. Its directories come before the
  // system ones and the loader path, whose librocm_smi64.so is most likely AMD's; the PCI
  // vendor filter keeps an AMD build from answering anyway.
  std::string rocm = EnvValue(context.env, "ROCM_PATH");
  SearchPlan plan{{"librocm_smi64.so"},
                  {EnvValue(context.env, "ROCM_SMI_LIB_PATH"), "/opt/hyhal/lib", "/opt/dtk/rocm_smi/lib",
                   "/opt/dtk/.hyhal/rocm_smi/lib", rocm.empty() ? "" : rocm + "/lib"}};
  Library library;
  if (!OpenLibrary(context, plan, &library, report)) return;
  auto runtime = RocmRelease(context, rocm.empty() ? "/opt/dtk" : rocm);
  DetectRocmSmi(RocmSmiTarget{0x1d94, runtime}, library, report);
}

}  // namespace gpustack

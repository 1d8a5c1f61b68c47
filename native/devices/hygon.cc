#include "enumerators.h"
#include "rocm-smi.h"

namespace gpustack {

void DetectHygon(const Environment& env, Report& report) {
  // Hygon's DTK ("hyhal") ships its own build of ROCm SMI. Its directories come before
  // the loader path, and the PCI vendor filter keeps an AMD build from answering.
  std::string rocm = EnvValue(env, "ROCM_PATH");
  SearchPlan plan{{"librocm_smi64.so"},
                  {EnvValue(env, "ROCM_SMI_LIB_PATH"), "/opt/hyhal/lib", "/opt/dtk/rocm_smi/lib",
                   "/opt/dtk/.hyhal/rocm_smi/lib", rocm.empty() ? "" : rocm + "/lib"}};
  std::vector<std::string> candidates = LibraryCandidates(env, "hygon", plan);
  if (EnvValue(env, OverrideVariable("hygon")).empty()) {
    // Directories first: the bare soname on the loader path is most likely AMD's.
    candidates.erase(candidates.begin());
    candidates.push_back("librocm_smi64.so");
  }
  Library library;
  OpenFailure failure;
  if (!library.Open(candidates, &failure)) {
    report.Fail(failure.code, failure.why);
    return;
  }
  auto runtime = RocmRelease(rocm.empty() ? "/opt/dtk" : rocm);
  DetectRocmSmi(RocmSmiTarget{0x1d94, runtime}, library, report);
}

}  // namespace gpustack

#include <sys/stat.h>

#include "enumerators.h"
#include "environment.h"
#include "library.h"
#include "nvml-like.h"

namespace gpustack {
namespace {

// libhgml.so needs libuki.so from the same directory; once loaded (even RTLD_LOCAL) the
// loader satisfies libhgml's DT_NEEDED entry with it by soname.
void PreloadUki(const std::vector<std::string>& candidates, const LoadObserver& before_load, Library* uki) {
  std::vector<std::string> present;
  for (const auto& path : candidates) {
    struct stat info {};
    if (stat(path.c_str(), &info) == 0) present.push_back(path);
  }
  if (!present.empty()) uki->Open(present, nullptr, before_load);
}

}  // namespace

void DetectThead(const DetectContext& context, Report& report) {
  std::string root = InstallRoot(context.env, {"PPU_HOME"}, "/usr/local/PPU_SDK");
  SearchPlan plan{{"libhgml.so"}, {root + "/lib64", root + "/lib"}};
  std::string override_path = EnvValue(context.env, OverrideVariable("thead"));
  std::vector<std::string> uki;
  if (!override_path.empty()) {
    size_t slash = override_path.find_last_of('/');
    if (slash != std::string::npos) uki.push_back(override_path.substr(0, slash + 1) + "libuki.so");
  } else {
    for (const auto& dir : plan.directories) {
      if (auto path = context.OnHost(dir + "/libuki.so")) uki.push_back(*path);
    }
  }
  Library uki_library;
  PreloadUki(uki, context.before_load, &uki_library);
  Library library;
  if (!OpenLibrary(context, plan, &library, report)) return;
  NvmlFlavor flavor{"hgml", "HGML", "DeviceGetHggcComputeCapability",
                    {"SystemGetHggcDriverVersion_v2", "SystemGetHggcDriverVersion"}, false, true};
  DetectNvmlLike(flavor, library, report);
}

}  // namespace gpustack

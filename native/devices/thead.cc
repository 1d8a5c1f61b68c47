#include <sys/stat.h>

#include "enumerators.h"
#include "nvml-like.h"

namespace gpustack {
namespace {

// libhgml.so needs libuki.so from the same directory; once loaded (even RTLD_LOCAL) the
// loader satisfies libhgml's DT_NEEDED entry with it by soname.
void PreloadUki(const std::vector<std::string>& directories, Library* uki) {
  std::vector<std::string> candidates;
  for (const auto& dir : directories) {
    struct stat info {};
    std::string path = dir + "/libuki.so";
    if (stat(path.c_str(), &info) == 0) candidates.push_back(path);
  }
  if (!candidates.empty()) uki->Open(candidates, nullptr);
}

}  // namespace

void DetectThead(const Environment& env, Report& report) {
  std::string root = InstallRoot(env, {"PPU_HOME"}, "/usr/local/PPU_SDK");
  SearchPlan plan{{"libhgml.so"}, {root + "/lib64", root + "/lib"}};
  std::string override_path = EnvValue(env, OverrideVariable("thead"));
  std::vector<std::string> uki_directories = plan.directories;
  if (!override_path.empty()) uki_directories = {override_path.substr(0, override_path.find_last_of('/'))};
  Library uki;
  PreloadUki(uki_directories, &uki);
  Library library;
  if (!OpenLibrary(env, plan, &library, report)) return;
  NvmlFlavor flavor{"hgml", "HGML", "DeviceGetHggcComputeCapability",
                    {"SystemGetHggcDriverVersion_v2", "SystemGetHggcDriverVersion"}, false, true};
  DetectNvmlLike(flavor, library, report);
}

}  // namespace gpustack

#include "environment.h"

#include <cctype>
#include <cstdlib>

#include "common.h"

namespace gpustack {

namespace {

// Install-root variables from the vendor documentation, and ours.
constexpr const char* kInstallVariables[] = {
    "ROCM_PATH", "ROCM_HOME", "AMD_SMI_LIB_PATH", "ROCM_SMI_LIB_PATH", "CANN_HOME",
    "NEUWARE_HOME", "COREX_HOME", "MACA_HOME", "PPU_HOME", "GPUSTACK_SYSFS_ROOT",
};

}  // namespace

std::string OverrideVariable(const std::string& manufacturer) {
  std::string name = "GPUSTACK_";
  for (char c : manufacturer) name += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return name + "_LIBRARY";
}

Environment CaptureEnvironment() {
  Environment env;
  auto capture = [&env](const std::string& name) {
    if (const char* value = std::getenv(name.c_str())) env[name] = value;
  };
  for (const char* manufacturer : kManufacturers) capture(OverrideVariable(manufacturer));
  for (const char* name : kInstallVariables) capture(name);
  return env;
}

std::string EnvValue(const Environment& env, const std::string& name) {
  auto found = env.find(name);
  return found == env.end() ? std::string() : found->second;
}

std::string InstallRoot(const Environment& env, const std::vector<std::string>& variables,
                        const std::string& fallback) {
  for (const auto& variable : variables) {
    std::string value = EnvValue(env, variable);
    if (!value.empty()) return value;
  }
  return fallback;
}

}  // namespace gpustack

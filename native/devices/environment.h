// The environment variables the enumerators read: install roots and library overrides.
#pragma once

#include <map>
#include <string>
#include <vector>

namespace gpustack {

// Values of the environment variables the enumerators consult, copied on the JS thread
// so the worker thread never races a concurrent setenv().
using Environment = std::map<std::string, std::string>;
Environment CaptureEnvironment();

std::string EnvValue(const Environment& env, const std::string& name);
// First of `variables` that is set, else `fallback` (a vendor's default install root).
std::string InstallRoot(const Environment& env, const std::vector<std::string>& variables,
                        const std::string& fallback);

// GPUSTACK_<MFR>_LIBRARY: the variable that names a manufacturer's library file outright.
std::string OverrideVariable(const std::string& manufacturer);

}  // namespace gpustack

// Paths on the host when the host's filesystem is mounted below a folder of this process.
#pragma once

#include <optional>
#include <string>

namespace gpustack {

// What DetectContext::OnHost answers: `path` below `host_root`, every symlink resolved there;
// `path` itself when `host_root` is "".
std::optional<std::string> ResolveOnHost(const std::string& host_root, const std::string& path);

}  // namespace gpustack

// What one detection works with, captured on the JS thread before it starts.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include "environment.h"
#include "host-root.h"

namespace gpustack {

// Told each file (or bare soname) just before it goes to dlopen().
using LoadObserver = std::function<void(const std::string& library)>;

// What one detection works with: the captured environment, the folder the host's filesystem
// is mounted at ("" = this process's own root; never ends in '/'), and who hears of each load.
struct DetectContext {
  Environment env;
  std::string host_root;
  LoadObserver before_load;  // empty: nobody

  // A path on the host (vendor install folders, the install-root variables) as this
  // process reaches it: under host_root, with every symlink resolved there, an absolute
  // target included (as a chroot would). nullopt for a symlink loop.
  std::optional<std::string> OnHost(const std::string& path) const { return ResolveOnHost(host_root, path); }
};

}  // namespace gpustack

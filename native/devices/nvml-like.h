// NVML-shaped libraries: NVIDIA's NVML, Iluvatar's IXML (same nvml* names) and T-Head's
// HGML (hgml* names). One enumerator, parameterised by symbol prefix and extras.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "library.h"
#include "report.h"

namespace gpustack {

struct NvmlFlavor {
  std::string prefix;                           // "nvml" or "hgml"
  std::string label;                            // library name used in messages
  std::string compute_capability_symbol;        // suffix after the prefix
  std::vector<std::string> runtime_symbols;     // suffixes, preferred first
  bool nvidia_family = false;                   // derive family from compute capability
  bool mig = false;                             // query the MIG mode
  bool fabric = false;                          // query the GPU fabric info (NVLink cluster and clique)
};

void DetectNvmlLike(const NvmlFlavor& flavor, const Library& library, Report& report);

// "Hopper" for 9.0 and so on (gpustack's table); nullopt for unknown generations.
std::optional<std::string> NvidiaFamily(int major, int minor);

}  // namespace gpustack

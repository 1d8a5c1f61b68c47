// ROCm SMI (librocm_smi64.so): AMD's legacy library and the one Hygon ships. Index
// based, one enumerator for both; the PCI vendor id tells their cards apart when one
// library on the loader path answers for the other's hardware.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "context.h"
#include "library.h"
#include "report.h"

namespace gpustack {

bool IsRocmSmi(const Library& library);

struct RocmSmiTarget {
  uint16_t pci_vendor_id;                      // 0x1002 AMD, 0x1d94 Hygon
  std::optional<std::string> runtime_version;  // ROCm / DTK release, read from files
};

void DetectRocmSmi(const RocmSmiTarget& target, const Library& library, Report& report);

// gfx target as printed by the vendor tools: decimal below 2000 (942), else hex (0x942).
std::optional<std::string> GfxTarget(uint64_t raw);

// <root>/.info/version as major.minor; `root` is a path on the host.
std::optional<std::string> RocmRelease(const DetectContext& context, const std::string& root);

}  // namespace gpustack

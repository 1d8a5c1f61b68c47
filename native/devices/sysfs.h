// Where a card sits: PCI addresses in their sysfs form, NUMA nodes from sysfs or from a
// vendor's node mask, and the one-line files sysfs and driver packages keep facts in.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "environment.h"

namespace gpustack {

std::string FormatBdf(uint64_t domain, uint32_t bus, uint32_t device, uint32_t function);
// Accepts [domain:]bus:device.function in any case and width; nullopt if malformed.
std::optional<std::string> NormalizeBdf(const std::string& text);
// Where sysfs is mounted: GPUSTACK_SYSFS_ROOT (a test seam, and for agents that mount the
// host's /sys elsewhere), else /sys.
std::string SysfsRoot(const Environment& env);
// <sysfs>/bus/pci/devices/<bdf>/numa_node; nullopt for -1 ("no affinity") or no file.
std::optional<int32_t> SysfsNumaNode(const std::string& sysfs_root, const std::string& bdf);
// Lowest set bit of a NUMA node bitmask of `words` entries of `word_bits` bits each.
std::optional<int32_t> FirstSetBit(const void* mask, size_t words, size_t word_bits);
std::optional<std::string> ReadFirstLine(const std::string& path);

}  // namespace gpustack

#include "sysfs.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>

#include "text.h"

namespace gpustack {

std::string FormatBdf(uint64_t domain, uint32_t bus, uint32_t device, uint32_t function) {
  char text[48];
  std::snprintf(text, sizeof text, "%04llx:%02x:%02x.%x", static_cast<unsigned long long>(domain),
                bus & 0xffu, device & 0x1fu, function & 0x7u);
  return text;
}

std::optional<std::string> NormalizeBdf(const std::string& text) {
  unsigned long long domain = 0;
  unsigned bus = 0, device = 0, function = 0;
  int consumed = 0;
  std::string trimmed = Trim(text);
  const char* s = trimmed.c_str();
  if (std::sscanf(s, "%llx:%x:%x.%x%n", &domain, &bus, &device, &function, &consumed) == 4 &&
      s[consumed] == '\0') {
    return FormatBdf(domain, bus, device, function);
  }
  if (std::sscanf(s, "%x:%x.%x%n", &bus, &device, &function, &consumed) == 3 && s[consumed] == '\0') {
    return FormatBdf(0, bus, device, function);
  }
  return std::nullopt;
}

std::string SysfsRoot(const Environment& env) { return InstallRoot(env, {"GPUSTACK_SYSFS_ROOT"}, "/sys"); }

std::optional<int32_t> SysfsNumaNode(const std::string& sysfs_root, const std::string& bdf) {
  auto line = ReadFirstLine(sysfs_root + "/bus/pci/devices/" + bdf + "/numa_node");
  if (!line) return std::nullopt;
  char* end = nullptr;
  long value = std::strtol(line->c_str(), &end, 10);
  // -1 means "no affinity" on single-node machines.
  if (end == line->c_str() || value < 0 || value >= 4096) return std::nullopt;
  return static_cast<int32_t>(value);
}

std::optional<int32_t> FirstSetBit(const void* mask, size_t words, size_t word_bits) {
  const auto* bytes = static_cast<const unsigned char*>(mask);
  size_t total_bytes = words * (word_bits / 8);
  // Little-endian words: bit n of the set is bit (n % 8) of byte n / 8.
  for (size_t i = 0; i < total_bytes; ++i) {
    if (bytes[i] == 0) continue;
    for (int bit = 0; bit < 8; ++bit) {
      if (bytes[i] & (1u << bit)) return static_cast<int32_t>(i * 8 + bit);
    }
  }
  return std::nullopt;
}

std::optional<std::string> ReadFirstLine(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  // A sysfs or version file is one short line; bound the read anyway.
  char buffer[256] = {};
  in.getline(buffer, sizeof buffer - 1);
  std::string line = Trim(buffer);
  if (line.empty()) return std::nullopt;
  return line;
}

}  // namespace gpustack

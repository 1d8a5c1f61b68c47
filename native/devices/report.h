// What one manufacturer's enumeration found, collected as it goes.
#pragma once

#include <cstdint>
#include <string>

#include "common.h"

namespace gpustack {

class Library;

// Collects what one manufacturer's enumeration found.
class Report {
 public:
  Report(std::string manufacturer, std::string sysfs_root, DetectResult* out);

  const std::string& manufacturer() const { return manufacturer_; }
  void Fail(ErrorCode code, const std::string& message);
  void DeviceFail(uint32_t index, const std::string& message);
  void MissingSymbol(const Library& library, const std::string& symbol);
  // Validates and appends a device. Absurd memory becomes an error entry; an unknown NUMA
  // node is looked up in sysfs.
  void Add(Device device);

 private:
  std::string manufacturer_;
  std::string sysfs_root_;
  DetectResult* out_;
};

}  // namespace gpustack

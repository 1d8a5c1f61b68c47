#include "report.h"

#include <utility>

#include "library.h"
#include "sysfs.h"

namespace gpustack {

Report::Report(std::string manufacturer, std::string sysfs_root, DetectResult* out)
    : manufacturer_(std::move(manufacturer)), sysfs_root_(std::move(sysfs_root)), out_(out) {}

void Report::Fail(ErrorCode code, const std::string& message) {
  out_->errors.push_back(DeviceError{manufacturer_, code, message});
}

void Report::DeviceFail(uint32_t index, const std::string& message) {
  Fail(ErrorCode::kCallFailed, "device " + std::to_string(index) + ": " + message);
}

void Report::MissingSymbol(const Library& library, const std::string& symbol) {
  Fail(ErrorCode::kSymbolNotFound, "required symbol(s) " + symbol + " not exported by " + library.path());
}

void Report::Add(Device device) {
  if (device.memory_mib > kMaxMemoryMiB) {
    DeviceFail(device.index, "implausible memory size " + std::to_string(device.memory_mib) +
                                 " MiB (more than 16 TiB)");
    return;
  }
  device.manufacturer = manufacturer_;
  if (!device.numa_node && device.pci_bus_id) device.numa_node = SysfsNumaNode(sysfs_root_, *device.pci_bus_id);
  out_->devices.push_back(std::move(device));
}

}  // namespace gpustack

#include "rocm-smi.h"

#include <cstdio>
#include <vector>

#include "common.h"
#include "library.h"
#include "symbols.h"
#include "sysfs.h"
#include "text.h"

namespace gpustack {
namespace {

using Status = int;
constexpr Status kSuccess = 0;
constexpr uint64_t kInitAllGpus = 1;  // RSMI_INIT_FLAG_ALL_GPUS
constexpr int kMemoryVram = 0;        // RSMI_MEM_TYPE_VRAM
constexpr int kComponentDriver = 0;   // RSMI_SW_COMP_DRIVER
constexpr unsigned kNameSize = 256;
constexpr uint32_t kVersionSize = 256;

struct Api {
  Status (*init)(uint64_t) = nullptr;
  Status (*shutdown)() = nullptr;
  Status (*count)(uint32_t*) = nullptr;
  Status (*name)(uint32_t, char*, size_t) = nullptr;
  Status (*memory_total)(uint32_t, int, uint64_t*) = nullptr;
  Status (*unique_id)(uint32_t, uint64_t*) = nullptr;
  Status (*pci_id)(uint32_t, uint64_t*) = nullptr;
  Status (*numa)(uint32_t, uint32_t*) = nullptr;
  Status (*gfx)(uint32_t, uint64_t*) = nullptr;
  Status (*vendor)(uint32_t, uint16_t*) = nullptr;
  Status (*version_string)(int, char*, uint32_t) = nullptr;
  Status (*status_string)(Status, const char**) = nullptr;
};

std::vector<Symbol> Symbols(Api* api) {
  return {
      {{"rsmi_init"}, Slot(&api->init)},
      {{"rsmi_shut_down"}, Slot(&api->shutdown)},
      {{"rsmi_num_monitor_devices"}, Slot(&api->count)},
      {{"rsmi_dev_name_get"}, Slot(&api->name)},
      {{"rsmi_dev_memory_total_get"}, Slot(&api->memory_total)},
      {{"rsmi_dev_unique_id_get"}, Slot(&api->unique_id), Need::kOptional},
      {{"rsmi_dev_pci_id_get"}, Slot(&api->pci_id), Need::kOptional},
      {{"rsmi_topo_get_numa_node_number"}, Slot(&api->numa), Need::kOptional},
      {{"rsmi_dev_target_graphics_version_get"}, Slot(&api->gfx), Need::kOptional},
      {{"rsmi_dev_vendor_id_get"}, Slot(&api->vendor), Need::kOptional},
      {{"rsmi_version_str_get"}, Slot(&api->version_string), Need::kOptional},
      {{"rsmi_status_string"}, Slot(&api->status_string), Need::kOptional},
  };
}

// BDF packed as domain 63..32, bus 15..8, device 7..3, function 2..0.
std::string UnpackBdf(uint64_t packed) {
  return FormatBdf(packed >> 32, (packed >> 8) & 0xff, (packed >> 3) & 0x1f, packed & 0x7);
}

void ReadOptionalFields(const Api& api, uint32_t index, Device* device) {
  uint64_t value = 0;
  char text[32];
  if (api.unique_id != nullptr && api.unique_id(index, &value) == kSuccess && value != 0) {
    std::snprintf(text, sizeof text, "GPU-%016llx", static_cast<unsigned long long>(value));
    device->uuid = text;
  }
  if (api.pci_id != nullptr && api.pci_id(index, &value) == kSuccess) device->pci_bus_id = UnpackBdf(value);
  if (api.gfx != nullptr && api.gfx(index, &value) == kSuccess) device->compute_capability = GfxTarget(value);
  uint32_t node = 0;
  if (api.numa != nullptr && api.numa(index, &node) == kSuccess && node < 4096) {
    device->numa_node = static_cast<int32_t>(node);
  }
}

bool ReadDevice(const Api& api, uint32_t index, Device* device, std::string* why) {
  auto name = [&](char* text, unsigned size) { return api.name(index, text, size); };
  if (!ReadText(name, kNameSize, "rsmi_dev_name_get", api.status_string, &device->product, why)) return false;
  uint64_t bytes = 0;
  Status status = api.memory_total(index, kMemoryVram, &bytes);
  if (status != kSuccess) {
    *why = "rsmi_dev_memory_total_get: " + Describe(api.status_string, status);
    return false;
  }
  device->index = index;
  device->memory_mib = BytesToMiB(bytes);
  ReadOptionalFields(api, index, device);
  return true;
}

bool IsOtherVendor(const Api& api, uint32_t index, uint16_t wanted) {
  uint16_t vendor = 0;
  return api.vendor != nullptr && api.vendor(index, &vendor) == kSuccess && vendor != wanted;
}

std::optional<std::string> DriverVersion(const Api& api) {
  if (api.version_string == nullptr) return std::nullopt;
  return OptionalText([&](char* text, uint32_t size) { return api.version_string(kComponentDriver, text, size); },
                      kVersionSize);
}

void Enumerate(const RocmSmiTarget& target, const Api& api, Report& report) {
  uint32_t count = 0;
  Status status = api.count(&count);
  if (status != kSuccess) {
    report.Fail(ErrorCode::kCallFailed, "rsmi_num_monitor_devices: " + Describe(api.status_string, status));
    return;
  }
  if (count > kMaxDevices) {
    report.Fail(ErrorCode::kCallFailed, "implausible device count " + std::to_string(count));
    return;
  }
  auto driver = DriverVersion(api);
  for (uint32_t i = 0; i < count; ++i) {
    if (IsOtherVendor(api, i, target.pci_vendor_id)) continue;
    Device device;
    std::string why;
    if (!ReadDevice(api, i, &device, &why)) {
      report.DeviceFail(i, why);
      continue;
    }
    device.driver_version = driver;
    device.runtime_version = target.runtime_version;
    report.Add(std::move(device));
  }
}

}  // namespace

bool IsRocmSmi(const Library& library) { return library.Raw("rsmi_init") != nullptr; }

std::optional<std::string> GfxTarget(uint64_t raw) {
  if (raw == 0 || raw == ~uint64_t{0}) return std::nullopt;
  char text[32];
  if (raw < 2000) {
    std::snprintf(text, sizeof text, "gfx%llu", static_cast<unsigned long long>(raw));
  } else {
    std::snprintf(text, sizeof text, "gfx%llx", static_cast<unsigned long long>(raw));
  }
  return std::string(text);
}

std::optional<std::string> RocmRelease(const DetectContext& context, const std::string& root) {
  auto file = context.OnHost(root + "/.info/version");
  if (!file) return std::nullopt;
  auto line = ReadFirstLine(*file);
  if (!line) return std::nullopt;
  return MajorMinor(*line);
}

void DetectRocmSmi(const RocmSmiTarget& target, const Library& library, Report& report) {
  Api api;
  if (!BindSymbols(library, Symbols(&api), report)) return;
  Status status = api.init(kInitAllGpus);
  if (status != kSuccess) {
    report.Fail(ErrorCode::kInitFailed, "rsmi_init failed: " + Describe(api.status_string, status));
    return;
  }
  Enumerate(target, api, report);
  api.shutdown();
}

}  // namespace gpustack

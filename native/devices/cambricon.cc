#include <cstdint>
#include <vector>

#include "common.h"
#include "enumerators.h"
#include "environment.h"
#include "library.h"
#include "symbols.h"
#include "sysfs.h"
#include "text.h"

namespace gpustack {
namespace {

// CNDev ABI (cndev.h). Getters take the struct first and the device second; versioned
// structs carry CNDEV_VERSION_6 in their first field. Memory is in MB.
using Ret = int;
constexpr Ret kSuccess = 0;
constexpr Ret kLowDriverVersion = 2;
constexpr Ret kUnsupportedApiVersion = 3;
constexpr int kApiVersion = 6;

struct CardInfo {
  int version;
  unsigned number;
};
struct Uuid {
  int version;
  unsigned char uuid[37];
  unsigned long long ncs_uuid64;
};
static_assert(sizeof(Uuid) == 56, "cndevUUID_t");
struct MemoryInfoV2 {
  int64_t physical_total, physical_used, reserved_memory, virtual_total, virtual_used;
  uint64_t global_memory;
  uint64_t reserved[16];
};
static_assert(sizeof(MemoryInfoV2) == 176, "cndevMemoryInfoV2_t");
struct VersionInfo {
  int version;
  unsigned mcu_major, mcu_minor, mcu_build, driver_major, driver_minor, driver_build;
};
static_assert(sizeof(VersionInfo) == 28, "cndevVersionInfo_t");
struct CardName {
  int version;
  int id;
};
struct PcieInfoV2 {
  uint32_t subsystem_id, device_id;
  uint16_t vendor, subsystem_vendor;
  uint32_t domain, bus, device, function;
  uint16_t module_id, slot_id;
  uint32_t reserved[8];
};
static_assert(sizeof(PcieInfoV2) == 64, "cndevPCIeInfoV2_t");
struct NumaNodeId {
  int version;
  int node_id;
};

struct Api {
  Ret (*init)(int) = nullptr;
  Ret (*release)() = nullptr;
  Ret (*count)(CardInfo*) = nullptr;
  Ret (*handle)(int, int*) = nullptr;
  const char* (*name_by_device)(int) = nullptr;
  Ret (*card_name)(CardName*, int) = nullptr;
  const char* (*card_name_string)(int) = nullptr;
  Ret (*uuid)(Uuid*, int) = nullptr;
  Ret (*memory)(MemoryInfoV2*, int) = nullptr;
  Ret (*pcie)(PcieInfoV2*, int) = nullptr;
  Ret (*numa)(NumaNodeId*, int) = nullptr;
  Ret (*version)(VersionInfo*, int) = nullptr;
  const char* (*error_string)(Ret) = nullptr;
};

std::vector<Symbol> Symbols(Api* api) {
  return {
      {{"cndevInit"}, Slot(&api->init)},
      {{"cndevRelease"}, Slot(&api->release)},
      {{"cndevGetDeviceCount"}, Slot(&api->count)},
      {{"cndevGetDeviceHandleByIndex"}, Slot(&api->handle), Need::kOptional},
      // Older CNDev names a card in two calls; DetectCambricon counts the pair only when both are there.
      {{"cndevGetCardNameStringByDevId"}, Slot(&api->name_by_device), Need::kRequired, "name"},
      {{"cndevGetCardName"}, Slot(&api->card_name), Need::kRequired, "name"},
      {{"cndevGetCardNameString"}, Slot(&api->card_name_string), Need::kOptional},
      {{"cndevGetUUID"}, Slot(&api->uuid), Need::kOptional},
      {{"cndevGetMemoryUsageV2"}, Slot(&api->memory)},
      {{"cndevGetPCIeInfoV2"}, Slot(&api->pcie), Need::kOptional},
      {{"cndevGetNUMANodeIdByDevId"}, Slot(&api->numa), Need::kOptional},
      {{"cndevGetVersionInfo"}, Slot(&api->version), Need::kOptional},
      {{"cndevGetErrorString"}, Slot(&api->error_string), Need::kOptional},
  };
}

bool ReadName(const Api& api, int handle, std::string* out, std::string* why) {
  const char* text = nullptr;
  if (api.name_by_device != nullptr) {
    text = api.name_by_device(handle);
  } else {
    CardName name{kApiVersion, 0};
    Ret ret = api.card_name(&name, handle);
    if (ret != kSuccess) {
      *why = "cndevGetCardName: " + Describe(api.error_string, ret);
      return false;
    }
    text = api.card_name_string(name.id);
  }
  auto name = ReadReturnedString(text);
  if (!name || name->empty()) {
    *why = "card name is missing or not NUL-terminated within 256 bytes";
    return false;
  }
  *out = *name;
  return true;
}

bool ReadMemory(const Api& api, int handle, uint64_t* mib, std::string* why) {
  MemoryInfoV2 memory{};
  Ret ret = api.memory(&memory, handle);
  if (ret != kSuccess) {
    *why = "cndevGetMemoryUsageV2: " + Describe(api.error_string, ret);
    return false;
  }
  if (memory.physical_total < 0) {
    *why = "negative memory size " + std::to_string(memory.physical_total) + " MB";
    return false;
  }
  *mib = static_cast<uint64_t>(memory.physical_total);
  return true;
}

void ReadOptionalFields(const Api& api, int handle, Device* device) {
  Uuid uuid{};
  uuid.version = kApiVersion;
  if (api.uuid != nullptr && api.uuid(&uuid, handle) == kSuccess) {
    auto text = ReadCString(reinterpret_cast<const char*>(uuid.uuid), sizeof uuid.uuid);
    if (text && !text->empty()) device->uuid = text->rfind("MLU-", 0) == 0 ? *text : "MLU-" + *text;
  }
  PcieInfoV2 pcie{};
  if (api.pcie != nullptr && api.pcie(&pcie, handle) == kSuccess) {
    device->pci_bus_id = FormatBdf(pcie.domain, pcie.bus, pcie.device, pcie.function);
  }
  NumaNodeId numa{kApiVersion, -1};
  if (api.numa != nullptr && api.numa(&numa, handle) == kSuccess && numa.node_id >= 0 && numa.node_id < 4096) {
    device->numa_node = numa.node_id;
  }
  VersionInfo version{};
  version.version = kApiVersion;
  if (api.version != nullptr && api.version(&version, handle) == kSuccess) {
    device->driver_version = std::to_string(version.driver_major) + "." + std::to_string(version.driver_minor) +
                             "." + std::to_string(version.driver_build);
  }
}

void Enumerate(const Api& api, Report& report) {
  CardInfo cards{kApiVersion, 0};
  Ret ret = api.count(&cards);
  if (ret != kSuccess) {
    report.Fail(ErrorCode::kCallFailed, "cndevGetDeviceCount: " + Describe(api.error_string, ret));
    return;
  }
  if (cards.number > kMaxDevices) {
    report.Fail(ErrorCode::kCallFailed, "implausible device count " + std::to_string(cards.number));
    return;
  }
  for (unsigned i = 0; i < cards.number; ++i) {
    // Older CNDev has no handle call: the handle is the index.
    int handle = static_cast<int>(i);
    if (api.handle != nullptr && (ret = api.handle(static_cast<int>(i), &handle)) != kSuccess) {
      report.DeviceFail(i, "cndevGetDeviceHandleByIndex: " + Describe(api.error_string, ret));
      continue;
    }
    Device device;
    device.index = i;
    std::string why;
    if (!ReadName(api, handle, &device.product, &why) || !ReadMemory(api, handle, &device.memory_mib, &why)) {
      report.DeviceFail(i, why);
      continue;
    }
    ReadOptionalFields(api, handle, &device);
    report.Add(std::move(device));
  }
}

}  // namespace

void DetectCambricon(const DetectContext& context, Report& report) {
  std::string root = InstallRoot(context.env, {"NEUWARE_HOME"}, "/usr/local/neuware");
  SearchPlan plan{{"libcndev.so"}, {root + "/lib64", root + "/lib"}};
  Library library;
  if (!OpenLibrary(context, plan, &library, report)) return;
  Api api;
  std::vector<Symbol> symbols = Symbols(&api);
  ResolveSymbols(library, symbols);
  if (api.card_name_string == nullptr) api.card_name = nullptr;
  std::string missing = MissingSymbols(symbols);
  if (!missing.empty()) {
    report.MissingSymbol(library, missing);
    return;
  }
  Ret ret = api.init(0);
  if (ret != kSuccess) {
    bool mismatch = ret == kLowDriverVersion || ret == kUnsupportedApiVersion;
    report.Fail(mismatch ? ErrorCode::kDriverMismatch : ErrorCode::kInitFailed,
                "cndevInit failed: " + Describe(api.error_string, ret));
    return;
  }
  Enumerate(api, report);
  api.release();
}

}  // namespace gpustack

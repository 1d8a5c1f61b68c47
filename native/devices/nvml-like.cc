#include "nvml-like.h"

#include <cstdint>
#include <string>

#include "common.h"
#include "library.h"
#include "symbols.h"
#include "sysfs.h"
#include "text.h"

namespace gpustack {
namespace {

// Declared here from the public nvml.h ABI so the build needs
// no vendor SDK. Sizes are asserted because the library writes through them.
using Ret = int;
using Handle = void*;
constexpr Ret kSuccess = 0;
constexpr Ret kDriverMismatchCode = 18;  // NVML_ERROR_LIB_RM_VERSION_MISMATCH
constexpr Ret kArgumentVersionMismatch = 25;  // NVML_ERROR_ARGUMENT_VERSION_MISMATCH

struct MemoryV1 {
  uint64_t total, free, used;
};
struct MemoryV2 {
  uint32_t version;
  uint64_t total, reserved, free, used;
};
static_assert(sizeof(MemoryV1) == 24, "nvmlMemory_t");
static_assert(sizeof(MemoryV2) == 40, "nvmlMemory_v2_t");
constexpr uint32_t kMemoryV2Version = sizeof(MemoryV2) | (2u << 24);
static_assert(kMemoryV2Version == 0x02000028, "nvmlMemory_v2");

struct PciInfo {
  char bus_id_legacy[16];
  uint32_t domain, bus, device, pci_device_id, pci_subsystem_id;
  char bus_id[32];
};
static_assert(sizeof(PciInfo) == 68, "nvmlPciInfo_t");
// v1 (52 bytes) and v3 agree on the integer fields we read; the spare bytes absorb any
// larger future layout.
union PciBuffer {
  PciInfo info;
  unsigned char spare[256];
};

// GPU fabric info (nvml.h: nvmlGpuFabricInfo_t for nvmlDeviceGetGpuFabricInfo; nvmlGpuFabricInfo_v2_t
// for nvmlDeviceGetGpuFabricInfoV, CUDA 12.4 headers).
// v2 puts a version word first and a health mask last; the fields between are v1's.
constexpr unsigned kFabricUuidSize = 16;  // NVML_GPU_FABRIC_UUID_LEN
constexpr unsigned char kFabricStateCompleted = 3;  // NVML_GPU_FABRIC_STATE_COMPLETED
struct FabricInfoV1 {
  unsigned char cluster_uuid[kFabricUuidSize];
  Ret status;  // nvmlReturn_t: meaningful only once the state is "completed"
  uint32_t clique_id;
  unsigned char state;  // nvmlGpuFabricState_t
};
struct FabricInfoV2 {
  uint32_t version;
  unsigned char cluster_uuid[kFabricUuidSize];
  Ret status;
  uint32_t clique_id;
  unsigned char state;
  uint32_t health_mask;
};
static_assert(sizeof(FabricInfoV1) == 28, "nvmlGpuFabricInfo_t");
static_assert(sizeof(FabricInfoV2) == 36, "nvmlGpuFabricInfo_v2_t");
// NVML_STRUCT_VERSION(GpuFabricInfo, 2)
constexpr uint32_t kFabricV2Version = sizeof(FabricInfoV2) | (2u << 24);
static_assert(kFabricV2Version == 0x02000024, "nvmlGpuFabricInfo_v2");

constexpr unsigned kNameSize = 96;           // NVML_DEVICE_NAME_V2_BUFFER_SIZE
constexpr unsigned kUuidSize = 96;           // NVML_DEVICE_UUID_V2_BUFFER_SIZE
constexpr unsigned kDriverVersionSize = 80;  // NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE
constexpr unsigned kNodeSetWords = 4;        // 256 NUMA nodes
constexpr int kAffinityScopeNode = 0;

struct Api {
  std::string init_name;
  Ret (*init)() = nullptr;
  Ret (*shutdown)() = nullptr;
  const char* (*error_string)(Ret) = nullptr;
  Ret (*count)(unsigned*) = nullptr;
  Ret (*handle)(unsigned, Handle*) = nullptr;
  Ret (*name)(Handle, char*, unsigned) = nullptr;
  Ret (*uuid)(Handle, char*, unsigned) = nullptr;
  Ret (*memory_v2)(Handle, MemoryV2*) = nullptr;
  Ret (*memory_v1)(Handle, MemoryV1*) = nullptr;
  Ret (*pci)(Handle, PciBuffer*) = nullptr;
  Ret (*compute_capability)(Handle, int*, int*) = nullptr;
  Ret (*cores)(Handle, unsigned*) = nullptr;
  Ret (*mig_mode)(Handle, unsigned*, unsigned*) = nullptr;
  Ret (*memory_affinity)(Handle, unsigned, unsigned long*, int) = nullptr;
  Ret (*driver_version)(char*, unsigned) = nullptr;
  Ret (*runtime_version)(int*) = nullptr;
  Ret (*fabric_v)(Handle, FabricInfoV2*) = nullptr;
  Ret (*fabric_v1)(Handle, FabricInfoV1*) = nullptr;
};

std::vector<Symbol> Symbols(const NvmlFlavor& flavor, Api* api) {
  const std::string& p = flavor.prefix;
  auto names = [&p](std::vector<std::string> suffixes) {
    for (auto& suffix : suffixes) suffix = p + suffix;
    return suffixes;
  };
  // Versioned names first: the unversioned ones are kept only for binary compatibility.
  std::vector<Symbol> table = {
      {names({"Init_v2", "Init"}), Slot(&api->init), Need::kRequired, nullptr, &api->init_name},
      {names({"Shutdown"}), Slot(&api->shutdown)},
      {names({"ErrorString"}), Slot(&api->error_string), Need::kOptional},
      {names({"DeviceGetCount_v2", "DeviceGetCount"}), Slot(&api->count)},
      {names({"DeviceGetHandleByIndex_v2", "DeviceGetHandleByIndex"}), Slot(&api->handle)},
      {names({"DeviceGetName"}), Slot(&api->name)},
      {names({"DeviceGetUUID"}), Slot(&api->uuid)},
      {names({"DeviceGetMemoryInfo_v2"}), Slot(&api->memory_v2), Need::kRequired, "memory"},
      {names({"DeviceGetMemoryInfo"}), Slot(&api->memory_v1), Need::kRequired, "memory"},
      {names({"DeviceGetPciInfo_v3", "DeviceGetPciInfo_v2", "DeviceGetPciInfo"}), Slot(&api->pci),
       Need::kOptional},
      {names({flavor.compute_capability_symbol}), Slot(&api->compute_capability), Need::kOptional},
      {names({"DeviceGetNumGpuCores"}), Slot(&api->cores), Need::kOptional},
      {names({"DeviceGetMemoryAffinity"}), Slot(&api->memory_affinity), Need::kOptional},
      {names({"SystemGetDriverVersion"}), Slot(&api->driver_version), Need::kOptional},
      {names(flavor.runtime_symbols), Slot(&api->runtime_version), Need::kOptional},
  };
  if (flavor.mig) table.push_back({names({"DeviceGetMigMode"}), Slot(&api->mig_mode), Need::kOptional});
  if (flavor.fabric) {
    // Two rows, not one with two names: the two take different structs.
    table.push_back({names({"DeviceGetGpuFabricInfoV"}), Slot(&api->fabric_v), Need::kOptional});
    table.push_back({names({"DeviceGetGpuFabricInfo"}), Slot(&api->fabric_v1), Need::kOptional});
  }
  return table;
}

bool ReadMemory(const Api& api, Handle handle, uint64_t* bytes, std::string* why) {
  Ret ret = -1;
  if (api.memory_v2 != nullptr) {
    MemoryV2 memory{};
    memory.version = kMemoryV2Version;
    ret = api.memory_v2(handle, &memory);
    if (ret == kSuccess) {
      *bytes = memory.total;
      return true;
    }
  }
  // _v2 can be exported yet refuse the version word on some drivers: fall back.
  if (api.memory_v1 != nullptr) {
    MemoryV1 memory{};
    ret = api.memory_v1(handle, &memory);
    if (ret == kSuccess) {
      *bytes = memory.total;
      return true;
    }
  }
  *why = "DeviceGetMemoryInfo: " + Describe(api.error_string, ret);
  return false;
}

// The card's NVLink cluster and clique, only from a registration that completed without error:
// not supported (no NVSwitch fabric), not started, in progress or failed all leave it unknown.
std::optional<Fabric> FabricOf(const unsigned char* cluster_uuid, Ret status, uint32_t clique_id,
                               unsigned char state) {
  if (state != kFabricStateCompleted || status != kSuccess) return std::nullopt;
  return Fabric{FormatUuid(cluster_uuid), clique_id};
}

std::optional<Fabric> ReadFabric(const Api& api, Handle handle) {
  Ret ret = -1;
  if (api.fabric_v != nullptr) {
    FabricInfoV2 info{};
    info.version = kFabricV2Version;
    ret = api.fabric_v(handle, &info);
    if (ret == kSuccess) return FabricOf(info.cluster_uuid, info.status, info.clique_id, info.state);
  }
  // The unversioned call: a driver before the V one, or one that refuses the v2 version word.
  if (api.fabric_v1 != nullptr && (api.fabric_v == nullptr || ret == kArgumentVersionMismatch)) {
    FabricInfoV1 info{};
    if (api.fabric_v1(handle, &info) == kSuccess)
      return FabricOf(info.cluster_uuid, info.status, info.clique_id, info.state);
  }
  return std::nullopt;
}

void ReadOptionalFields(const NvmlFlavor& flavor, const Api& api, Handle handle, Device* device) {
  if (api.pci != nullptr) {
    PciBuffer pci{};
    if (api.pci(handle, &pci) == kSuccess) {
      device->pci_bus_id = FormatBdf(pci.info.domain, pci.info.bus, pci.info.device, 0);
    }
  }
  int major = 0, minor = 0;
  if (api.compute_capability != nullptr && api.compute_capability(handle, &major, &minor) == kSuccess &&
      major >= 0 && minor >= 0 && major < 1000 && minor < 1000) {
    device->compute_capability = std::to_string(major) + "." + std::to_string(minor);
    if (flavor.nvidia_family) device->family = NvidiaFamily(major, minor);
  }
  unsigned cores = 0;
  if (api.cores != nullptr && api.cores(handle, &cores) == kSuccess) device->cores = cores;
  unsigned current = 0, pending = 0;
  if (api.mig_mode != nullptr && api.mig_mode(handle, &current, &pending) == kSuccess) {
    device->partitioning = Partitioning{"mig", current == 1};
  }
  unsigned long node_set[kNodeSetWords] = {};
  if (api.memory_affinity != nullptr &&
      api.memory_affinity(handle, kNodeSetWords, node_set, kAffinityScopeNode) == kSuccess) {
    device->numa_node = FirstSetBit(node_set, kNodeSetWords, sizeof(unsigned long) * 8);
  }
  if (flavor.fabric) device->fabric = ReadFabric(api, handle);
}

bool ReadDevice(const NvmlFlavor& flavor, const Api& api, unsigned index, Device* device, std::string* why) {
  Handle handle = nullptr;
  Ret ret = api.handle(index, &handle);
  if (ret != kSuccess) {
    *why = "DeviceGetHandleByIndex: " + Describe(api.error_string, ret);
    return false;
  }
  uint64_t bytes = 0;
  auto name = [&](char* text, unsigned size) { return api.name(handle, text, size); };
  auto uuid = [&](char* text, unsigned size) { return api.uuid(handle, text, size); };
  if (!ReadText(name, kNameSize, "DeviceGetName", api.error_string, &device->product, why) ||
      !ReadText(uuid, kUuidSize, "DeviceGetUUID", api.error_string, &device->uuid, why) ||
      !ReadMemory(api, handle, &bytes, why)) {
    return false;
  }
  device->index = index;
  device->memory_mib = BytesToMiB(bytes);
  ReadOptionalFields(flavor, api, handle, device);
  return true;
}

void ReadVersions(const Api& api, std::optional<std::string>* driver, std::optional<std::string>* runtime) {
  if (api.driver_version != nullptr) *driver = OptionalText(api.driver_version, kDriverVersionSize);
  int version = 0;
  // CUDA-style integer: major * 1000 + minor * 10 (12080 -> 12.8).
  if (api.runtime_version != nullptr && api.runtime_version(&version) == kSuccess && version > 0) {
    *runtime = std::to_string(version / 1000) + "." + std::to_string((version % 1000) / 10);
  }
}

void Enumerate(const NvmlFlavor& flavor, const Api& api, Report& report) {
  unsigned count = 0;
  Ret ret = api.count(&count);
  if (ret != kSuccess) {
    report.Fail(ErrorCode::kCallFailed, flavor.prefix + "DeviceGetCount: " + Describe(api.error_string, ret));
    return;
  }
  if (count > kMaxDevices) {
    report.Fail(ErrorCode::kCallFailed, "implausible device count " + std::to_string(count));
    return;
  }
  std::optional<std::string> driver, runtime;
  ReadVersions(api, &driver, &runtime);
  for (unsigned i = 0; i < count; ++i) {
    Device device;
    std::string why;
    if (!ReadDevice(flavor, api, i, &device, &why)) {
      report.DeviceFail(i, why);
      continue;
    }
    device.driver_version = driver;
    device.runtime_version = runtime;
    report.Add(std::move(device));
  }
}

}  // namespace

std::optional<std::string> NvidiaFamily(int major, int minor) {
  switch (major) {
    case 1: return "Tesla";
    case 2: return "Fermi";
    case 3: return "Kepler";
    case 5: return "Maxwell";
    case 6: return "Pascal";
    case 7: return minor < 5 ? "Volta" : "Turing";
    case 8: return minor < 9 ? "Ampere" : "Ada-Lovelace";
    case 9: return "Hopper";
    case 10:
    case 12: return "Blackwell";
    default: return std::nullopt;
  }
}

void DetectNvmlLike(const NvmlFlavor& flavor, const Library& library, Report& report) {
  Api api;
  if (!BindSymbols(library, Symbols(flavor, &api), report)) return;
  Ret ret = api.init();
  if (ret != kSuccess) {
    report.Fail(ret == kDriverMismatchCode ? ErrorCode::kDriverMismatch : ErrorCode::kInitFailed,
                api.init_name + " failed: " + Describe(api.error_string, ret));
    return;
  }
  Enumerate(flavor, api, report);
  // Init is reference-counted: balance it so a later detect() starts clean.
  api.shutdown();
}

}  // namespace gpustack

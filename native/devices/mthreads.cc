#include <cstdint>

#include "common.h"
#include "enumerators.h"
#include "library.h"
#include "symbols.h"
#include "sysfs.h"
#include "text.h"

namespace gpustack {
namespace {

// MTML ABI (mtml.h): an object model (library -> device -> memory, library -> system)
// of opaque pointers, each freed by its parent's call. Memory is in bytes.
using Ret = unsigned;
struct Object;
constexpr Ret kSuccess = 0;
constexpr Ret kDriverTooOld = 9;
constexpr Ret kDriverTooNew = 10;
constexpr unsigned kNameSize = 32;
constexpr unsigned kUuidSize = 48;
constexpr unsigned kDriverVersionSize = 80;

struct PciInfo {
  char sbdf[32];
  unsigned segment, bus, device, pci_device_id, pci_subsystem_id, bus_width;
  float pci_max_speed, pci_cur_speed;
  unsigned pci_max_width, pci_cur_width, pci_max_gen, pci_cur_gen;
  int rsvd[6];
};
static_assert(sizeof(PciInfo) == 104, "MtmlPciInfo");
union PciBuffer {
  PciInfo info;
  unsigned char spare[512];
};

struct Api {
  Ret (*init)(Object**) = nullptr;
  Ret (*shutdown)(Object*) = nullptr;
  Ret (*count)(const Object*, unsigned*) = nullptr;
  Ret (*device)(const Object*, unsigned, Object**) = nullptr;
  Ret (*free_device)(Object*) = nullptr;
  Ret (*name)(const Object*, char*, unsigned) = nullptr;
  Ret (*uuid)(const Object*, char*, unsigned) = nullptr;
  Ret (*pci)(const Object*, PciBuffer*) = nullptr;
  Ret (*init_memory)(const Object*, Object**) = nullptr;
  Ret (*memory_total)(const Object*, unsigned long long*) = nullptr;
  Ret (*free_memory)(Object*) = nullptr;
  Ret (*cores)(const Object*, unsigned*) = nullptr;
  Ret (*init_system)(const Object*, Object**) = nullptr;
  Ret (*driver_version)(const Object*, char*, unsigned) = nullptr;
  Ret (*free_system)(Object*) = nullptr;
  const char* (*error_string)(Ret) = nullptr;
};

std::vector<Symbol> Symbols(Api* api) {
  return {
      {{"mtmlLibraryInit"}, Slot(&api->init)},
      {{"mtmlLibraryShutDown"}, Slot(&api->shutdown)},
      {{"mtmlLibraryCountDevice"}, Slot(&api->count)},
      {{"mtmlLibraryInitDeviceByIndex"}, Slot(&api->device)},
      {{"mtmlLibraryFreeDevice"}, Slot(&api->free_device), Need::kOptional},
      {{"mtmlDeviceGetName"}, Slot(&api->name)},
      {{"mtmlDeviceGetUUID"}, Slot(&api->uuid)},
      {{"mtmlDeviceGetPciInfo"}, Slot(&api->pci), Need::kOptional},
      {{"mtmlDeviceInitMemory"}, Slot(&api->init_memory)},
      {{"mtmlMemoryGetTotal"}, Slot(&api->memory_total)},
      {{"mtmlDeviceFreeMemory"}, Slot(&api->free_memory), Need::kOptional},
      {{"mtmlDeviceCountGpuCores"}, Slot(&api->cores), Need::kOptional},
      {{"mtmlLibraryInitSystem"}, Slot(&api->init_system), Need::kOptional},
      {{"mtmlSystemGetDriverVersion"}, Slot(&api->driver_version), Need::kOptional},
      {{"mtmlLibraryFreeSystem"}, Slot(&api->free_system), Need::kOptional},
      {{"mtmlErrorString"}, Slot(&api->error_string), Need::kOptional},
  };
}

bool ReadMemory(const Api& api, const Object* device, uint64_t* mib, std::string* why) {
  Object* memory = nullptr;
  Ret ret = api.init_memory(device, &memory);
  unsigned long long bytes = 0;
  if (ret == kSuccess) ret = api.memory_total(memory, &bytes);
  if (memory != nullptr && api.free_memory != nullptr) api.free_memory(memory);
  if (ret != kSuccess) {
    *why = "mtmlMemoryGetTotal: " + Describe(api.error_string, ret);
    return false;
  }
  *mib = BytesToMiB(bytes);
  return true;
}

void ReadOptionalFields(const Api& api, const Object* handle, Device* device) {
  PciBuffer pci{};
  if (api.pci != nullptr && api.pci(handle, &pci) == kSuccess) {
    device->pci_bus_id = FormatBdf(pci.info.segment, pci.info.bus, pci.info.device, 0);
  }
  unsigned cores = 0;
  if (api.cores != nullptr && api.cores(handle, &cores) == kSuccess) device->cores = cores;
}

bool ReadDevice(const Api& api, const Object* library, unsigned index, Device* device, std::string* why) {
  Object* handle = nullptr;
  Ret ret = api.device(library, index, &handle);
  if (ret != kSuccess) {
    *why = "mtmlLibraryInitDeviceByIndex: " + Describe(api.error_string, ret);
    return false;
  }
  auto name = [&](char* text, unsigned size) { return api.name(handle, text, size); };
  auto uuid = [&](char* text, unsigned size) { return api.uuid(handle, text, size); };
  bool ok = ReadText(name, kNameSize, "mtmlDeviceGetName", api.error_string, &device->product, why) &&
            ReadText(uuid, kUuidSize, "mtmlDeviceGetUUID", api.error_string, &device->uuid, why) &&
            ReadMemory(api, handle, &device->memory_mib, why);
  if (ok) ReadOptionalFields(api, handle, device);
  if (api.free_device != nullptr) api.free_device(handle);
  device->index = index;
  return ok;
}

std::optional<std::string> DriverVersion(const Api& api, const Object* library) {
  if (api.init_system == nullptr || api.driver_version == nullptr) return std::nullopt;
  Object* system = nullptr;
  if (api.init_system(library, &system) != kSuccess) return std::nullopt;
  auto out = OptionalText([&](char* text, unsigned size) { return api.driver_version(system, text, size); },
                          kDriverVersionSize);
  if (api.free_system != nullptr) api.free_system(system);
  return out;
}

void Enumerate(const Api& api, const Object* library, Report& report) {
  unsigned count = 0;
  Ret ret = api.count(library, &count);
  if (ret != kSuccess) {
    report.Fail(ErrorCode::kCallFailed, "mtmlLibraryCountDevice: " + Describe(api.error_string, ret));
    return;
  }
  if (count > kMaxDevices) {
    report.Fail(ErrorCode::kCallFailed, "implausible device count " + std::to_string(count));
    return;
  }
  auto driver = DriverVersion(api, library);
  for (unsigned i = 0; i < count; ++i) {
    Device device;
    std::string why;
    if (!ReadDevice(api, library, i, &device, &why)) {
      report.DeviceFail(i, why);
      continue;
    }
    device.driver_version = driver;
    report.Add(std::move(device));
  }
}

}  // namespace

void DetectMthreads(const DetectContext& context, Report& report) {
  // The driver package installs libmtml.so in a system library directory (none is
  // documented); /usr/lib/mthreads is searched too, for installs that put it there.
  SearchPlan plan{{"libmtml.so"}, {"/usr/lib/mthreads"}};
  Library library;
  if (!OpenLibrary(context, plan, &library, report)) return;
  Api api;
  if (!BindSymbols(library, Symbols(&api), report)) return;
  Object* handle = nullptr;
  Ret ret = api.init(&handle);
  if (ret != kSuccess || handle == nullptr) {
    bool mismatch = ret == kDriverTooOld || ret == kDriverTooNew;
    report.Fail(mismatch ? ErrorCode::kDriverMismatch : ErrorCode::kInitFailed,
                "mtmlLibraryInit failed: " + Describe(api.error_string, ret));
    return;
  }
  Enumerate(api, handle, report);
  api.shutdown(handle);
}

}  // namespace gpustack

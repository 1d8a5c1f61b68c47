#include <cstdint>

#include "enumerators.h"

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

Api ResolveApi(const Library& lib) {
  Api api;
  Bind(lib, "mtmlLibraryInit", &api.init);
  Bind(lib, "mtmlLibraryShutDown", &api.shutdown);
  Bind(lib, "mtmlLibraryCountDevice", &api.count);
  Bind(lib, "mtmlLibraryInitDeviceByIndex", &api.device);
  Bind(lib, "mtmlLibraryFreeDevice", &api.free_device);
  Bind(lib, "mtmlDeviceGetName", &api.name);
  Bind(lib, "mtmlDeviceGetUUID", &api.uuid);
  Bind(lib, "mtmlDeviceGetPciInfo", &api.pci);
  Bind(lib, "mtmlDeviceInitMemory", &api.init_memory);
  Bind(lib, "mtmlMemoryGetTotal", &api.memory_total);
  Bind(lib, "mtmlDeviceFreeMemory", &api.free_memory);
  Bind(lib, "mtmlDeviceCountGpuCores", &api.cores);
  Bind(lib, "mtmlLibraryInitSystem", &api.init_system);
  Bind(lib, "mtmlSystemGetDriverVersion", &api.driver_version);
  Bind(lib, "mtmlLibraryFreeSystem", &api.free_system);
  Bind(lib, "mtmlErrorString", &api.error_string);
  return api;
}

std::string MissingRequired(const Api& api) {
  MissingSymbols missing;
  missing.Need(api.init != nullptr, "mtmlLibraryInit");
  missing.Need(api.shutdown != nullptr, "mtmlLibraryShutDown");
  missing.Need(api.count != nullptr, "mtmlLibraryCountDevice");
  missing.Need(api.device != nullptr, "mtmlLibraryInitDeviceByIndex");
  missing.Need(api.name != nullptr, "mtmlDeviceGetName");
  missing.Need(api.uuid != nullptr, "mtmlDeviceGetUUID");
  missing.Need(api.init_memory != nullptr, "mtmlDeviceInitMemory");
  missing.Need(api.memory_total != nullptr, "mtmlMemoryGetTotal");
  return missing.text();
}

std::string Describe(const Api& api, Ret code) {
  std::string text;
  if (api.error_string != nullptr) text = ReadReturnedString(api.error_string(code)).value_or("");
  if (text.empty()) text = "error";
  return text + " (code " + std::to_string(code) + ")";
}

bool ReadString(const Api& api, Ret (*fn)(const Object*, char*, unsigned), const Object* device, unsigned size,
                const char* what, std::string* out, std::string* why) {
  std::vector<char> buffer(size + 1, '\0');
  Ret ret = fn(device, buffer.data(), size);
  if (ret != kSuccess) {
    *why = std::string(what) + ": " + Describe(api, ret);
    return false;
  }
  auto text = ReadCString(buffer.data(), size);
  if (!text) {
    *why = std::string(what) + " is not NUL-terminated within " + std::to_string(size) + " bytes";
    return false;
  }
  *out = *text;
  return true;
}

bool ReadMemory(const Api& api, const Object* device, uint64_t* mib, std::string* why) {
  Object* memory = nullptr;
  Ret ret = api.init_memory(device, &memory);
  unsigned long long bytes = 0;
  if (ret == kSuccess) ret = api.memory_total(memory, &bytes);
  if (memory != nullptr && api.free_memory != nullptr) api.free_memory(memory);
  if (ret != kSuccess) {
    *why = "mtmlMemoryGetTotal: " + Describe(api, ret);
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
    *why = "mtmlLibraryInitDeviceByIndex: " + Describe(api, ret);
    return false;
  }
  bool ok = ReadString(api, api.name, handle, kNameSize, "mtmlDeviceGetName", &device->product, why) &&
            ReadString(api, api.uuid, handle, kUuidSize, "mtmlDeviceGetUUID", &device->uuid, why) &&
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
  char buffer[kDriverVersionSize + 1] = {};
  std::optional<std::string> out;
  if (api.driver_version(system, buffer, kDriverVersionSize) == kSuccess) {
    auto text = ReadCString(buffer, kDriverVersionSize);
    if (text && !text->empty()) out = text;
  }
  if (api.free_system != nullptr) api.free_system(system);
  return out;
}

void Enumerate(const Api& api, const Object* library, Report& report) {
  unsigned count = 0;
  Ret ret = api.count(library, &count);
  if (ret != kSuccess) {
    report.Fail(ErrorCode::kCallFailed, "mtmlLibraryCountDevice: " + Describe(api, ret));
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

void DetectMthreads(const Environment& env, Report& report) {
  // The driver package installs libmtml.so on the loader path (no documented directory).
  SearchPlan plan{{"libmtml.so"}, {"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64"}};
  Library library;
  if (!OpenLibrary(env, plan, &library, report)) return;
  Api api = ResolveApi(library);
  std::string missing = MissingRequired(api);
  if (!missing.empty()) {
    report.MissingSymbol(library, missing);
    return;
  }
  Object* handle = nullptr;
  Ret ret = api.init(&handle);
  if (ret != kSuccess || handle == nullptr) {
    bool mismatch = ret == kDriverTooOld || ret == kDriverTooNew;
    report.Fail(mismatch ? ErrorCode::kDriverMismatch : ErrorCode::kInitFailed,
                "mtmlLibraryInit failed: " + Describe(api, ret));
    return;
  }
  Enumerate(api, handle, report);
  api.shutdown(handle);
}

}  // namespace gpustack

#include <cstdint>

#include "common.h"
#include "enumerators.h"
#include "environment.h"
#include "library.h"
#include "symbols.h"
#include "sysfs.h"
#include "text.h"

namespace gpustack {
namespace {

// MXSML ABI (MxSml.h). Memory is in KiB; mxSmlGetDeviceCount returns the count itself.
using Ret = unsigned;
constexpr Ret kSuccess = 0;
constexpr int kModeVirtualFunction = 2;  // MXSML_Virtualization_Mode_Vf
constexpr int kVersionDriver = 1;        // MXSML_Version_Driver
constexpr unsigned kVersionSize = 64;
constexpr unsigned kNodeSetWords = 4;

struct DeviceInfo {
  unsigned device_id;
  int type;
  char bdf_id[32];
  unsigned gpu_id;
  unsigned node_id;
  char uuid[96];
  int brand;
  int mode;
  char device_name[32];
};
static_assert(sizeof(DeviceInfo) == 184, "mxSmlDeviceInfo_t");
struct MemoryInfo {
  long vis_vram_total, vis_vram_use, vram_total, vram_use, xtt_total, xtt_use;
};

struct Api {
  Ret (*init)() = nullptr;
  unsigned (*count)() = nullptr;
  Ret (*info)(unsigned, DeviceInfo*) = nullptr;
  Ret (*memory)(unsigned, MemoryInfo*) = nullptr;
  // Declared with unsigned words; the buffer passed is large enough for unsigned long.
  Ret (*node_affinity)(unsigned, unsigned, unsigned*) = nullptr;
  Ret (*device_version)(unsigned, int, char*, unsigned*) = nullptr;
  Ret (*maca_version)(char*, unsigned*) = nullptr;
  const char* (*error_string)(Ret) = nullptr;
};

std::vector<Symbol> Symbols(Api* api) {
  return {
      {{"mxSmlInit"}, Slot(&api->init)},
      {{"mxSmlGetDeviceCount"}, Slot(&api->count)},
      {{"mxSmlGetDeviceInfo"}, Slot(&api->info)},
      {{"mxSmlGetMemoryInfo"}, Slot(&api->memory)},
      {{"mxSmlGetNodeAffinity"}, Slot(&api->node_affinity), Need::kOptional},
      {{"mxSmlGetDeviceVersion"}, Slot(&api->device_version), Need::kOptional},
      {{"mxSmlGetMacaVersion"}, Slot(&api->maca_version), Need::kOptional},
      {{"mxSmlGetErrorString"}, Slot(&api->error_string), Need::kOptional},
  };
}

// "MXC500" -> "MXC" (gpustack guesses the family from the name: C, N or G series).
std::optional<std::string> MetaxFamily(const std::string& name) {
  if (name.size() >= 3 && name.compare(0, 2, "MX") == 0 && std::string("CNG").find(name[2]) != std::string::npos) {
    return name.substr(0, 3);
  }
  return std::nullopt;
}

void ReadOptionalFields(const Api& api, unsigned id, const DeviceInfo& info, Device* device) {
  device->family = MetaxFamily(device->product);
  if (auto bdf = ReadCString(info.bdf_id, sizeof info.bdf_id)) device->pci_bus_id = NormalizeBdf(*bdf);
  unsigned long node_set[kNodeSetWords] = {};
  if (api.node_affinity != nullptr &&
      api.node_affinity(id, kNodeSetWords, reinterpret_cast<unsigned*>(node_set)) == kSuccess) {
    device->numa_node = FirstSetBit(node_set, kNodeSetWords, sizeof(unsigned long) * 8);
  }
  if (api.device_version != nullptr) {
    // The length goes in as the buffer size and comes back as the text's.
    device->driver_version = OptionalText(
        [&](char* text, unsigned size) { return api.device_version(id, kVersionDriver, text, &size); }, kVersionSize);
  }
}

bool ReadDevice(const Api& api, unsigned id, Device* device, bool* skip, std::string* why) {
  DeviceInfo info{};
  Ret ret = api.info(id, &info);
  if (ret != kSuccess) {
    *why = "mxSmlGetDeviceInfo: " + Describe(api.error_string, ret);
    return false;
  }
  // A VF is a slice of a physical card already counted through its PF.
  if (info.mode == kModeVirtualFunction) {
    *skip = true;
    return false;
  }
  auto name = ReadCString(info.device_name, sizeof info.device_name);
  auto uuid = ReadCString(info.uuid, sizeof info.uuid);
  if (!name || !uuid) {
    *why = "mxSmlGetDeviceInfo: deviceName or uuid is not NUL-terminated";
    return false;
  }
  MemoryInfo memory{};
  ret = api.memory(id, &memory);
  if (ret != kSuccess || memory.vram_total < 0) {
    *why = "mxSmlGetMemoryInfo: " + (ret != kSuccess ? Describe(api.error_string, ret) : "negative memory size");
    return false;
  }
  device->index = id;
  device->product = *name;
  device->uuid = *uuid;
  device->memory_mib = KiBToMiB(static_cast<uint64_t>(memory.vram_total));
  ReadOptionalFields(api, id, info, device);
  return true;
}

void Enumerate(const Api& api, Report& report) {
  unsigned count = api.count();
  if (count > kMaxDevices) {
    report.Fail(ErrorCode::kCallFailed, "implausible device count " + std::to_string(count));
    return;
  }
  std::optional<std::string> runtime;
  if (api.maca_version != nullptr) {
    auto maca = OptionalText([&](char* text, unsigned size) { return api.maca_version(text, &size); }, kVersionSize);
    if (maca) runtime = MajorMinor(*maca).value_or(*maca);
  }
  for (unsigned id = 0; id < count; ++id) {
    Device device;
    bool skip = false;
    std::string why;
    if (!ReadDevice(api, id, &device, &skip, &why)) {
      if (!skip) report.DeviceFail(id, why);
      continue;
    }
    device.runtime_version = runtime;
    report.Add(std::move(device));
  }
}

}  // namespace

void DetectMetax(const DetectContext& context, Report& report) {
  std::string maca = InstallRoot(context.env, {"MACA_HOME"}, "/opt/maca");
  SearchPlan plan{{"libmxsml.so"}, {"/opt/mxdriver/lib", maca + "/lib", maca + "/lib64", "/opt/mxn100/lib"}};
  Library library;
  if (!OpenLibrary(context, plan, &library, report)) return;
  Api api;
  if (!BindSymbols(library, Symbols(&api), report)) return;
  Ret ret = api.init();
  if (ret != kSuccess) {
    report.Fail(ErrorCode::kInitFailed, "mxSmlInit failed: " + Describe(api.error_string, ret));
    return;
  }
  // mxSmlShutdown is optional in MXSML and holds nothing we need to release.
  Enumerate(api, report);
}

}  // namespace gpustack

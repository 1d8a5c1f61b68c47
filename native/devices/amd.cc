#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "common.h"
#include "enumerators.h"
#include "environment.h"
#include "library.h"
#include "rocm-smi.h"
#include "symbols.h"
#include "sysfs.h"
#include "text.h"

namespace gpustack {
namespace {

// AMD SMI ABI (amdsmi.h, AMD SMI 24.6 / ROCm 6.2 and later), declared here so the build
// needs no ROCm.
using Status = int;
using Handle = void*;
constexpr Status kSuccess = 0;
constexpr uint64_t kInitAmdGpus = uint64_t{1} << 1;  // AMDSMI_INIT_AMD_GPUS
constexpr int kProcessorAmdGpu = 1;                  // AMDSMI_PROCESSOR_TYPE_AMD_GPU
constexpr int kMemoryVram = 0;                       // AMDSMI_MEM_TYPE_VRAM
constexpr unsigned kUuidSize = 64;
constexpr uint32_t kUnsupported32 = 0xffffffffu;

struct AsicInfo {
  char market_name[256];
  uint32_t vendor_id;
  char vendor_name[256];
  uint32_t subvendor_id;
  uint64_t device_id;
  uint32_t rev_id;
  char asic_serial[256];
  uint32_t oam_id;
  uint32_t num_of_compute_units;
  uint64_t target_graphics_version;
  uint32_t subsystem_id;
  uint32_t reserved[21];
};
static_assert(sizeof(AsicInfo) == 896, "amdsmi_asic_info_t");
static_assert(offsetof(AsicInfo, num_of_compute_units) == 792, "amdsmi_asic_info_t");
// The struct changed across AMD SMI releases (market_name stayed first): a generous
// zeroed buffer means an older or newer library never writes past our memory.
union AsicBuffer {
  AsicInfo info;
  unsigned char spare[4096];
};
union DriverBuffer {
  char driver_version[256];  // first field of amdsmi_driver_info_t in every release
  unsigned char spare[4096];
};
struct VramUsage {
  uint32_t vram_total;  // MB
  uint32_t vram_used;
  uint32_t reserved[2];
};

struct Api {
  Status (*init)(uint64_t) = nullptr;
  Status (*shutdown)() = nullptr;
  Status (*sockets)(uint32_t*, Handle*) = nullptr;
  Status (*processors)(Handle, uint32_t*, Handle*) = nullptr;
  Status (*processor_type)(Handle, int*) = nullptr;
  Status (*asic_info)(Handle, AsicBuffer*) = nullptr;
  Status (*uuid)(Handle, unsigned*, char*) = nullptr;
  Status (*bdf)(Handle, uint64_t*) = nullptr;
  Status (*memory_total)(Handle, int, uint64_t*) = nullptr;
  Status (*vram_usage)(Handle, VramUsage*) = nullptr;
  Status (*numa)(Handle, uint32_t*) = nullptr;
  Status (*driver_info)(Handle, DriverBuffer*) = nullptr;
  Status (*status_string)(Status, const char**) = nullptr;
};

std::vector<Symbol> Symbols(Api* api) {
  return {
      {{"amdsmi_init"}, Slot(&api->init)},
      {{"amdsmi_shut_down"}, Slot(&api->shutdown)},
      {{"amdsmi_get_socket_handles"}, Slot(&api->sockets)},
      {{"amdsmi_get_processor_handles"}, Slot(&api->processors)},
      {{"amdsmi_get_processor_type"}, Slot(&api->processor_type), Need::kOptional},
      {{"amdsmi_get_gpu_asic_info"}, Slot(&api->asic_info)},
      {{"amdsmi_get_gpu_device_uuid"}, Slot(&api->uuid), Need::kOptional},
      {{"amdsmi_get_gpu_device_bdf"}, Slot(&api->bdf), Need::kOptional},
      {{"amdsmi_get_gpu_memory_total"}, Slot(&api->memory_total), Need::kRequired, "memory"},
      {{"amdsmi_get_gpu_vram_usage"}, Slot(&api->vram_usage), Need::kRequired, "memory"},
      {{"amdsmi_topo_get_numa_node_number"}, Slot(&api->numa), Need::kOptional},
      {{"amdsmi_get_gpu_driver_info"}, Slot(&api->driver_info), Need::kOptional},
      {{"amdsmi_status_code_to_string"}, Slot(&api->status_string), Need::kOptional},
  };
}

// The library answers "how many" when called with a null array, then fills the array.
bool ListHandles(const Api& api, const std::function<Status(uint32_t*, Handle*)>& call, std::vector<Handle>* out,
                 std::string* why) {
  uint32_t count = 0;
  Status status = call(&count, nullptr);
  if (status != kSuccess) {
    *why = Describe(api.status_string, status);
    return false;
  }
  if (count > kMaxDevices) {
    *why = "implausible count " + std::to_string(count);
    return false;
  }
  out->assign(count, nullptr);
  if (count == 0) return true;
  uint32_t filled = count;
  status = call(&filled, out->data());
  if (status != kSuccess) {
    *why = Describe(api.status_string, status);
    return false;
  }
  out->resize(filled < count ? filled : count);
  return true;
}

bool CollectGpus(const Api& api, std::vector<Handle>* gpus, Report& report) {
  std::vector<Handle> sockets;
  std::string why;
  if (!ListHandles(api, [&](uint32_t* n, Handle* h) { return api.sockets(n, h); }, &sockets, &why)) {
    report.Fail(ErrorCode::kCallFailed, "amdsmi_get_socket_handles: " + why);
    return false;
  }
  for (Handle socket : sockets) {
    std::vector<Handle> processors;
    if (!ListHandles(api, [&](uint32_t* n, Handle* h) { return api.processors(socket, n, h); }, &processors, &why)) {
      report.Fail(ErrorCode::kCallFailed, "amdsmi_get_processor_handles: " + why);
      return false;
    }
    for (Handle processor : processors) {
      int type = kProcessorAmdGpu;
      if (api.processor_type != nullptr && api.processor_type(processor, &type) == kSuccess &&
          type != kProcessorAmdGpu) {
        continue;
      }
      if (gpus->size() >= kMaxDevices) break;
      gpus->push_back(processor);
    }
  }
  return true;
}

bool ReadMemoryMiB(const Api& api, Handle gpu, uint64_t* mib, std::string* why) {
  Status status = -1;
  uint64_t bytes = 0;
  if (api.memory_total != nullptr && (status = api.memory_total(gpu, kMemoryVram, &bytes)) == kSuccess) {
    *mib = BytesToMiB(bytes);
    return true;
  }
  VramUsage usage{};
  if (api.vram_usage != nullptr && (status = api.vram_usage(gpu, &usage)) == kSuccess) {
    *mib = usage.vram_total;  // already MB
    return true;
  }
  *why = "amdsmi_get_gpu_memory_total: " + Describe(api.status_string, status);
  return false;
}

void ReadOptionalFields(const Api& api, Handle gpu, const AsicInfo& asic, Device* device) {
  if (asic.num_of_compute_units != kUnsupported32 && asic.num_of_compute_units < 1000000) {
    device->cores = asic.num_of_compute_units;
  }
  device->compute_capability = GfxTarget(asic.target_graphics_version);
  char uuid[kUuidSize + 1] = {};
  unsigned length = kUuidSize;
  if (api.uuid != nullptr && api.uuid(gpu, &length, uuid) == kSuccess) {
    device->uuid = ReadCString(uuid, kUuidSize).value_or("");
  }
  uint64_t bdf = 0;  // amdsmi_bdf_t: function 3 bits, device 5, bus 8, domain 48
  if (api.bdf != nullptr && api.bdf(gpu, &bdf) == kSuccess) {
    device->pci_bus_id = FormatBdf(bdf >> 16, (bdf >> 8) & 0xff, (bdf >> 3) & 0x1f, bdf & 0x7);
  }
  uint32_t node = 0;
  if (api.numa != nullptr && api.numa(gpu, &node) == kSuccess && node < 4096) {
    device->numa_node = static_cast<int32_t>(node);
  }
  DriverBuffer driver{};
  if (api.driver_info != nullptr && api.driver_info(gpu, &driver) == kSuccess) {
    auto text = ReadCString(driver.driver_version, sizeof driver.driver_version);
    if (text && !text->empty()) device->driver_version = text;
  }
}

bool ReadDevice(const Api& api, Handle gpu, uint32_t index, Device* device, std::string* why) {
  AsicBuffer asic{};
  Status status = api.asic_info(gpu, &asic);
  if (status != kSuccess) {
    *why = "amdsmi_get_gpu_asic_info: " + Describe(api.status_string, status);
    return false;
  }
  auto product = ReadCString(asic.info.market_name, sizeof asic.info.market_name);
  if (!product) {
    *why = "market_name is not NUL-terminated within 256 bytes";
    return false;
  }
  if (!ReadMemoryMiB(api, gpu, &device->memory_mib, why)) return false;
  device->index = index;
  device->product = *product;
  ReadOptionalFields(api, gpu, asic.info, device);
  return true;
}

void DetectAmdSmi(const DetectContext& context, const Library& library, Report& report) {
  Api api;
  if (!BindSymbols(library, Symbols(&api), report)) return;
  Status status = api.init(kInitAmdGpus);
  if (status != kSuccess) {
    report.Fail(ErrorCode::kInitFailed, "amdsmi_init failed: " + Describe(api.status_string, status));
    return;
  }
  std::vector<Handle> gpus;
  if (CollectGpus(api, &gpus, report)) {
    auto runtime = RocmRelease(context, InstallRoot(context.env, {"ROCM_PATH", "ROCM_HOME"}, "/opt/rocm"));
    for (uint32_t i = 0; i < gpus.size(); ++i) {
      Device device;
      std::string why;
      if (!ReadDevice(api, gpus[i], i, &device, &why)) {
        report.DeviceFail(i, why);
        continue;
      }
      device.runtime_version = runtime;
      report.Add(std::move(device));
    }
  }
  api.shutdown();
}

// AMD SMI first, ROCm SMI for older ROCm. Only one of the two is ever loaded, which
// also sidesteps their load-order trouble.
bool OpenAmdLibrary(const DetectContext& context, Library* library, Report& report) {
  const Environment& env = context.env;
  std::string root = InstallRoot(env, {"ROCM_PATH", "ROCM_HOME"}, "/opt/rocm");
  SearchPlan amd_smi{{"libamd_smi.so"}, {EnvValue(env, "AMD_SMI_LIB_PATH"), root + "/lib"}};
  SearchPlan rocm_smi{{"librocm_smi64.so"},
                      {EnvValue(env, "ROCM_SMI_LIB_PATH"), root + "/lib", root + "/rocm_smi/lib"}};
  if (!EnvValue(env, OverrideVariable("amd")).empty()) return OpenLibrary(context, amd_smi, library, report);
  OpenFailure amd, rocm;
  if (library->Open(LibraryCandidates(context, "amd", amd_smi), &amd, context.before_load)) return true;
  if (library->Open(LibraryCandidates(context, "amd", rocm_smi), &rocm, context.before_load)) return true;
  bool damaged = amd.code == ErrorCode::kInvalidLibrary || rocm.code == ErrorCode::kInvalidLibrary;
  report.Fail(damaged ? ErrorCode::kInvalidLibrary : ErrorCode::kLibraryNotFound, amd.why + "; " + rocm.why);
  return false;
}

}  // namespace

void DetectAmd(const DetectContext& context, Report& report) {
  Library library;
  if (!OpenAmdLibrary(context, &library, report)) return;
  if (library.Raw("amdsmi_init") != nullptr) {
    DetectAmdSmi(context, library, report);
  } else if (IsRocmSmi(library)) {
    auto runtime = RocmRelease(context, InstallRoot(context.env, {"ROCM_PATH", "ROCM_HOME"}, "/opt/rocm"));
    DetectRocmSmi(RocmSmiTarget{0x1002, runtime}, library, report);
  } else {
    report.MissingSymbol(library, "amdsmi_init (or rsmi_init)");
  }
}

}  // namespace gpustack

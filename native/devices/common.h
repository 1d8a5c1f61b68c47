// Shared vocabulary of the device enumerators: plain C++, no Node headers, so the
// enumerators build and run without Node (see CMakeLists.txt).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace gpustack {

// Manufacturer keys, sorted: the order of results.
constexpr const char* kManufacturers[] = {"amd",      "ascend",   "cambricon", "hygon", "iluvatar",
                                          "metax",    "mthreads", "nvidia",    "thead"};

enum class ErrorCode {
  kLibraryNotFound,
  kInvalidLibrary,
  kSymbolNotFound,
  kInitFailed,
  kDriverMismatch,
  kCallFailed,
};

// The exact strings of native/types.ts `DeviceErrorCode`.
const char* ErrorCodeName(ErrorCode code);

// Hardware partitioning of a card. Only NVML-shaped libraries (NVIDIA, T-Head) report it:
// mode "mig", enabled = the current (not pending) MIG mode.
struct Partitioning {
  std::string mode;
  bool enabled = false;
};

// Where a card sits in an NVLink fabric (NVML's GPU fabric info, GB200 NVL72 and the like): the
// fabric's cluster and the card's clique in it, which GPU Feature Discovery publishes as
// nvidia.com/gpu.clique. Present only once the card's registration with the fabric manager
// completed without error.
struct Fabric {
  std::string cluster_uuid;  // 8-4-4-4-12, lowercase hex
  uint32_t clique_id = 0;
};

struct Device {
  std::string manufacturer;
  uint32_t index = 0;
  std::string uuid;  // empty when the library cannot tell
  std::string product;
  uint64_t memory_mib = 0;
  uint32_t cores = 0;  // 0 = unknown
  std::optional<std::string> compute_capability;
  std::optional<std::string> family;
  std::optional<std::string> pci_bus_id;  // sysfs form: 0000:18:00.0
  std::optional<int32_t> numa_node;
  std::optional<std::string> driver_version;
  std::optional<std::string> runtime_version;
  std::optional<Partitioning> partitioning;
  std::optional<Fabric> fabric;
};

struct DeviceError {
  std::string manufacturer;
  ErrorCode code = ErrorCode::kCallFailed;
  std::string message;
};

struct DetectResult {
  std::vector<Device> devices;
  std::vector<DeviceError> errors;
};

// Bounds that turn hostile library answers into error entries instead of garbage.
constexpr uint32_t kMaxDevices = 1024;
constexpr uint64_t kMaxMemoryMiB = uint64_t{16} << 20;  // 16 TiB per card

inline uint64_t BytesToMiB(uint64_t bytes) { return bytes >> 20; }
inline uint64_t KiBToMiB(uint64_t kib) { return kib >> 10; }

}  // namespace gpustack

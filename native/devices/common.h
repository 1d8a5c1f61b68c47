// Shared vocabulary of the device enumerators: plain C++, no Node headers, so the
// enumerators build and run without Node (see CMakeLists.txt).
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
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

// Values of the environment variables the enumerators consult, copied on the JS thread
// so the worker thread never races a concurrent setenv().
using Environment = std::map<std::string, std::string>;
Environment CaptureEnvironment();
std::string EnvValue(const Environment& env, const std::string& name);
// First of `variables` that is set, else `fallback` (a vendor's default install root).
std::string InstallRoot(const Environment& env, const std::vector<std::string>& variables,
                        const std::string& fallback);

// Bounds that turn hostile library answers into error entries instead of garbage.
constexpr uint32_t kMaxDevices = 1024;
constexpr uint64_t kMaxMemoryMiB = uint64_t{16} << 20;  // 16 TiB per card

inline uint64_t BytesToMiB(uint64_t bytes) { return bytes >> 20; }
inline uint64_t KiBToMiB(uint64_t kib) { return kib >> 10; }

// Reads a C string the library wrote into a caller buffer of `capacity` bytes. nullopt
// when no NUL lies inside the buffer (a hostile or buggy library): the caller allocates
// capacity + 1 zeroed bytes, so reading never runs past the buffer either way.
std::optional<std::string> ReadCString(const char* buffer, size_t capacity);
// Same for a pointer the library returns; reads at most `limit` bytes.
std::optional<std::string> ReadReturnedString(const char* text, size_t limit = 256);

std::string Trim(const std::string& text);
std::string FormatBdf(uint64_t domain, uint32_t bus, uint32_t device, uint32_t function);
// Accepts [domain:]bus:device.function in any case and width; nullopt if malformed.
std::optional<std::string> NormalizeBdf(const std::string& text);
// Where sysfs is mounted: GPUSTACK_SYSFS_ROOT (a test seam, and for agents that mount the
// host's /sys elsewhere), else /sys.
std::string SysfsRoot(const Environment& env);
// <sysfs>/bus/pci/devices/<bdf>/numa_node; nullopt for -1 ("no affinity") or no file.
std::optional<int32_t> SysfsNumaNode(const std::string& sysfs_root, const std::string& bdf);
// Lowest set bit of a NUMA node bitmask of `words` entries of `word_bits` bits each.
std::optional<int32_t> FirstSetBit(const void* mask, size_t words, size_t word_bits);
// "12.8.1" -> "12.8"; empty or unparsable -> nullopt.
std::optional<std::string> MajorMinor(const std::string& version);
std::optional<std::string> ReadFirstLine(const std::string& path);

// Whether a file can be handed to dlopen() without risk to the process. glibc maps every
// loadable segment straight from the file: a segment that runs past the end of a truncated
// file maps pages with nothing behind them, and the loader's first touch of one kills the
// process with SIGBUS. So the header and every segment must lie inside the file.
enum class FileVerdict { kLoadable, kMissing, kInvalid };
struct FileCheck {
  FileVerdict verdict = FileVerdict::kLoadable;
  std::string why;  // "<path>: <reason>" unless loadable
};
FileCheck CheckSharedObject(const std::string& path);

struct OpenFailure {
  ErrorCode code = ErrorCode::kLibraryNotFound;
  std::string why;
};

// One dlopen() handle: RTLD_NOW surfaces missing dependencies at load time, RTLD_LOCAL
// keeps look-alike exports (libixml's and libhydmi_mig's nvml* names) out of the global
// scope. Every symbol is resolved through this handle; dlclose() on destruction.
class Library {
 public:
  Library() = default;
  Library(const Library&) = delete;
  Library& operator=(const Library&) = delete;
  Library(Library&& other) noexcept;
  Library& operator=(Library&& other) noexcept;
  ~Library();

  // Opens the first candidate that loads. A candidate with a slash is a file: it is checked
  // first (CheckSharedObject) and skipped when missing or damaged. A bare soname goes to the
  // loader's own search, unless a damaged file was met before: that search may well land on
  // the same file. On failure `failure` gets the code (InvalidLibrary when a damaged file
  // was all there was, else LibraryNotFound) and every attempt.
  bool Open(const std::vector<std::string>& candidates, OpenFailure* failure);
  bool IsOpen() const { return handle_ != nullptr; }
  const std::string& path() const { return path_; }

  void* Raw(const char* name) const;
  template <typename Fn>
  Fn Find(const char* name) const {
    return reinterpret_cast<Fn>(Raw(name));
  }
  // First of `names` that resolves; `found` receives its name.
  template <typename Fn>
  Fn FindFirst(const std::vector<std::string>& names, std::string* found = nullptr) const {
    for (const auto& name : names) {
      if (void* symbol = Raw(name.c_str())) {
        if (found) *found = name;
        return reinterpret_cast<Fn>(symbol);
      }
    }
    return nullptr;
  }

 private:
  void Close();
  void* handle_ = nullptr;
  std::string path_;
};

// Library search order: the GPUSTACK_<MFR>_LIBRARY override alone when set; otherwise
// each soname through the loader path, then each soname in each directory.
struct SearchPlan {
  std::vector<std::string> sonames;
  std::vector<std::string> directories;
};
std::string OverrideVariable(const std::string& manufacturer);
std::vector<std::string> LibraryCandidates(const Environment& env, const std::string& manufacturer,
                                           const SearchPlan& plan);

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

// Opens the manufacturer's library or reports LibraryNotFound / InvalidLibrary.
bool OpenLibrary(const Environment& env, const SearchPlan& plan, Library* library, Report& report);

// Resolves `name` through `lib` into `*out`; nullptr when the library lacks it, which is
// how optional symbols become "unknown" fields.
template <typename Fn>
void Bind(const Library& lib, const char* name, Fn* out) {
  *out = lib.Find<Fn>(name);
}

// The required symbols a library lacks, joined for one SymbolNotFound message.
class MissingSymbols {
 public:
  void Need(bool present, const std::string& name) {
    if (!present) text_ += (text_.empty() ? "" : ", ") + name;
  }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

}  // namespace gpustack

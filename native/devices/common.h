// Shared vocabulary of the device enumerators: plain C++, no Node headers, so the
// enumerators build and run without Node (see CMakeLists.txt).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <type_traits>
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

// Told each file (or bare soname) just before it goes to dlopen().
using LoadObserver = std::function<void(const std::string& library)>;

// A LoadObserver that writes "L<library>\0" to `fd` with write(2), at once and unbuffered: the
// child process of an isolated detection (native/detect-child.ts) reports to its parent what
// it is loading, so that a crash inside the loader or the library names the file.
LoadObserver TraceLoadsTo(int fd);

// What one detection works with: the captured environment, the folder the host's filesystem
// is mounted at ("" = this process's own root; never ends in '/'), and who hears of each load.
struct DetectContext {
  Environment env;
  std::string host_root;
  LoadObserver before_load;  // empty: nobody

  // A path on the host (vendor install folders, the install-root variables) as this
  // process reaches it: under host_root, with every symlink resolved there, an absolute
  // target included (as a chroot would). nullopt for a symlink loop.
  std::optional<std::string> OnHost(const std::string& path) const;
};
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
  // `before_load` hears of each dlopen() attempt.
  bool Open(const std::vector<std::string>& candidates, OpenFailure* failure, const LoadObserver& before_load);
  bool IsOpen() const { return handle_ != nullptr; }
  const std::string& path() const { return path_; }

  void* Raw(const char* name) const;

 private:
  void Close();
  void* handle_ = nullptr;
  std::string path_;
};

// Where distributions and driver packages put libraries outside any vendor folder.
constexpr const char* kSystemLibraryDirectories[] = {"/usr/lib64", "/usr/lib/x86_64-linux-gnu",
                                                     "/usr/lib/aarch64-linux-gnu", "/lib64",
                                                     "/lib/x86_64-linux-gnu", "/lib/aarch64-linux-gnu"};

// Library search order: the GPUSTACK_<MFR>_LIBRARY override alone when set (a path in this
// process's filesystem, never under the host root); otherwise each soname, by full path,
// in the vendor's directories and then the system library directories, all on the host;
// and last, without a host root only, each bare soname through the loader's own search.
// The process-wide search path is never changed: the host's libc must not reach Node.
struct SearchPlan {
  std::vector<std::string> sonames;
  std::vector<std::string> directories;  // host paths; "" entries (unset variables) are skipped
};
std::string OverrideVariable(const std::string& manufacturer);
std::vector<std::string> LibraryCandidates(const DetectContext& context, const std::string& manufacturer,
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
bool OpenLibrary(const DetectContext& context, const SearchPlan& plan, Library* library, Report& report);

// How much detection depends on one vendor symbol.
enum class Need {
  kRequired,  // missing: a SymbolNotFound entry, and nothing is called
  kOptional,  // missing: the field it feeds is "unknown"
};

// One row of a vendor's symbol table. `slot` is the address of the function pointer the
// symbol goes into (see Slot()). Required rows that share a `group` stand in for each other
// (memory_v2 or memory_v1): the group is missing only when all of them are.
struct Symbol {
  std::vector<std::string> names;  // tried in order: versioned names first
  void* slot;
  Need need = Need::kRequired;
  const char* group = nullptr;
  std::string* found = nullptr;  // receives the name that resolved, for messages
};

template <typename Fn>
void* Slot(Fn* function_pointer) {
  static_assert(std::is_function_v<std::remove_pointer_t<Fn>>, "a slot holds a function pointer");
  // dlsym() hands out function addresses as void*, which POSIX makes the same size.
  static_assert(sizeof(Fn) == sizeof(void*), "function pointers are not void*-sized");
  return function_pointer;
}

// Resolves every row through `library` (nullptr where absent).
void ResolveSymbols(const Library& library, const std::vector<Symbol>& table);
// The required symbols or groups still unresolved, ", "-joined; "" when none.
std::string MissingSymbols(const std::vector<Symbol>& table);
// ResolveSymbols, then a SymbolNotFound entry for whatever required is missing. False then:
// the caller must call nothing.
bool BindSymbols(const Library& library, const std::vector<Symbol>& table, Report& report);

// "<text> (code <n>)" from the vendor's own error text, "error (code <n>)" without one.
std::string DescribeCode(long long code, const char* text);
// For libraries that return the text (nvmlErrorString, cndevGetErrorString, ...).
template <typename Code>
std::string Describe(const char* (*error_string)(Code), Code code) {
  return DescribeCode(static_cast<long long>(code), error_string != nullptr ? error_string(code) : nullptr);
}
// For libraries that write it through a pointer and return a status (amdsmi, rsmi).
template <typename Code>
std::string Describe(Code (*status_string)(Code, const char**), Code code) {
  const char* text = nullptr;
  if (status_string == nullptr || status_string(code, &text) != 0) text = nullptr;
  return DescribeCode(static_cast<long long>(code), text);
}

// Reads the C string a vendor call writes into a caller buffer: `call(buffer, size)` returns
// the vendor's status (0 = success). The buffer holds one zeroed byte more than the library
// is told, so a missing NUL is caught instead of read past. `what` names the call and
// `error_text` is the library's error-text function, both for `why`.
template <typename Call, typename ErrorText>
bool ReadText(Call call, unsigned size, const char* what, ErrorText error_text, std::string* out,
              std::string* why) {
  std::vector<char> buffer(size + 1, '\0');
  auto status = call(buffer.data(), size);
  if (status != 0) {
    *why = std::string(what) + ": " + Describe(error_text, status);
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

// The same for facts that may be unknown (versions): nullopt when the call fails, writes
// nothing, or leaves no NUL.
template <typename Call>
std::optional<std::string> OptionalText(Call call, unsigned size) {
  std::vector<char> buffer(size + 1, '\0');
  if (call(buffer.data(), size) != 0) return std::nullopt;
  auto text = ReadCString(buffer.data(), size);
  if (!text || text->empty()) return std::nullopt;
  return text;
}

}  // namespace gpustack

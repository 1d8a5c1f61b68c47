#include "common.h"

#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <utility>

namespace gpustack {

const char* ErrorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kLibraryNotFound: return "LibraryNotFound";
    case ErrorCode::kSymbolNotFound: return "SymbolNotFound";
    case ErrorCode::kInitFailed: return "InitFailed";
    case ErrorCode::kDriverMismatch: return "DriverMismatch";
    case ErrorCode::kCallFailed: return "CallFailed";
  }
  return "CallFailed";
}

namespace {

// Install-root variables from the vendor documentation (device-runtimes.md §0), and ours.
constexpr const char* kInstallVariables[] = {
    "ROCM_PATH", "ROCM_HOME", "AMD_SMI_LIB_PATH", "ROCM_SMI_LIB_PATH", "CANN_HOME",
    "NEUWARE_HOME", "COREX_HOME", "MACA_HOME", "PPU_HOME", "GPUSTACK_SYSFS_ROOT",
};

bool FileExists(const std::string& path) {
  struct stat info {};
  return stat(path.c_str(), &info) == 0;
}

std::string LastDlError() {
  const char* text = dlerror();
  return text ? std::string(text) : std::string("unknown dlopen error");
}

}  // namespace

std::string OverrideVariable(const std::string& manufacturer) {
  std::string name = "GPUSTACK_";
  for (char c : manufacturer) name += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return name + "_LIBRARY";
}

Environment CaptureEnvironment() {
  Environment env;
  auto capture = [&env](const std::string& name) {
    if (const char* value = std::getenv(name.c_str())) env[name] = value;
  };
  for (const char* manufacturer : kManufacturers) capture(OverrideVariable(manufacturer));
  for (const char* name : kInstallVariables) capture(name);
  return env;
}

std::string EnvValue(const Environment& env, const std::string& name) {
  auto found = env.find(name);
  return found == env.end() ? std::string() : found->second;
}

std::string InstallRoot(const Environment& env, const std::vector<std::string>& variables,
                        const std::string& fallback) {
  for (const auto& variable : variables) {
    std::string value = EnvValue(env, variable);
    if (!value.empty()) return value;
  }
  return fallback;
}

std::optional<std::string> ReadCString(const char* buffer, size_t capacity) {
  size_t length = strnlen(buffer, capacity);
  if (length == capacity) return std::nullopt;
  return Trim(std::string(buffer, length));
}

std::optional<std::string> ReadReturnedString(const char* text, size_t limit) {
  if (text == nullptr) return std::nullopt;
  return ReadCString(text, limit);
}

std::string Trim(const std::string& text) {
  auto is_space = [](unsigned char c) { return std::isspace(c) != 0; };
  auto begin = std::find_if_not(text.begin(), text.end(), is_space);
  auto end = std::find_if_not(text.rbegin(), text.rend(), is_space).base();
  if (begin >= end) return std::string();
  std::string out(begin, end);
  // Control characters would end up in JSON and labels; no real product name has them.
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return out;
}

std::string FormatBdf(uint64_t domain, uint32_t bus, uint32_t device, uint32_t function) {
  char text[48];
  std::snprintf(text, sizeof text, "%04llx:%02x:%02x.%x", static_cast<unsigned long long>(domain),
                bus & 0xffu, device & 0x1fu, function & 0x7u);
  return text;
}

std::optional<std::string> NormalizeBdf(const std::string& text) {
  unsigned long long domain = 0;
  unsigned bus = 0, device = 0, function = 0;
  int consumed = 0;
  std::string trimmed = Trim(text);
  const char* s = trimmed.c_str();
  if (std::sscanf(s, "%llx:%x:%x.%x%n", &domain, &bus, &device, &function, &consumed) == 4 &&
      s[consumed] == '\0') {
    return FormatBdf(domain, bus, device, function);
  }
  if (std::sscanf(s, "%x:%x.%x%n", &bus, &device, &function, &consumed) == 3 && s[consumed] == '\0') {
    return FormatBdf(0, bus, device, function);
  }
  return std::nullopt;
}

std::string SysfsRoot(const Environment& env) { return InstallRoot(env, {"GPUSTACK_SYSFS_ROOT"}, "/sys"); }

std::optional<int32_t> SysfsNumaNode(const std::string& sysfs_root, const std::string& bdf) {
  auto line = ReadFirstLine(sysfs_root + "/bus/pci/devices/" + bdf + "/numa_node");
  if (!line) return std::nullopt;
  char* end = nullptr;
  long value = std::strtol(line->c_str(), &end, 10);
  // -1 means "no affinity" on single-node machines.
  if (end == line->c_str() || value < 0 || value >= 4096) return std::nullopt;
  return static_cast<int32_t>(value);
}

std::optional<int32_t> FirstSetBit(const void* mask, size_t words, size_t word_bits) {
  const auto* bytes = static_cast<const unsigned char*>(mask);
  size_t total_bytes = words * (word_bits / 8);
  // Little-endian words: bit n of the set is bit (n % 8) of byte n / 8.
  for (size_t i = 0; i < total_bytes; ++i) {
    if (bytes[i] == 0) continue;
    for (int bit = 0; bit < 8; ++bit) {
      if (bytes[i] & (1u << bit)) return static_cast<int32_t>(i * 8 + bit);
    }
  }
  return std::nullopt;
}

std::optional<std::string> MajorMinor(const std::string& version) {
  unsigned major = 0, minor = 0;
  if (std::sscanf(version.c_str(), "%u.%u", &major, &minor) != 2) return std::nullopt;
  return std::to_string(major) + "." + std::to_string(minor);
}

std::optional<std::string> ReadFirstLine(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  // A sysfs or version file is one short line; bound the read anyway.
  char buffer[256] = {};
  in.getline(buffer, sizeof buffer - 1);
  std::string line = Trim(buffer);
  if (line.empty()) return std::nullopt;
  return line;
}

Library::Library(Library&& other) noexcept
    : handle_(std::exchange(other.handle_, nullptr)), path_(std::move(other.path_)) {}

Library& Library::operator=(Library&& other) noexcept {
  if (this != &other) {
    Close();
    handle_ = std::exchange(other.handle_, nullptr);
    path_ = std::move(other.path_);
  }
  return *this;
}

Library::~Library() { Close(); }

void Library::Close() {
  // Closing after every detect() lets the next call see a changed override or driver.
  if (handle_ != nullptr) dlclose(handle_);
  handle_ = nullptr;
}

bool Library::Open(const std::vector<std::string>& candidates, std::string* why) {
  Close();
  std::string first_error;
  std::vector<std::string> present_errors;
  for (const auto& candidate : candidates) {
    dlerror();
    void* handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) {
      handle_ = handle;
      path_ = candidate;
      return true;
    }
    std::string error = LastDlError();
    if (first_error.empty()) first_error = error;
    // A file that exists but does not load (wrong arch, missing dependency) is the
    // interesting case: keep its reason.
    else if (candidate.find('/') != std::string::npos && FileExists(candidate)) present_errors.push_back(error);
  }
  if (why != nullptr) {
    *why = candidates.empty() ? std::string("no candidate path") : first_error;
    for (const auto& error : present_errors) *why += "; " + error;
    if (candidates.size() > 1) {
      *why += " (also tried:";
      for (size_t i = 1; i < candidates.size(); ++i) *why += " " + candidates[i];
      *why += ")";
    }
  }
  return false;
}

void* Library::Raw(const char* name) const {
  if (handle_ == nullptr) return nullptr;
  return dlsym(handle_, name);
}

std::vector<std::string> LibraryCandidates(const Environment& env, const std::string& manufacturer,
                                           const SearchPlan& plan) {
  std::string override_path = EnvValue(env, OverrideVariable(manufacturer));
  if (!override_path.empty()) return {override_path};
  std::vector<std::string> out(plan.sonames.begin(), plan.sonames.end());
  for (const auto& directory : plan.directories) {
    if (directory.empty()) continue;
    for (const auto& soname : plan.sonames) out.push_back(directory + "/" + soname);
  }
  // Keep the first occurrence: install variables often repeat the default directory.
  std::vector<std::string> unique;
  for (const auto& path : out) {
    if (std::find(unique.begin(), unique.end(), path) == unique.end()) unique.push_back(path);
  }
  return unique;
}

Report::Report(std::string manufacturer, std::string sysfs_root, DetectResult* out)
    : manufacturer_(std::move(manufacturer)), sysfs_root_(std::move(sysfs_root)), out_(out) {}

void Report::Fail(ErrorCode code, const std::string& message) {
  out_->errors.push_back(DeviceError{manufacturer_, code, message});
}

void Report::DeviceFail(uint32_t index, const std::string& message) {
  Fail(ErrorCode::kCallFailed, "device " + std::to_string(index) + ": " + message);
}

void Report::MissingSymbol(const Library& library, const std::string& symbol) {
  Fail(ErrorCode::kSymbolNotFound, "required symbol(s) " + symbol + " not exported by " + library.path());
}

void Report::Add(Device device) {
  if (device.memory_mib > kMaxMemoryMiB) {
    DeviceFail(device.index, "implausible memory size " + std::to_string(device.memory_mib) +
                                 " MiB (more than 16 TiB)");
    return;
  }
  device.manufacturer = manufacturer_;
  if (!device.numa_node && device.pci_bus_id) device.numa_node = SysfsNumaNode(sysfs_root_, *device.pci_bus_id);
  out_->devices.push_back(std::move(device));
}

bool OpenLibrary(const Environment& env, const SearchPlan& plan, Library* library, Report& report) {
  std::string why;
  if (library->Open(LibraryCandidates(env, report.manufacturer(), plan), &why)) return true;
  report.Fail(ErrorCode::kLibraryNotFound, why);
  return false;
}

}  // namespace gpustack

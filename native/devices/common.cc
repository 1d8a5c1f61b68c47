#include "common.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <utility>

namespace gpustack {

const char* ErrorCodeName(ErrorCode code) {
  switch (code) {
    case ErrorCode::kLibraryNotFound: return "LibraryNotFound";
    case ErrorCode::kInvalidLibrary: return "InvalidLibrary";
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

std::string LastDlError() {
  const char* text = dlerror();
  return text ? std::string(text) : std::string("unknown dlopen error");
}

// The ELF flavour this process runs: a library of another class, byte order or machine
// cannot be loaded into it.
constexpr unsigned char kElfClass = sizeof(void*) == 8 ? ELFCLASS64 : ELFCLASS32;
constexpr unsigned char kElfData = __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? ELFDATA2LSB : ELFDATA2MSB;
#if defined(__x86_64__)
constexpr int kElfMachine = EM_X86_64;
#elif defined(__aarch64__)
constexpr int kElfMachine = EM_AARCH64;
#else
constexpr int kElfMachine = -1;  // not checked here; dlopen() still refuses a wrong machine
#endif

class FileDescriptor {
 public:
  explicit FileDescriptor(int fd) : fd_(fd) {}
  FileDescriptor(const FileDescriptor&) = delete;
  FileDescriptor& operator=(const FileDescriptor&) = delete;
  ~FileDescriptor() {
    if (fd_ >= 0) close(fd_);
  }
  int get() const { return fd_; }

 private:
  int fd_;
};

bool ReadExactly(int fd, uint64_t offset, void* out, size_t size) {
  auto* bytes = static_cast<char*>(out);
  while (size > 0) {
    ssize_t got = pread(fd, bytes, size, static_cast<off_t>(offset));
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return false;
    bytes += got;
    offset += static_cast<uint64_t>(got);
    size -= static_cast<size_t>(got);
  }
  return true;
}

// [offset, offset + length) inside a file of `size` bytes, without overflow.
bool Inside(uint64_t offset, uint64_t length, uint64_t size) { return offset <= size && length <= size - offset; }

std::string Range(uint64_t offset, uint64_t length) {
  return "bytes " + std::to_string(offset) + " to " + std::to_string(offset + length);
}

// Why the header and program headers do not describe a loadable shared object of this
// process, or "" when they do.
std::string ElfHeaderProblem(const ElfW(Ehdr)& header, uint64_t size) {
  if (std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0) return "not an ELF file (no ELF magic)";
  if (header.e_ident[EI_CLASS] != kElfClass) {
    return "ELF class " + std::to_string(header.e_ident[EI_CLASS]) + " is not this process's";
  }
  if (header.e_ident[EI_DATA] != kElfData) return "ELF byte order is not this process's";
  if (header.e_ident[EI_VERSION] != EV_CURRENT) return "unknown ELF version";
  if (header.e_type != ET_DYN) return "not a shared object (ELF type " + std::to_string(header.e_type) + ")";
  if (kElfMachine >= 0 && header.e_machine != kElfMachine) {
    return "built for another machine (ELF machine " + std::to_string(header.e_machine) + ")";
  }
  if (header.e_phentsize != sizeof(ElfW(Phdr)) || header.e_phnum == 0 || header.e_phnum == PN_XNUM) {
    return "no usable program header table";
  }
  uint64_t table = uint64_t{header.e_phnum} * header.e_phentsize;
  if (!Inside(header.e_phoff, table, size)) {
    return "program header table (" + Range(header.e_phoff, table) + ") is cut off";
  }
  return "";
}

// The most address space the loadable segments of one library may span. glibc reserves the
// whole span, and maps each segment's memory beyond its file bytes as zero-filled pages: a
// corrupted p_memsz asks for terabytes and dlopen() fails ("cannot map zero-fill pages"), or
// gets them. The vendor libraries span a few MiB (libnvidia-ml.so.1 ~2 MiB, libamd_smi.so
// ~10 MiB); 1 GiB is far beyond any of them.
constexpr uint64_t kMaxImageSpan = uint64_t{1} << 30;

std::string SegmentProblem(const std::vector<ElfW(Phdr)>& segments, uint64_t size) {
  const ElfW(Phdr)* dynamic = nullptr;
  bool loads = false;
  uint64_t lowest = UINT64_MAX, highest = 0;
  for (size_t i = 0; i < segments.size(); ++i) {
    const ElfW(Phdr)& segment = segments[i];
    if (segment.p_type == PT_NULL) continue;
    // PT_LOAD is what gets mapped; any other segment past the end is a cut file just the
    // same (in a sound library every segment's bytes are in the file).
    if (!Inside(segment.p_offset, segment.p_filesz, size)) {
      return "segment " + std::to_string(i) + " (" + Range(segment.p_offset, segment.p_filesz) + ") is cut off";
    }
    if (segment.p_type == PT_LOAD) {
      loads = true;
      if (segment.p_filesz > segment.p_memsz) {
        return "segment " + std::to_string(i) + " is larger on file than in memory";
      }
      if (segment.p_memsz > kMaxImageSpan || segment.p_vaddr > UINT64_MAX - segment.p_memsz) {
        return "segment " + std::to_string(i) + " has an implausible memory size (" +
               std::to_string(segment.p_memsz) + " bytes)";
      }
      lowest = std::min<uint64_t>(lowest, segment.p_vaddr);
      highest = std::max<uint64_t>(highest, segment.p_vaddr + segment.p_memsz);
    }
    if (segment.p_type == PT_DYNAMIC) dynamic = &segment;
  }
  if (!loads) return "no loadable segment";
  if (highest - lowest > kMaxImageSpan) {
    return "loadable segments span an implausible " + std::to_string(highest - lowest) + " bytes";
  }
  if (dynamic == nullptr) return "no dynamic section";
  // The loader reads the dynamic section at its address, which must be file bytes of a load.
  for (const ElfW(Phdr)& segment : segments) {
    if (segment.p_type == PT_LOAD && dynamic->p_vaddr >= segment.p_vaddr &&
        Inside(dynamic->p_vaddr - segment.p_vaddr, dynamic->p_filesz, segment.p_filesz)) {
      return "";
    }
  }
  return "dynamic section lies outside the loaded bytes";
}

const char* FileType(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  return "not a file";
}

}  // namespace

FileCheck CheckSharedObject(const std::string& path) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer.
  FileDescriptor fd(open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK));
  auto invalid = [&path](const std::string& reason) { return FileCheck{FileVerdict::kInvalid, path + ": " + reason}; };
  struct stat info {};
  if (fd.get() < 0) {
    const int open_error = errno;
    const std::string why = std::string("cannot open shared object file: ") + std::strerror(open_error);
    // Only a path with nothing at it is missing. Something there that cannot be opened (a
    // socket: ENXIO; a file without read permission) is a broken install, and says so.
    if (stat(path.c_str(), &info) != 0) return {FileVerdict::kMissing, path + ": " + why};
    if (!S_ISREG(info.st_mode)) return invalid(std::string("not a regular file (") + FileType(info.st_mode) + ")");
    return invalid(why);
  }
  if (fstat(fd.get(), &info) != 0) return invalid(std::string("cannot stat: ") + std::strerror(errno));
  if (!S_ISREG(info.st_mode)) return invalid(std::string("not a regular file (") + FileType(info.st_mode) + ")");
  const auto size = static_cast<uint64_t>(info.st_size);
  ElfW(Ehdr) header{};
  if (size < sizeof header || !ReadExactly(fd.get(), 0, &header, sizeof header)) {
    return invalid("too short for an ELF header (" + std::to_string(size) + " bytes)");
  }
  std::string problem = ElfHeaderProblem(header, size);
  if (!problem.empty()) return invalid(problem);
  std::vector<ElfW(Phdr)> segments(header.e_phnum);
  if (!ReadExactly(fd.get(), header.e_phoff, segments.data(), segments.size() * sizeof(ElfW(Phdr)))) {
    return invalid("cannot read the program header table");
  }
  problem = SegmentProblem(segments, size);
  if (!problem.empty()) return invalid(problem + " (the file has " + std::to_string(size) + " bytes)");
  return {};
}

LoadObserver TraceLoadsTo(int fd) {
  return [fd](const std::string& library) {
    std::string record = "L" + library;
    record.push_back('\0');
    const char* bytes = record.data();
    size_t left = record.size();
    while (left > 0) {
      ssize_t wrote = write(fd, bytes, left);
      if (wrote < 0 && errno == EINTR) continue;
      if (wrote <= 0) return;  // the parent is gone; the detection goes on regardless
      bytes += wrote;
      left -= static_cast<size_t>(wrote);
    }
  };
}

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

std::optional<std::string> DetectContext::OnHost(const std::string& path) const {
  if (host_root.empty()) return path;
  // Components still to walk, the next one last; `resolved` is below host_root ("" or "/a/b").
  std::vector<std::string> pending;
  auto push_components = [&pending](const std::string& text) {
    std::vector<std::string> parts;
    for (size_t start = 0; start <= text.size();) {
      size_t end = text.find('/', start);
      if (end == std::string::npos) end = text.size();
      parts.push_back(text.substr(start, end - start));
      start = end + 1;
    }
    pending.insert(pending.end(), parts.rbegin(), parts.rend());
  };
  push_components(path);
  std::string resolved;
  int links = 0;
  while (!pending.empty()) {
    std::string part = std::move(pending.back());
    pending.pop_back();
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      resolved.erase(resolved.empty() ? 0 : resolved.rfind('/'));  // never above the root
      continue;
    }
    std::string next = resolved + "/" + part;
    char target[4096];
    ssize_t length = readlink((host_root + next).c_str(), target, sizeof target);
    // Not a link, or missing: taken as it is (opening it later says why).
    if (length < 0 || static_cast<size_t>(length) == sizeof target) {
      resolved = next;
      continue;
    }
    if (++links > 40) return std::nullopt;  // the kernel's own limit (ELOOP)
    std::string link(target, static_cast<size_t>(length));
    if (!link.empty() && link.front() == '/') resolved.clear();
    push_components(link);
  }
  return host_root + (resolved.empty() ? "/" : resolved);
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

bool Library::Open(const std::vector<std::string>& candidates, OpenFailure* failure,
                   const LoadObserver& before_load) {
  Close();
  std::string first_error;
  std::vector<std::string> present_errors;
  std::vector<std::string> damaged;
  for (const auto& candidate : candidates) {
    if (candidate.find('/') != std::string::npos) {
      FileCheck check = CheckSharedObject(candidate);
      if (check.verdict == FileVerdict::kInvalid) damaged.push_back(check.why);
      if (check.verdict != FileVerdict::kLoadable) {
        if (first_error.empty()) first_error = check.why;
        continue;
      }
    } else if (!damaged.empty()) {
      continue;
    }
    if (before_load) before_load(candidate);
    dlerror();
    void* handle = dlopen(candidate.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle != nullptr) {
      handle_ = handle;
      path_ = candidate;
      return true;
    }
    std::string error = LastDlError();
    if (first_error.empty()) first_error = error;
    // A file that exists but does not load (missing dependency) is the interesting case:
    // keep its reason.
    else if (candidate.find('/') != std::string::npos) present_errors.push_back(error);
  }
  if (failure != nullptr) {
    std::string& why = failure->why;
    failure->code = damaged.empty() ? ErrorCode::kLibraryNotFound : ErrorCode::kInvalidLibrary;
    why = candidates.empty() ? std::string("no candidate path") : first_error;
    for (const auto& error : damaged) {
      if (error != first_error) why += "; " + error;
    }
    for (const auto& error : present_errors) why += "; " + error;
    if (candidates.size() > 1) {
      why += " (also tried:";
      for (size_t i = 1; i < candidates.size(); ++i) why += " " + candidates[i];
      why += ")";
    }
  }
  return false;
}

void* Library::Raw(const char* name) const {
  if (handle_ == nullptr) return nullptr;
  return dlsym(handle_, name);
}

std::vector<std::string> LibraryCandidates(const DetectContext& context, const std::string& manufacturer,
                                           const SearchPlan& plan) {
  std::string override_path = EnvValue(context.env, OverrideVariable(manufacturer));
  if (!override_path.empty()) return {override_path};
  std::vector<std::string> directories = plan.directories;
  directories.insert(directories.end(), std::begin(kSystemLibraryDirectories), std::end(kSystemLibraryDirectories));
  std::vector<std::string> out;
  for (const auto& directory : directories) {
    if (directory.empty()) continue;
    for (const auto& soname : plan.sonames) {
      if (auto path = context.OnHost(directory + "/" + soname)) out.push_back(*path);
    }
  }
  // The loader's own search looks in this process's filesystem, never on the host.
  if (context.host_root.empty()) out.insert(out.end(), plan.sonames.begin(), plan.sonames.end());
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

void ResolveSymbols(const Library& library, const std::vector<Symbol>& table) {
  for (const Symbol& row : table) {
    void* address = nullptr;
    for (const auto& name : row.names) {
      if ((address = library.Raw(name.c_str())) != nullptr) {
        if (row.found != nullptr) *row.found = name;
        break;
      }
    }
    std::memcpy(row.slot, &address, sizeof address);
  }
}

std::string MissingSymbols(const std::vector<Symbol>& table) {
  auto resolved = [](const Symbol& row) {
    void* address = nullptr;
    std::memcpy(&address, row.slot, sizeof address);
    return address != nullptr;
  };
  std::string missing;
  std::vector<std::string> groups_seen;
  for (const Symbol& row : table) {
    if (row.need != Need::kRequired || row.names.empty()) continue;
    std::string name = row.names.front();
    if (row.group != nullptr) {
      if (std::find(groups_seen.begin(), groups_seen.end(), row.group) != groups_seen.end()) continue;
      groups_seen.emplace_back(row.group);
      bool any = false;
      name.clear();
      for (const Symbol& member : table) {
        if (member.group == nullptr || std::strcmp(member.group, row.group) != 0) continue;
        any = any || resolved(member);
        name += (name.empty() ? "" : " or ") + member.names.front();
      }
      if (any) continue;
    } else if (resolved(row)) {
      continue;
    }
    missing += (missing.empty() ? "" : ", ") + name;
  }
  return missing;
}

bool BindSymbols(const Library& library, const std::vector<Symbol>& table, Report& report) {
  ResolveSymbols(library, table);
  std::string missing = MissingSymbols(table);
  if (missing.empty()) return true;
  report.MissingSymbol(library, missing);
  return false;
}

std::string DescribeCode(long long code, const char* text) {
  std::string out = ReadReturnedString(text).value_or("");
  if (out.empty()) out = "error";
  return out + " (code " + std::to_string(code) + ")";
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

bool OpenLibrary(const DetectContext& context, const SearchPlan& plan, Library* library, Report& report) {
  OpenFailure failure;
  if (library->Open(LibraryCandidates(context, report.manufacturer(), plan), &failure, context.before_load)) {
    return true;
  }
  report.Fail(failure.code, failure.why);
  return false;
}

}  // namespace gpustack

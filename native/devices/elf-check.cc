#include "elf-check.h"

#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstring>
#include <vector>

namespace gpustack {

namespace {

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

}  // namespace gpustack

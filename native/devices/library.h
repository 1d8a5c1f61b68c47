// Opening a vendor library: where to look for it, and one dlopen() handle per detection.
#pragma once

#include <string>
#include <vector>

#include "common.h"
#include "context.h"
#include "report.h"

namespace gpustack {

// A LoadObserver that writes "L<library>\0" to `fd` with write(2), at once and unbuffered: the
// child process of an isolated detection (native/detect-child.ts) reports to its parent what
// it is loading, so that a crash inside the loader or the library names the file.
LoadObserver TraceLoadsTo(int fd);

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
std::vector<std::string> LibraryCandidates(const DetectContext& context, const std::string& manufacturer,
                                           const SearchPlan& plan);

// Opens the manufacturer's library or reports LibraryNotFound / InvalidLibrary.
bool OpenLibrary(const DetectContext& context, const SearchPlan& plan, Library* library, Report& report);

}  // namespace gpustack

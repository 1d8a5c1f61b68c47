#include "library.h"

#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <iterator>
#include <utility>

#include "elf-check.h"
#include "environment.h"

namespace gpustack {

namespace {

std::string LastDlError() {
  const char* text = dlerror();
  return text ? std::string(text) : std::string("unknown dlopen error");
}

}  // namespace

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

bool OpenLibrary(const DetectContext& context, const SearchPlan& plan, Library* library, Report& report) {
  OpenFailure failure;
  if (library->Open(LibraryCandidates(context, report.manufacturer(), plan), &failure, context.before_load)) {
    return true;
  }
  report.Fail(failure.code, failure.why);
  return false;
}

}  // namespace gpustack

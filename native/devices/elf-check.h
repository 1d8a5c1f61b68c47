// Checks a file is a shared object this process can load before it goes to dlopen().
#pragma once

#include <string>

namespace gpustack {

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

}  // namespace gpustack

#include "common.h"

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

}  // namespace gpustack

// Entry point of the plain C++ layer: what addon.cc calls from its worker thread.
#pragma once

#include <set>
#include <string>

#include "common.h"
#include "context.h"

namespace gpustack {

struct DetectRequest {
  std::set<std::string> manufacturers;  // subset of kManufacturers
  DetectContext context;                // captured on the calling (JS) thread
};

bool IsManufacturer(const std::string& name);

// Runs the requested enumerators one detection at a time (vendor libraries are not all
// thread-safe). Devices are ordered by manufacturer, then index.
DetectResult Detect(const DetectRequest& request);

}  // namespace gpustack

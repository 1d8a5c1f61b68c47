#include "detect.h"

#include <algorithm>
#include <exception>
#include <mutex>

#include "common.h"
#include "enumerators.h"
#include "sysfs.h"

namespace gpustack {
namespace {

using Enumerator = void (*)(const DetectContext&, Report&);

struct Entry {
  const char* manufacturer;
  Enumerator enumerate;
};

// Sorted by manufacturer: results come out in this order.
constexpr Entry kEntries[] = {
    {"amd", DetectAmd},           {"ascend", DetectAscend}, {"cambricon", DetectCambricon},
    {"hygon", DetectHygon},       {"iluvatar", DetectIluvatar}, {"metax", DetectMetax},
    {"mthreads", DetectMthreads}, {"nvidia", DetectNvidia},   {"thead", DetectThead},
};

std::mutex detect_mutex;

}  // namespace

bool IsManufacturer(const std::string& name) {
  return std::any_of(std::begin(kEntries), std::end(kEntries),
                     [&](const Entry& entry) { return name == entry.manufacturer; });
}

DetectResult Detect(const DetectRequest& request) {
  std::lock_guard<std::mutex> lock(detect_mutex);
  DetectResult result;
  const std::string sysfs_root = SysfsRoot(request.context.env);
  for (const Entry& entry : kEntries) {
    if (request.manufacturers.count(entry.manufacturer) == 0) continue;
    Report report(entry.manufacturer, sysfs_root, &result);
    // One vendor's failure (std::bad_alloc from a huge answer, say) must not hide the others.
    try {
      entry.enumerate(request.context, report);
    } catch (const std::exception& error) {
      report.Fail(ErrorCode::kCallFailed, std::string("unexpected failure: ") + error.what());
    }
  }
  std::stable_sort(result.devices.begin(), result.devices.end(), [](const Device& a, const Device& b) {
    return a.manufacturer != b.manufacturer ? a.manufacturer < b.manufacturer : a.index < b.index;
  });
  return result;
}

}  // namespace gpustack

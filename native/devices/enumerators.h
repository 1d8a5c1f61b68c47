// One entry point per manufacturer. Each opens its library, enumerates, reports into
// `report`, and closes the library again before returning.
#pragma once

#include "context.h"
#include "report.h"

namespace gpustack {

void DetectAmd(const DetectContext& context, Report& report);
void DetectAscend(const DetectContext& context, Report& report);
void DetectCambricon(const DetectContext& context, Report& report);
void DetectHygon(const DetectContext& context, Report& report);
void DetectIluvatar(const DetectContext& context, Report& report);
void DetectMetax(const DetectContext& context, Report& report);
void DetectMthreads(const DetectContext& context, Report& report);
void DetectNvidia(const DetectContext& context, Report& report);
void DetectThead(const DetectContext& context, Report& report);

}  // namespace gpustack

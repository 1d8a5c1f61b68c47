// One entry point per manufacturer. Each opens its library, enumerates, reports into
// `report`, and closes the library again before returning.
#pragma once

#include "common.h"

namespace gpustack {

void DetectAmd(const Environment& env, Report& report);
void DetectAscend(const Environment& env, Report& report);
void DetectCambricon(const Environment& env, Report& report);
void DetectHygon(const Environment& env, Report& report);
void DetectIluvatar(const Environment& env, Report& report);
void DetectMetax(const Environment& env, Report& report);
void DetectMthreads(const Environment& env, Report& report);
void DetectNvidia(const Environment& env, Report& report);
void DetectThead(const Environment& env, Report& report);

}  // namespace gpustack

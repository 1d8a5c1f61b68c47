/*
 * Fake MetaX MXSML (libmxsml.so): memory in KiB; mxSmlGetDeviceCount returns the
 * count itself (no status). `mode=2` marks an SR-IOV VF entry.
 */
#include <stdio.h>
#include <string.h>

#include "fake-common.h"

typedef unsigned ret_t;
enum { SUCCESS = 0, FAILURE = 1, NO_DEVICE = 2, OPERATION_NOT_SUPPORT = 3, INVALID_DEVICE_ID = 6, INVALID_INPUT = 9,
       INSUFFICIENT_SIZE = 10 };

typedef struct {
  unsigned int deviceId;
  int type;
  char bdfId[32];
  unsigned int gpuId;
  unsigned int nodeId;
  char uuid[96];
  int brand;
  int mode;
  char deviceName[32];
} device_info_t;
_Static_assert(sizeof(device_info_t) == 184, "mxSmlDeviceInfo_t");
typedef struct {
  long visVramTotal, visVramUse, vramTotal, vramUse, xttTotal, xttUse;
} memory_info_t;

static int initialized;

static const fake_record *device_of(unsigned id) { return initialized ? fake_dev(id) : NULL; }

FAKE_EXPORT ret_t mxSmlInit(void) {
  FAKE_TRACE();
  fake_load(FAKE_MFR);
  ret_t code = (ret_t)fake_int(fake_lib(), "init", SUCCESS);
  initialized = code == SUCCESS;
  return code;
}

FAKE_EXPORT const char *mxSmlGetErrorString(ret_t code) {
  switch (code) {
    case SUCCESS: return "Success";
    case NO_DEVICE: return "No device";
    default: return "Failure";
  }
}

FAKE_EXPORT unsigned mxSmlGetDeviceCount(void) {
  FAKE_TRACE();
  if (!initialized) return 0;
  return (unsigned)fake_int(fake_lib(), "count", fake_dev_count());
}

FAKE_EXPORT ret_t mxSmlGetDeviceInfo(unsigned id, device_info_t *info) {
  FAKE_TRACE();
  const fake_record *dev = device_of(id);
  if (dev == NULL) return INVALID_DEVICE_ID;
  if (info == NULL) return INVALID_INPUT;
  if (fake_fails(dev, "info")) return FAILURE;
  memset(info, 0, sizeof *info);
  info->deviceId = id;
  info->brand = 2;
  info->mode = (int)fake_int(dev, "mode", 0);
  snprintf(info->bdfId, sizeof info->bdfId, "%s", fake_str(dev, "bus", ""));
  fake_copy(info->uuid, sizeof info->uuid, fake_str(dev, "uuid", ""), dev, "uuid");
  fake_copy(info->deviceName, sizeof info->deviceName, fake_str(dev, "name", ""), dev, "name");
  return SUCCESS;
}

FAKE_EXPORT ret_t mxSmlGetMemoryInfo(unsigned id, memory_info_t *memory) {
  FAKE_TRACE();
  const fake_record *dev = device_of(id);
  if (dev == NULL) return INVALID_DEVICE_ID;
  if (memory == NULL) return INVALID_INPUT;
  memset(memory, 0, sizeof *memory);
  memory->vramTotal = (long)fake_int(dev, "memory", 0);
  memory->visVramTotal = memory->vramTotal;
  return SUCCESS;
}

FAKE_EXPORT ret_t mxSmlGetNodeAffinity(unsigned id, unsigned size, unsigned *set) {
  FAKE_TRACE();
  const fake_record *dev = device_of(id);
  if (dev == NULL) return INVALID_DEVICE_ID;
  if (set == NULL || size == 0) return INVALID_INPUT;
  if (!fake_has(dev, "numa")) return OPERATION_NOT_SUPPORT;
  unsigned node = (unsigned)fake_int(dev, "numa", 0);
  if (node / 32 >= size) return INSUFFICIENT_SIZE;
  memset(set, 0, size * sizeof *set);
  set[node / 32] = 1u << (node % 32);
  return SUCCESS;
}

FAKE_EXPORT ret_t mxSmlGetDeviceVersion(unsigned id, int unit, char *version, unsigned *size) {
  FAKE_TRACE();
  if (device_of(id) == NULL) return INVALID_DEVICE_ID;
  if (unit != 1 || version == NULL || size == NULL) return INVALID_INPUT;
  if (!fake_has(fake_lib(), "driver")) return OPERATION_NOT_SUPPORT;
  return fake_copy(version, *size, fake_str(fake_lib(), "driver", ""), fake_lib(), "driver") == 0 ? SUCCESS
                                                                                                 : INSUFFICIENT_SIZE;
}

FAKE_EXPORT ret_t mxSmlGetMacaVersion(char *version, unsigned *size) {
  FAKE_TRACE();
  if (version == NULL || size == NULL) return INVALID_INPUT;
  if (!fake_has(fake_lib(), "runtime")) return OPERATION_NOT_SUPPORT;
  return fake_copy(version, *size, fake_str(fake_lib(), "runtime", ""), fake_lib(), "runtime") == 0
             ? SUCCESS
             : INSUFFICIENT_SIZE;
}

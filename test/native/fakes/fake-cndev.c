/*
 * Fake Cambricon CNDev (libcndev.so): struct-first getters, versioned structs, memory
 * in MB. Device handles are index + 100 so a caller that confuses index and handle
 * fails visibly.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fake-common.h"

typedef int ret_t;
enum { SUCCESS = 0, UNSUPPORTED_API_VERSION = 3, UNINITIALIZED = 4, INVALID_ARGUMENT = 5, INVALID_DEVICE_ID = 6,
       UNKNOWN = 7, NOT_SUPPORTED = 10 };
#define HANDLE_BASE 100
#define API_VERSION 6

typedef struct { int version; unsigned number; } card_info_t;
typedef struct { int version; unsigned char uuid[37]; unsigned long long ncsUUID64; } uuid_t_;
typedef struct {
  int64_t physicalMemoryTotal, physicalMemoryUsed, reservedMemory, virtualMemoryTotal, virtualMemoryUsed;
  uint64_t globalMemory;
  uint64_t reserved[16];
} memory_v2_t;
typedef struct {
  int version;
  unsigned mcuMajorVersion, mcuMinorVersion, mcuBuildVersion, driverMajorVersion, driverMinorVersion,
      driverBuildVersion;
} version_info_t;
typedef struct {
  uint32_t subsystemId, deviceId;
  uint16_t vendor, subsystemVendor;
  uint32_t domain, bus, device, function;
  uint16_t moduleId, slotId;
  uint32_t reserved[8];
} pcie_v2_t;
typedef struct { int version; int nodeId; } numa_t;
_Static_assert(sizeof(uuid_t_) == 56, "cndevUUID_t");
_Static_assert(sizeof(memory_v2_t) == 176, "cndevMemoryInfoV2_t");
_Static_assert(sizeof(pcie_v2_t) == 64, "cndevPCIeInfoV2_t");

static int initialized;

static const fake_record *device_of(int handle) {
  if (!initialized || handle < HANDLE_BASE) return NULL;
  return fake_dev((unsigned)(handle - HANDLE_BASE));
}

FAKE_EXPORT ret_t cndevInit(int reserved) {
  FAKE_TRACE();
  (void)reserved;
  fake_load(FAKE_MFR);
  ret_t code = (ret_t)fake_int(fake_lib(), "init", SUCCESS);
  initialized = code == SUCCESS;
  return code;
}

FAKE_EXPORT ret_t cndevRelease(void) {
  FAKE_TRACE();
  initialized = 0;
  return SUCCESS;
}

FAKE_EXPORT const char *cndevGetErrorString(ret_t code) {
  switch (code) {
    case SUCCESS: return "success";
    case 1: return "no cambricon device driver";
    case 2: return "low driver version";
    case UNSUPPORTED_API_VERSION: return "unsupported api version";
    default: return "unknown error";
  }
}

FAKE_EXPORT ret_t cndevGetDeviceCount(card_info_t *info) {
  FAKE_TRACE();
  if (!initialized) return UNINITIALIZED;
  if (info == NULL) return INVALID_ARGUMENT;
  if (info->version != API_VERSION) return UNSUPPORTED_API_VERSION;
  info->number = (unsigned)fake_int(fake_lib(), "count", fake_dev_count());
  return SUCCESS;
}

FAKE_EXPORT ret_t cndevGetDeviceHandleByIndex(int index, int *handle) {
  FAKE_TRACE();
  if (!initialized) return UNINITIALIZED;
  if (handle == NULL || index < 0 || fake_dev((unsigned)index) == NULL) return INVALID_DEVICE_ID;
  *handle = HANDLE_BASE + index;
  return SUCCESS;
}

/* 400 bytes before the first NUL: longer than any caller should read. */
static char unterminated_name[401];

FAKE_EXPORT const char *cndevGetCardNameStringByDevId(int handle) {
  FAKE_TRACE();
  const fake_record *dev = device_of(handle);
  if (dev == NULL) return NULL;
  if (strstr(fake_str(dev, "unterminated", ""), "name") != NULL) {
    memset(unterminated_name, 'X', sizeof unterminated_name - 1);
    return unterminated_name;
  }
  return fake_str(dev, "name", "");
}

FAKE_EXPORT ret_t cndevGetUUID(uuid_t_ *uuid, int handle) {
  FAKE_TRACE();
  const fake_record *dev = device_of(handle);
  if (dev == NULL || uuid == NULL) return INVALID_DEVICE_ID;
  if (uuid->version != API_VERSION) return UNSUPPORTED_API_VERSION;
  memset(uuid->uuid, 0, sizeof uuid->uuid);
  fake_copy((char *)uuid->uuid, sizeof uuid->uuid, fake_str(dev, "uuid", ""), dev, "uuid");
  return SUCCESS;
}

FAKE_EXPORT ret_t cndevGetMemoryUsageV2(memory_v2_t *memory, int handle) {
  FAKE_TRACE();
  const fake_record *dev = device_of(handle);
  if (dev == NULL || memory == NULL) return INVALID_DEVICE_ID;
  if (fake_fails(dev, "memory")) return UNKNOWN;
  memset(memory, 0, sizeof *memory);
  memory->physicalMemoryTotal = fake_int(dev, "memory", 0);
  memory->virtualMemoryTotal = memory->physicalMemoryTotal;
  return SUCCESS;
}

FAKE_EXPORT ret_t cndevGetPCIeInfoV2(pcie_v2_t *pcie, int handle) {
  FAKE_TRACE();
  const fake_record *dev = device_of(handle);
  if (dev == NULL || pcie == NULL) return INVALID_DEVICE_ID;
  if (!fake_has(dev, "bus")) return NOT_SUPPORTED;
  unsigned domain, bus, device, function;
  fake_bdf(fake_str(dev, "bus", ""), &domain, &bus, &device, &function);
  memset(pcie, 0, sizeof *pcie);
  pcie->vendor = 0xcabc;
  pcie->domain = domain;
  pcie->bus = bus;
  pcie->device = device;
  pcie->function = function;
  return SUCCESS;
}

FAKE_EXPORT ret_t cndevGetNUMANodeIdByDevId(numa_t *numa, int handle) {
  FAKE_TRACE();
  const fake_record *dev = device_of(handle);
  if (dev == NULL || numa == NULL) return INVALID_DEVICE_ID;
  if (numa->version != API_VERSION) return UNSUPPORTED_API_VERSION;
  if (!fake_has(dev, "numa")) return NOT_SUPPORTED;
  numa->nodeId = (int)fake_int(dev, "numa", 0);
  return SUCCESS;
}

FAKE_EXPORT ret_t cndevGetVersionInfo(version_info_t *info, int handle) {
  FAKE_TRACE();
  if (device_of(handle) == NULL || info == NULL) return INVALID_DEVICE_ID;
  if (info->version != API_VERSION) return UNSUPPORTED_API_VERSION;
  if (!fake_has(fake_lib(), "driver")) return NOT_SUPPORTED;
  unsigned major = 0, minor = 0, build = 0;
  sscanf(fake_str(fake_lib(), "driver", ""), "%u.%u.%u", &major, &minor, &build);
  info->driverMajorVersion = major;
  info->driverMinorVersion = minor;
  info->driverBuildVersion = build;
  return SUCCESS;
}

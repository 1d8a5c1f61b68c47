/*
 * Fake NVML-shaped library: libnvidia-ml.so.1 (FAKE_MFR "nvidia"), Iluvatar's libixml.so
 * (FAKE_MFR "iluvatar", same nvml* names) and T-Head's libhgml.so (FAKE_HGML, hgml*
 * names). Compile definitions select variants:
 *   FAKE_LEGACY     only the unversioned symbols of an old driver
 *   FAKE_OMIT_NAME  no DeviceGetName, a required symbol
 *   FAKE_OMIT_FABRIC  neither DeviceGetGpuFabricInfo nor its V form (a driver before CUDA 12.2)
 * NVIDIA's fake alone answers the GPU fabric info: FAKE_LEGACY keeps the unversioned call only.
 * Struct layouts follow nvml.h (device-runtimes.md §2.4).
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "fake-common.h"

#ifdef FAKE_HGML
#define SYM2(prefix, name) prefix##name
#define SYM1(prefix, name) SYM2(prefix, name)
#define SYM(name) SYM1(hgml, name)
#define COMPUTE_CAPABILITY SYM(DeviceGetHggcComputeCapability)
#define RUNTIME_VERSION SYM(SystemGetHggcDriverVersion)
#define RUNTIME_VERSION_V2 SYM(SystemGetHggcDriverVersion_v2)
#else
#define SYM2(prefix, name) prefix##name
#define SYM1(prefix, name) SYM2(prefix, name)
#define SYM(name) SYM1(nvml, name)
#define COMPUTE_CAPABILITY SYM(DeviceGetCudaComputeCapability)
#define RUNTIME_VERSION SYM(SystemGetCudaDriverVersion)
#define RUNTIME_VERSION_V2 SYM(SystemGetCudaDriverVersion_v2)
#endif

typedef int ret_t;
typedef struct fake_device *device_t;

enum {
  SUCCESS = 0,
  UNINITIALIZED = 1,
  INVALID_ARGUMENT = 2,
  NOT_SUPPORTED = 3,
  INSUFFICIENT_SIZE = 7,
  ARGUMENT_VERSION_MISMATCH = 25,
  UNKNOWN = 999,
};

typedef struct {
  unsigned long long total, free, used;
} memory_t;
typedef struct {
  unsigned int version;
  unsigned long long total, reserved, free, used;
} memory_v2_t;
typedef struct {
  char busIdLegacy[16];
  unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
} pci_info_t;
/* nvmlGpuFabricInfo_t and nvmlGpuFabricInfo_v2_t: the version word first, the health mask last. */
typedef struct {
  unsigned char clusterUuid[16];
  ret_t status;
  unsigned int cliqueId;
  unsigned char state;
} fabric_info_t;
typedef struct {
  unsigned int version;
  unsigned char clusterUuid[16];
  ret_t status;
  unsigned int cliqueId;
  unsigned char state;
  unsigned int healthMask;
} fabric_info_v2_t;
_Static_assert(sizeof(fabric_info_t) == 28, "nvmlGpuFabricInfo_t");
_Static_assert(sizeof(fabric_info_v2_t) == 36, "nvmlGpuFabricInfo_v2_t");
#define FABRIC_V2_VERSION (unsigned)(sizeof(fabric_info_v2_t) | (2u << 24))
_Static_assert(sizeof(memory_v2_t) == 40, "nvmlMemory_v2_t");
_Static_assert(sizeof(pci_info_t) == 68, "nvmlPciInfo_t");
#define MEMORY_V2_VERSION (unsigned)(sizeof(memory_v2_t) | (2u << 24))

static int initialized;

/* Handles encode index + 1 so NULL is never a valid device. */
static const fake_record *device_of(device_t handle) {
  if (!initialized || handle == NULL) return NULL;
  return fake_dev((unsigned)((uintptr_t)handle - 1));
}

static ret_t do_init(void) {
  fake_load(FAKE_MFR);
  /* What a corrupted or stuck library does in its first call: the isolated detection must
     survive both (test/native/damaged-library.test.ts). */
  if (fake_has(fake_lib(), "crash")) {
    int *volatile nowhere = NULL;
    *nowhere = 1;
  }
  if (fake_has(fake_lib(), "hang")) {
    for (;;) pause();
  }
  ret_t code = (ret_t)fake_int(fake_lib(), "init", SUCCESS);
  if (code != SUCCESS) return code;
  initialized++;
  return SUCCESS;
}

static ret_t do_count(unsigned int *count) {
  if (!initialized) return UNINITIALIZED;
  if (count == NULL) return INVALID_ARGUMENT;
  *count = (unsigned int)fake_int(fake_lib(), "count", fake_dev_count());
  return SUCCESS;
}

static ret_t do_handle(unsigned int index, device_t *handle) {
  if (!initialized) return UNINITIALIZED;
  if (handle == NULL || fake_dev(index) == NULL) return INVALID_ARGUMENT;
  *handle = (device_t)(uintptr_t)(index + 1);
  return SUCCESS;
}

static ret_t copy_field(device_t handle, char *buffer, unsigned int size, const char *key) {
  const fake_record *dev = device_of(handle);
  if (dev == NULL || buffer == NULL) return INVALID_ARGUMENT;
  if (fake_fails(dev, key)) return UNKNOWN;
  return fake_copy(buffer, size, fake_str(dev, key, ""), dev, key) == 0 ? SUCCESS : INSUFFICIENT_SIZE;
}

static ret_t do_pci(device_t handle, pci_info_t *pci) {
  const fake_record *dev = device_of(handle);
  if (dev == NULL || pci == NULL) return INVALID_ARGUMENT;
  if (!fake_has(dev, "bus")) return NOT_SUPPORTED;
  unsigned domain, bus, device, function;
  fake_bdf(fake_str(dev, "bus", ""), &domain, &bus, &device, &function);
  memset(pci, 0, sizeof *pci);
  pci->domain = domain;
  pci->bus = bus;
  pci->device = device;
  pci->pciDeviceId = 0x233010de;
  snprintf(pci->busId, sizeof pci->busId, "%08X:%02X:%02X.0", domain, bus, device);
  snprintf(pci->busIdLegacy, sizeof pci->busIdLegacy, "%04X:%02X:%02X.0", domain, bus, device);
  return SUCCESS;
}

#if !defined(FAKE_IXML) && !defined(FAKE_HGML) && !defined(FAKE_OMIT_FABRIC)
#define FAKE_FABRIC 1
/*
 * A device's fabric fields: fabricUuid (32 hex digits, dashes allowed), fabricClique,
 * fabricState (default 3, completed), fabricStatus (default 0, success), fabricHealth; without
 * fabricUuid and fabricState the card has no fabric (NOT_SUPPORTED). fail=fabric fails the call.
 */
static int hex_digit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

static ret_t read_fabric(device_t handle, unsigned char uuid[16], ret_t *status, unsigned int *clique,
                         unsigned char *state) {
  const fake_record *dev = device_of(handle);
  if (dev == NULL) return INVALID_ARGUMENT;
  if (fake_fails(dev, "fabric")) return UNKNOWN;
  if (!fake_has(dev, "fabricUuid") && !fake_has(dev, "fabricState")) return NOT_SUPPORTED;
  const char *text = fake_str(dev, "fabricUuid", "");
  memset(uuid, 0, 16);
  for (unsigned n = 0; *text != '\0' && n < 32; ++text) {
    int digit = hex_digit(*text);
    if (digit < 0) continue;
    uuid[n / 2] |= (unsigned char)(n % 2 == 0 ? digit << 4 : digit);
    ++n;
  }
  *status = (ret_t)fake_int(dev, "fabricStatus", SUCCESS);
  *clique = (unsigned int)fake_int(dev, "fabricClique", 0);
  *state = (unsigned char)fake_int(dev, "fabricState", 3);
  return SUCCESS;
}

FAKE_EXPORT ret_t SYM(DeviceGetGpuFabricInfo)(device_t handle, fabric_info_t *info) {
  FAKE_TRACE();
  if (info == NULL) return INVALID_ARGUMENT;
  memset(info, 0, sizeof *info);
  return read_fabric(handle, info->clusterUuid, &info->status, &info->cliqueId, &info->state);
}
#endif

#ifndef FAKE_LEGACY
#ifdef FAKE_FABRIC
/* lib:nvidia fabricV=refuse: a driver that exports the call but takes no v2 version word. */
FAKE_EXPORT ret_t SYM(DeviceGetGpuFabricInfoV)(device_t handle, fabric_info_v2_t *info) {
  FAKE_TRACE();
  if (info == NULL) return INVALID_ARGUMENT;
  if (info->version != FABRIC_V2_VERSION || strcmp(fake_str(fake_lib(), "fabricV", ""), "refuse") == 0)
    return ARGUMENT_VERSION_MISMATCH;
  const fake_record *dev = device_of(handle);
  ret_t ret = read_fabric(handle, info->clusterUuid, &info->status, &info->cliqueId, &info->state);
  if (ret == SUCCESS) info->healthMask = (unsigned int)fake_int(dev, "fabricHealth", 0);
  return ret;
}
#endif

FAKE_EXPORT ret_t SYM(Init_v2)(void) {
  FAKE_TRACE();
  return do_init();
}
FAKE_EXPORT ret_t SYM(DeviceGetCount_v2)(unsigned int *count) {
  FAKE_TRACE();
  return do_count(count);
}
FAKE_EXPORT ret_t SYM(DeviceGetHandleByIndex_v2)(unsigned int index, device_t *handle) {
  FAKE_TRACE();
  return do_handle(index, handle);
}
FAKE_EXPORT ret_t SYM(DeviceGetMemoryInfo_v2)(device_t handle, memory_v2_t *memory) {
  FAKE_TRACE();
  const fake_record *dev = device_of(handle);
  if (dev == NULL || memory == NULL) return INVALID_ARGUMENT;
  if (memory->version != MEMORY_V2_VERSION) return ARGUMENT_VERSION_MISMATCH;
  if (fake_fails(dev, "memory")) return UNKNOWN;
  memory->total = fake_u64(dev, "memory", 0);
  memory->reserved = 0;
  memory->free = memory->total;
  memory->used = 0;
  return SUCCESS;
}
FAKE_EXPORT ret_t SYM(DeviceGetPciInfo_v3)(device_t handle, pci_info_t *pci) {
  FAKE_TRACE();
  return do_pci(handle, pci);
}
FAKE_EXPORT ret_t SYM(DeviceGetPciInfo_v2)(device_t handle, pci_info_t *pci) {
  FAKE_TRACE();
  return do_pci(handle, pci);
}
FAKE_EXPORT ret_t RUNTIME_VERSION_V2(int *version) {
  FAKE_TRACE();
  if (!fake_has(fake_lib(), "runtime")) return NOT_SUPPORTED;
  *version = (int)fake_int(fake_lib(), "runtime", 0);
  return SUCCESS;
}
#endif

FAKE_EXPORT ret_t SYM(Init)(void) {
  FAKE_TRACE();
  return do_init();
}

FAKE_EXPORT ret_t SYM(Shutdown)(void) {
  FAKE_TRACE();
  if (!initialized) return UNINITIALIZED;
  initialized--;
  return SUCCESS;
}

FAKE_EXPORT const char *SYM(ErrorString)(ret_t code) {
  switch (code) {
    case SUCCESS: return "Success";
    case UNINITIALIZED: return "Uninitialized";
    case INVALID_ARGUMENT: return "Invalid Argument";
    case NOT_SUPPORTED: return "Not Supported";
    case 9: return "Driver Not Loaded";
    case 18: return "Driver/library version mismatch";
    case ARGUMENT_VERSION_MISMATCH: return "Argument version mismatch";
    default: return "Unknown Error";
  }
}

FAKE_EXPORT ret_t SYM(DeviceGetCount)(unsigned int *count) {
  FAKE_TRACE();
  return do_count(count);
}

FAKE_EXPORT ret_t SYM(DeviceGetHandleByIndex)(unsigned int index, device_t *handle) {
  FAKE_TRACE();
  return do_handle(index, handle);
}

#ifndef FAKE_OMIT_NAME
FAKE_EXPORT ret_t SYM(DeviceGetName)(device_t handle, char *name, unsigned int length) {
  FAKE_TRACE();
  return copy_field(handle, name, length, "name");
}
#endif

FAKE_EXPORT ret_t SYM(DeviceGetUUID)(device_t handle, char *uuid, unsigned int length) {
  FAKE_TRACE();
  return copy_field(handle, uuid, length, "uuid");
}

FAKE_EXPORT ret_t SYM(DeviceGetMemoryInfo)(device_t handle, memory_t *memory) {
  FAKE_TRACE();
  const fake_record *dev = device_of(handle);
  if (dev == NULL || memory == NULL) return INVALID_ARGUMENT;
  if (fake_fails(dev, "memory")) return UNKNOWN;
  memory->total = fake_u64(dev, "memory", 0);
  memory->free = memory->total;
  memory->used = 0;
  return SUCCESS;
}

FAKE_EXPORT ret_t SYM(DeviceGetPciInfo)(device_t handle, pci_info_t *pci) {
  FAKE_TRACE();
  return do_pci(handle, pci);
}

FAKE_EXPORT ret_t COMPUTE_CAPABILITY(device_t handle, int *major, int *minor) {
  FAKE_TRACE();
  const fake_record *dev = device_of(handle);
  if (dev == NULL || major == NULL || minor == NULL) return INVALID_ARGUMENT;
  if (!fake_has(dev, "cc")) return NOT_SUPPORTED;
  if (sscanf(fake_str(dev, "cc", ""), "%d.%d", major, minor) != 2) return UNKNOWN;
  return SUCCESS;
}

FAKE_EXPORT ret_t SYM(DeviceGetNumGpuCores)(device_t handle, unsigned int *cores) {
  FAKE_TRACE();
  const fake_record *dev = device_of(handle);
  if (dev == NULL || cores == NULL) return INVALID_ARGUMENT;
  if (!fake_has(dev, "cores")) return NOT_SUPPORTED;
  *cores = (unsigned int)fake_int(dev, "cores", 0);
  return SUCCESS;
}

#ifndef FAKE_IXML
FAKE_EXPORT ret_t SYM(DeviceGetMigMode)(device_t handle, unsigned int *current, unsigned int *pending) {
  FAKE_TRACE();
  const fake_record *dev = device_of(handle);
  if (dev == NULL || current == NULL || pending == NULL) return INVALID_ARGUMENT;
  if (!fake_has(dev, "mig")) return NOT_SUPPORTED;
  *current = (unsigned int)fake_int(dev, "mig", 0);
  *pending = (unsigned int)fake_int(dev, "migPending", *current);
  return SUCCESS;
}
#endif

FAKE_EXPORT ret_t SYM(DeviceGetMemoryAffinity)(device_t handle, unsigned int size, unsigned long *set, int scope) {
  FAKE_TRACE();
  const fake_record *dev = device_of(handle);
  if (dev == NULL || set == NULL || size == 0 || scope != 0) return INVALID_ARGUMENT;
  if (!fake_has(dev, "numa")) return NOT_SUPPORTED;
  unsigned node = (unsigned)fake_int(dev, "numa", 0);
  unsigned bits = (unsigned)(sizeof(unsigned long) * 8);
  if (node / bits >= size) return INSUFFICIENT_SIZE;
  memset(set, 0, size * sizeof(unsigned long));
  set[node / bits] = 1ul << (node % bits);
  return SUCCESS;
}

FAKE_EXPORT ret_t SYM(SystemGetDriverVersion)(char *version, unsigned int length) {
  FAKE_TRACE();
  if (!fake_has(fake_lib(), "driver")) return NOT_SUPPORTED;
  return fake_copy(version, length, fake_str(fake_lib(), "driver", ""), fake_lib(), "driver") == 0
             ? SUCCESS
             : INSUFFICIENT_SIZE;
}

FAKE_EXPORT ret_t RUNTIME_VERSION(int *version) {
  FAKE_TRACE();
  if (!fake_has(fake_lib(), "runtime")) return NOT_SUPPORTED;
  *version = (int)fake_int(fake_lib(), "runtime", 0);
  return SUCCESS;
}

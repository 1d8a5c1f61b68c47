/*
 * Fake Moore Threads MTML (libmtml.so): opaque library/device/memory/system objects
 * passed back into every call. Memory is in bytes.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "fake-common.h"

typedef unsigned ret_t;
enum { SUCCESS = 0, DRIVER_NOT_LOADED = 1, INVALID_ARGUMENT = 3, NOT_SUPPORTED = 4, INSUFFICIENT_SIZE = 6,
       NOT_FOUND = 7, UNKNOWN = 999 };

typedef struct {
  char sbdf[32];
  unsigned int segment, bus, device, pciDeviceId, pciSubsystemId, busWidth;
  float pciMaxSpeed, pciCurSpeed;
  unsigned int pciMaxWidth, pciCurWidth, pciMaxGen, pciCurGen;
  int rsvd[6];
} pci_info_t;
_Static_assert(sizeof(pci_info_t) == 104, "MtmlPciInfo");

/* Objects are tagged pointers into these arrays so stale or foreign pointers fail. */
typedef struct { int kind; unsigned index; } object_t;
enum { KIND_LIBRARY = 1, KIND_DEVICE, KIND_MEMORY, KIND_SYSTEM };
static object_t library_object = {KIND_LIBRARY, 0};
static object_t system_object = {KIND_SYSTEM, 0};
static object_t device_objects[FAKE_MAX_DEVICES];
static object_t memory_objects[FAKE_MAX_DEVICES];
static int initialized;

static const fake_record *device_of(const object_t *object, int kind) {
  if (!initialized || object == NULL || object->kind != kind) return NULL;
  return fake_dev(object->index);
}

FAKE_EXPORT ret_t mtmlLibraryInit(object_t **library) {
  FAKE_TRACE();
  if (library == NULL) return INVALID_ARGUMENT;
  fake_load(FAKE_MFR);
  ret_t code = (ret_t)fake_int(fake_lib(), "init", SUCCESS);
  if (code != SUCCESS) return code;
  initialized = 1;
  *library = &library_object;
  return SUCCESS;
}

FAKE_EXPORT ret_t mtmlLibraryShutDown(object_t *library) {
  FAKE_TRACE();
  if (library != &library_object) return INVALID_ARGUMENT;
  initialized = 0;
  return SUCCESS;
}

FAKE_EXPORT const char *mtmlErrorString(ret_t code) {
  switch (code) {
    case SUCCESS: return "Success";
    case DRIVER_NOT_LOADED: return "Driver not loaded";
    case 9: return "Driver too old";
    case 10: return "Driver too new";
    default: return "Unknown error";
  }
}

FAKE_EXPORT ret_t mtmlLibraryCountDevice(const object_t *library, unsigned *count) {
  FAKE_TRACE();
  if (!initialized || library != &library_object || count == NULL) return INVALID_ARGUMENT;
  *count = (unsigned)fake_int(fake_lib(), "count", fake_dev_count());
  return SUCCESS;
}

FAKE_EXPORT ret_t mtmlLibraryInitDeviceByIndex(const object_t *library, unsigned index, object_t **device) {
  FAKE_TRACE();
  if (!initialized || library != &library_object || device == NULL) return INVALID_ARGUMENT;
  if (fake_dev(index) == NULL) return NOT_FOUND;
  device_objects[index] = (object_t){KIND_DEVICE, index};
  *device = &device_objects[index];
  return SUCCESS;
}

FAKE_EXPORT ret_t mtmlLibraryFreeDevice(object_t *device) {
  FAKE_TRACE();
  if (device == NULL || device->kind != KIND_DEVICE) return INVALID_ARGUMENT;
  device->kind = 0;
  return SUCCESS;
}

static ret_t copy_field(const object_t *device, char *buffer, unsigned size, const char *key) {
  const fake_record *dev = device_of(device, KIND_DEVICE);
  if (dev == NULL || buffer == NULL) return INVALID_ARGUMENT;
  if (fake_fails(dev, key)) return UNKNOWN;
  return fake_copy(buffer, size, fake_str(dev, key, ""), dev, key) == 0 ? SUCCESS : INSUFFICIENT_SIZE;
}

FAKE_EXPORT ret_t mtmlDeviceGetName(const object_t *device, char *name, unsigned length) {
  FAKE_TRACE();
  return copy_field(device, name, length, "name");
}

FAKE_EXPORT ret_t mtmlDeviceGetUUID(const object_t *device, char *uuid, unsigned length) {
  FAKE_TRACE();
  return copy_field(device, uuid, length, "uuid");
}

FAKE_EXPORT ret_t mtmlDeviceGetPciInfo(const object_t *device, pci_info_t *pci) {
  FAKE_TRACE();
  const fake_record *dev = device_of(device, KIND_DEVICE);
  if (dev == NULL || pci == NULL) return INVALID_ARGUMENT;
  if (!fake_has(dev, "bus")) return NOT_SUPPORTED;
  unsigned domain, bus, dev_number, function;
  fake_bdf(fake_str(dev, "bus", ""), &domain, &bus, &dev_number, &function);
  memset(pci, 0, sizeof *pci);
  snprintf(pci->sbdf, sizeof pci->sbdf, "%08X:%02X:%02X.0", domain, bus, dev_number);
  pci->segment = domain;
  pci->bus = bus;
  pci->device = dev_number;
  return SUCCESS;
}

FAKE_EXPORT ret_t mtmlDeviceCountGpuCores(const object_t *device, unsigned *cores) {
  FAKE_TRACE();
  const fake_record *dev = device_of(device, KIND_DEVICE);
  if (dev == NULL || cores == NULL) return INVALID_ARGUMENT;
  if (!fake_has(dev, "cores")) return NOT_SUPPORTED;
  *cores = (unsigned)fake_int(dev, "cores", 0);
  return SUCCESS;
}

FAKE_EXPORT ret_t mtmlDeviceInitMemory(const object_t *device, object_t **memory) {
  FAKE_TRACE();
  const fake_record *dev = device_of(device, KIND_DEVICE);
  if (dev == NULL || memory == NULL) return INVALID_ARGUMENT;
  memory_objects[device->index] = (object_t){KIND_MEMORY, device->index};
  *memory = &memory_objects[device->index];
  return SUCCESS;
}

FAKE_EXPORT ret_t mtmlMemoryGetTotal(const object_t *memory, unsigned long long *total) {
  FAKE_TRACE();
  const fake_record *dev = device_of(memory, KIND_MEMORY);
  if (dev == NULL || total == NULL) return INVALID_ARGUMENT;
  if (fake_fails(dev, "memory")) return UNKNOWN;
  *total = fake_u64(dev, "memory", 0);
  return SUCCESS;
}

FAKE_EXPORT ret_t mtmlDeviceFreeMemory(object_t *memory) {
  FAKE_TRACE();
  if (memory == NULL || memory->kind != KIND_MEMORY) return INVALID_ARGUMENT;
  memory->kind = 0;
  return SUCCESS;
}

FAKE_EXPORT ret_t mtmlLibraryInitSystem(const object_t *library, object_t **system) {
  FAKE_TRACE();
  if (!initialized || library != &library_object || system == NULL) return INVALID_ARGUMENT;
  *system = &system_object;
  return SUCCESS;
}

FAKE_EXPORT ret_t mtmlSystemGetDriverVersion(const object_t *system, char *version, unsigned length) {
  FAKE_TRACE();
  if (system != &system_object || version == NULL) return INVALID_ARGUMENT;
  if (!fake_has(fake_lib(), "driver")) return NOT_SUPPORTED;
  return fake_copy(version, length, fake_str(fake_lib(), "driver", ""), fake_lib(), "driver") == 0
             ? SUCCESS
             : INSUFFICIENT_SIZE;
}

FAKE_EXPORT ret_t mtmlLibraryFreeSystem(object_t *system) {
  FAKE_TRACE();
  return system == &system_object ? SUCCESS : INVALID_ARGUMENT;
}

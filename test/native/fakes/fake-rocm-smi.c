/*
 * Fake ROCm SMI (librocm_smi64.so), index based. Built twice: as AMD's legacy library
 * (FAKE_MFR "amd", vendor 0x1002) and as Hygon's DTK build (FAKE_MFR "hygon", 0x1d94).
 */
#include <stddef.h>
#include <stdint.h>

#include "fake-common.h"

typedef int status_t;
enum { SUCCESS = 0, INVALID_ARGS = 1, NOT_SUPPORTED = 2, INSUFFICIENT_SIZE = 11, NOT_INIT = 32, UNKNOWN = 0xFFFFFFFF };

static int initialized;

static const fake_record *device_of(uint32_t index) { return initialized ? fake_dev(index) : NULL; }

FAKE_EXPORT status_t rsmi_init(uint64_t flags) {
  FAKE_TRACE();
  (void)flags;
  fake_load(FAKE_MFR);
  status_t code = (status_t)fake_int(fake_lib(), "init", SUCCESS);
  if (code != SUCCESS) return code;
  initialized = 1;
  return SUCCESS;
}

FAKE_EXPORT status_t rsmi_shut_down(void) {
  FAKE_TRACE();
  initialized = 0;
  return SUCCESS;
}

FAKE_EXPORT status_t rsmi_num_monitor_devices(uint32_t *count) {
  FAKE_TRACE();
  if (!initialized) return NOT_INIT;
  if (count == NULL) return INVALID_ARGS;
  *count = (uint32_t)fake_int(fake_lib(), "count", fake_dev_count());
  return SUCCESS;
}

FAKE_EXPORT status_t rsmi_dev_name_get(uint32_t index, char *name, size_t length) {
  FAKE_TRACE();
  const fake_record *dev = device_of(index);
  if (dev == NULL || name == NULL) return INVALID_ARGS;
  if (fake_fails(dev, "name")) return (status_t)UNKNOWN;
  return fake_copy(name, (unsigned)length, fake_str(dev, "name", ""), dev, "name") == 0 ? SUCCESS : INSUFFICIENT_SIZE;
}

FAKE_EXPORT status_t rsmi_dev_vendor_id_get(uint32_t index, uint16_t *vendor) {
  FAKE_TRACE();
  const fake_record *dev = device_of(index);
  if (dev == NULL || vendor == NULL) return INVALID_ARGS;
  *vendor = (uint16_t)fake_int(dev, "vendor", FAKE_VENDOR);
  return SUCCESS;
}

FAKE_EXPORT status_t rsmi_dev_unique_id_get(uint32_t index, uint64_t *id) {
  FAKE_TRACE();
  const fake_record *dev = device_of(index);
  if (dev == NULL || id == NULL) return INVALID_ARGS;
  if (!fake_has(dev, "uniqueId")) return NOT_SUPPORTED;
  *id = fake_u64(dev, "uniqueId", 0);
  return SUCCESS;
}

FAKE_EXPORT status_t rsmi_dev_pci_id_get(uint32_t index, uint64_t *bdfid) {
  FAKE_TRACE();
  const fake_record *dev = device_of(index);
  if (dev == NULL || bdfid == NULL) return INVALID_ARGS;
  unsigned domain, bus, device, function;
  fake_bdf(fake_str(dev, "bus", "0:0.0"), &domain, &bus, &device, &function);
  *bdfid = ((uint64_t)domain << 32) | ((uint64_t)bus << 8) | ((uint64_t)device << 3) | function;
  return SUCCESS;
}

FAKE_EXPORT status_t rsmi_dev_memory_total_get(uint32_t index, int type, uint64_t *total) {
  FAKE_TRACE();
  const fake_record *dev = device_of(index);
  if (dev == NULL || total == NULL || type != 0) return INVALID_ARGS;
  if (fake_fails(dev, "memory")) return (status_t)UNKNOWN;
  *total = fake_u64(dev, "memory", 0);
  return SUCCESS;
}

FAKE_EXPORT status_t rsmi_topo_get_numa_node_number(uint32_t index, uint32_t *node) {
  FAKE_TRACE();
  const fake_record *dev = device_of(index);
  if (dev == NULL || node == NULL) return INVALID_ARGS;
  if (!fake_has(dev, "numa")) return NOT_SUPPORTED;
  *node = (uint32_t)fake_int(dev, "numa", 0);
  return SUCCESS;
}

FAKE_EXPORT status_t rsmi_dev_target_graphics_version_get(uint32_t index, uint64_t *version) {
  FAKE_TRACE();
  const fake_record *dev = device_of(index);
  if (dev == NULL || version == NULL) return INVALID_ARGS;
  if (!fake_has(dev, "gfx")) return NOT_SUPPORTED;
  *version = fake_u64(dev, "gfx", 0);
  return SUCCESS;
}

FAKE_EXPORT status_t rsmi_version_str_get(int component, char *text, uint32_t length) {
  FAKE_TRACE();
  if (component != 0 || text == NULL) return INVALID_ARGS;
  if (!fake_has(fake_lib(), "driver")) return NOT_SUPPORTED;
  return fake_copy(text, length, fake_str(fake_lib(), "driver", ""), fake_lib(), "driver") == 0 ? SUCCESS
                                                                                                : INSUFFICIENT_SIZE;
}

FAKE_EXPORT status_t rsmi_status_string(status_t status, const char **text) {
  if (text == NULL) return INVALID_ARGS;
  *text = status == SUCCESS ? "RSMI_STATUS_SUCCESS: The function has been executed successfully."
                            : "RSMI_STATUS_UNKNOWN_ERROR: An unknown error occurred";
  return SUCCESS;
}

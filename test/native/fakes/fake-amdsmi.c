/*
 * Fake AMD SMI (libamd_smi.so): one socket per device, one GPU processor per socket,
 * as on an MI300X node. Layouts follow amdsmi.h of AMD SMI 24.6 / ROCm 6.2.
 */
#include <stdint.h>
#include <string.h>

#include "fake-common.h"

typedef int status_t;
typedef void *handle_t;
enum { SUCCESS = 0, INVAL = 1, NOT_SUPPORTED = 2, NOT_INIT = 32, INSUFFICIENT_SIZE = 15, UNKNOWN = -1 };

typedef struct {
  char market_name[256];
  uint32_t vendor_id;
  char vendor_name[256];
  uint32_t subvendor_id;
  uint64_t device_id;
  uint32_t rev_id;
  char asic_serial[256];
  uint32_t oam_id;
  uint32_t num_of_compute_units;
  uint64_t target_graphics_version;
  uint32_t subsystem_id;
  uint32_t reserved[21];
} asic_info_t;
_Static_assert(sizeof(asic_info_t) == 896, "amdsmi_asic_info_t");

typedef struct {
  char driver_version[256];
  char driver_date[256];
  char driver_name[256];
} driver_info_t;

static int initialized;

static const fake_record *device_of(handle_t handle) {
  if (!initialized || handle == NULL) return NULL;
  return fake_dev((unsigned)((uintptr_t)handle - 1));
}

FAKE_EXPORT status_t amdsmi_init(uint64_t flags) {
  FAKE_TRACE();
  if ((flags & (1u << 1)) == 0) return INVAL;
  fake_load(FAKE_MFR);
  status_t code = (status_t)fake_int(fake_lib(), "init", SUCCESS);
  if (code != SUCCESS) return code;
  initialized = 1;
  return SUCCESS;
}

FAKE_EXPORT status_t amdsmi_shut_down(void) {
  FAKE_TRACE();
  initialized = 0;
  return SUCCESS;
}

FAKE_EXPORT status_t amdsmi_get_socket_handles(uint32_t *count, handle_t *sockets) {
  FAKE_TRACE();
  if (!initialized) return NOT_INIT;
  if (count == NULL) return INVAL;
  uint32_t total = (uint32_t)fake_int(fake_lib(), "count", fake_dev_count());
  if (sockets == NULL) {
    *count = total;
    return SUCCESS;
  }
  uint32_t n = *count < fake_dev_count() ? *count : fake_dev_count();
  for (uint32_t i = 0; i < n; i++) sockets[i] = (handle_t)(uintptr_t)(i + 1);
  *count = n;
  return SUCCESS;
}

FAKE_EXPORT status_t amdsmi_get_processor_handles(handle_t socket, uint32_t *count, handle_t *processors) {
  FAKE_TRACE();
  if (!initialized) return NOT_INIT;
  if (count == NULL || device_of(socket) == NULL) return INVAL;
  if (processors == NULL) {
    *count = 1;
    return SUCCESS;
  }
  if (*count < 1) return INSUFFICIENT_SIZE;
  processors[0] = socket;
  *count = 1;
  return SUCCESS;
}

FAKE_EXPORT status_t amdsmi_get_processor_type(handle_t handle, int *type) {
  FAKE_TRACE();
  const fake_record *dev = device_of(handle);
  if (dev == NULL || type == NULL) return INVAL;
  *type = (int)fake_int(dev, "type", 1);
  return SUCCESS;
}

FAKE_EXPORT status_t amdsmi_get_gpu_asic_info(handle_t handle, asic_info_t *info) {
  FAKE_TRACE();
  const fake_record *dev = device_of(handle);
  if (dev == NULL || info == NULL) return INVAL;
  if (fake_fails(dev, "name")) return UNKNOWN;
  memset(info, 0, sizeof *info);
  fake_copy(info->market_name, sizeof info->market_name, fake_str(dev, "name", ""), dev, "name");
  info->vendor_id = 0x1002;
  info->num_of_compute_units = (uint32_t)fake_int(dev, "cores", 0xffffffff);
  info->target_graphics_version = fake_u64(dev, "gfx", ~0ull);
  return SUCCESS;
}

FAKE_EXPORT status_t amdsmi_get_gpu_device_uuid(handle_t handle, unsigned int *length, char *uuid) {
  FAKE_TRACE();
  const fake_record *dev = device_of(handle);
  if (dev == NULL || length == NULL || uuid == NULL) return INVAL;
  return fake_copy(uuid, *length, fake_str(dev, "uuid", ""), dev, "uuid") == 0 ? SUCCESS : INSUFFICIENT_SIZE;
}

FAKE_EXPORT status_t amdsmi_get_gpu_device_bdf(handle_t handle, uint64_t *bdf) {
  FAKE_TRACE();
  const fake_record *dev = device_of(handle);
  if (dev == NULL || bdf == NULL) return INVAL;
  unsigned domain, bus, device, function;
  fake_bdf(fake_str(dev, "bus", "0:0.0"), &domain, &bus, &device, &function);
  *bdf = ((uint64_t)domain << 16) | ((uint64_t)bus << 8) | ((uint64_t)device << 3) | function;
  return SUCCESS;
}

FAKE_EXPORT status_t amdsmi_get_gpu_memory_total(handle_t handle, int type, uint64_t *total) {
  FAKE_TRACE();
  const fake_record *dev = device_of(handle);
  if (dev == NULL || total == NULL || type != 0) return INVAL;
  if (fake_fails(dev, "memory")) return UNKNOWN;
  *total = fake_u64(dev, "memory", 0);
  return SUCCESS;
}

FAKE_EXPORT status_t amdsmi_topo_get_numa_node_number(handle_t handle, uint32_t *node) {
  FAKE_TRACE();
  const fake_record *dev = device_of(handle);
  if (dev == NULL || node == NULL) return INVAL;
  if (!fake_has(dev, "numa")) return NOT_SUPPORTED;
  *node = (uint32_t)fake_int(dev, "numa", 0);
  return SUCCESS;
}

FAKE_EXPORT status_t amdsmi_get_gpu_driver_info(handle_t handle, driver_info_t *info) {
  FAKE_TRACE();
  if (device_of(handle) == NULL || info == NULL) return INVAL;
  if (!fake_has(fake_lib(), "driver")) return NOT_SUPPORTED;
  memset(info, 0, sizeof *info);
  fake_copy(info->driver_version, sizeof info->driver_version, fake_str(fake_lib(), "driver", ""), fake_lib(), "driver");
  strcpy(info->driver_name, "amdgpu");
  return SUCCESS;
}

FAKE_EXPORT status_t amdsmi_status_code_to_string(status_t status, const char **text) {
  if (text == NULL) return INVAL;
  switch (status) {
    case SUCCESS: *text = "AMDSMI_STATUS_SUCCESS: Call succeeded"; break;
    case 34: *text = "AMDSMI_STATUS_DRIVER_NOT_LOADED: Driver not loaded"; break;
    default: *text = "AMDSMI_STATUS_UNKNOWN_ERROR: An unknown error occurred"; break;
  }
  return SUCCESS;
}

/*
 * Fake Huawei DCMI V1 (libdcmi.so): card-id + device-id addressed, memory in MB. Each
 * device names its card (`card`, default its position) and chip within it (`chip`).
 */
#include <stdio.h>
#include <string.h>

#include "fake-common.h"

enum { SUCCESS = 0, INVALID_PARAMETER = -8001, DEVICE_NOT_EXIST = -8008, NOT_SUPPORT = -8255 };

struct chip_info {
  unsigned char chip_type[32];
  unsigned char chip_name[32];
  unsigned char chip_ver[32];
  unsigned int aicore_cnt;
};
struct chip_info_v2 {
  struct chip_info base;
  unsigned char npu_name[32];
};
struct die_id {
  unsigned int soc_die[5];
};
struct hbm_info {
  unsigned long long memory_size;
  unsigned int freq;
  unsigned long long memory_usage;
  int temp;
  unsigned int bandwith_util_rate;
};
struct memory_info_v3 {
  unsigned long long memory_size;
  unsigned long long memory_available;
  unsigned int freq;
  unsigned long hugepagesize;
  unsigned long hugepages_total;
  unsigned long hugepages_free;
  unsigned int utiliza;
  unsigned char reserve[60];
};
struct pcie_info_all {
  unsigned int venderid, subvenderid, deviceid, subdeviceid;
  int domain;
  unsigned int bdf_busid, bdf_deviceid, bdf_funcid;
  unsigned char reserve[32];
};
_Static_assert(sizeof(struct chip_info_v2) == 132, "dcmi_chip_info_v2");
_Static_assert(sizeof(struct pcie_info_all) == 64, "dcmi_pcie_info_all");

static int initialized;

static int card_of(unsigned i) { return (int)fake_int(fake_dev(i), "card", i); }

static const fake_record *find(int card, int chip) {
  if (!initialized) return NULL;
  for (unsigned i = 0; i < fake_dev_count(); i++) {
    if (card_of(i) == card && fake_int(fake_dev(i), "chip", 0) == chip) return fake_dev(i);
  }
  return NULL;
}

FAKE_EXPORT int dcmi_init(void) {
  FAKE_TRACE();
  fake_load(FAKE_MFR);
  int code = (int)fake_int(fake_lib(), "init", SUCCESS);
  initialized = code == SUCCESS;
  return code;
}

FAKE_EXPORT int dcmi_get_card_list(int *card_num, int *card_list, int list_len) {
  FAKE_TRACE();
  if (!initialized || card_num == NULL || card_list == NULL) return INVALID_PARAMETER;
  int n = 0;
  for (unsigned i = 0; i < fake_dev_count(); i++) {
    int seen = 0;
    for (int j = 0; j < n; j++) seen |= card_list[j] == card_of(i);
    if (!seen && n < list_len) card_list[n++] = card_of(i);
  }
  *card_num = (int)fake_int(fake_lib(), "count", n);
  return SUCCESS;
}

FAKE_EXPORT int dcmi_get_device_num_in_card(int card, int *device_num) {
  FAKE_TRACE();
  if (!initialized || device_num == NULL) return INVALID_PARAMETER;
  int n = 0;
  for (unsigned i = 0; i < fake_dev_count(); i++) n += card_of(i) == card;
  if (n == 0) return DEVICE_NOT_EXIST;
  *device_num = n;
  return SUCCESS;
}

FAKE_EXPORT int dcmi_get_device_type(int card, int chip, int *type) {
  FAKE_TRACE();
  const fake_record *dev = find(card, chip);
  if (dev == NULL || type == NULL) return DEVICE_NOT_EXIST;
  *type = (int)fake_int(dev, "type", 0);
  return SUCCESS;
}

static int fill_chip(int card, int chip, struct chip_info *info) {
  const fake_record *dev = find(card, chip);
  if (dev == NULL || info == NULL) return DEVICE_NOT_EXIST;
  if (fake_fails(dev, "name")) return NOT_SUPPORT;
  snprintf((char *)info->chip_type, sizeof info->chip_type, "Ascend");
  fake_copy((char *)info->chip_name, sizeof info->chip_name, fake_str(dev, "name", ""), dev, "name");
  snprintf((char *)info->chip_ver, sizeof info->chip_ver, "V1");
  info->aicore_cnt = (unsigned)fake_int(dev, "cores", 0);
  return SUCCESS;
}

FAKE_EXPORT int dcmi_get_device_chip_info_v2(int card, int chip, struct chip_info_v2 *info) {
  FAKE_TRACE();
  if (info == NULL) return INVALID_PARAMETER;
  memset(info, 0, sizeof *info);
  int ret = fill_chip(card, chip, &info->base);
  if (ret == SUCCESS) snprintf((char *)info->npu_name, sizeof info->npu_name, "%s", "npu");
  return ret;
}

FAKE_EXPORT int dcmi_get_device_chip_info(int card, int chip, struct chip_info *info) {
  FAKE_TRACE();
  if (info == NULL) return INVALID_PARAMETER;
  memset(info, 0, sizeof *info);
  return fill_chip(card, chip, info);
}

FAKE_EXPORT int dcmi_get_device_die_v2(int card, int chip, int die_type, struct die_id *die) {
  FAKE_TRACE();
  const fake_record *dev = find(card, chip);
  if (dev == NULL || die == NULL || die_type != 1) return INVALID_PARAMETER;
  if (!fake_has(dev, "die")) return NOT_SUPPORT;
  memset(die, 0, sizeof *die);
  sscanf(fake_str(dev, "die", ""), "%x %x %x %x %x", &die->soc_die[0], &die->soc_die[1], &die->soc_die[2],
         &die->soc_die[3], &die->soc_die[4]);
  return SUCCESS;
}

FAKE_EXPORT int dcmi_get_device_hbm_info(int card, int chip, struct hbm_info *hbm) {
  FAKE_TRACE();
  const fake_record *dev = find(card, chip);
  if (dev == NULL || hbm == NULL) return DEVICE_NOT_EXIST;
  if (fake_fails(dev, "hbm")) return NOT_SUPPORT;
  memset(hbm, 0, sizeof *hbm);
  hbm->memory_size = fake_u64(dev, "memory", 0);
  return SUCCESS;
}

FAKE_EXPORT int dcmi_get_device_memory_info_v3(int card, int chip, struct memory_info_v3 *memory) {
  FAKE_TRACE();
  const fake_record *dev = find(card, chip);
  if (dev == NULL || memory == NULL) return DEVICE_NOT_EXIST;
  memset(memory, 0, sizeof *memory);
  memory->memory_size = fake_u64(dev, "memory", 0);
  memory->memory_available = memory->memory_size;
  return SUCCESS;
}

FAKE_EXPORT int dcmi_get_device_pcie_info_v2(int card, int chip, struct pcie_info_all *pcie) {
  FAKE_TRACE();
  const fake_record *dev = find(card, chip);
  if (dev == NULL || pcie == NULL) return DEVICE_NOT_EXIST;
  if (!fake_has(dev, "bus")) return NOT_SUPPORT;
  unsigned domain, bus, device, function;
  fake_bdf(fake_str(dev, "bus", ""), &domain, &bus, &device, &function);
  memset(pcie, 0, sizeof *pcie);
  pcie->venderid = 0x19e5;
  pcie->deviceid = 0xd802;
  pcie->domain = (int)domain;
  pcie->bdf_busid = bus;
  pcie->bdf_deviceid = device;
  pcie->bdf_funcid = function;
  return SUCCESS;
}

FAKE_EXPORT int dcmi_get_device_logic_id(int *logic, int card, int chip) {
  FAKE_TRACE();
  if (!initialized || logic == NULL) return INVALID_PARAMETER;
  for (unsigned i = 0; i < fake_dev_count(); i++) {
    if (card_of(i) == card && fake_int(fake_dev(i), "chip", 0) == chip) {
      *logic = (int)fake_int(fake_dev(i), "logic", i);
      return SUCCESS;
    }
  }
  return DEVICE_NOT_EXIST;
}

FAKE_EXPORT int dcmi_get_driver_version(char *version, unsigned int length) {
  FAKE_TRACE();
  if (!fake_has(fake_lib(), "driver")) return NOT_SUPPORT;
  return fake_copy(version, length, fake_str(fake_lib(), "driver", ""), fake_lib(), "driver") == 0
             ? SUCCESS
             : INVALID_PARAMETER;
}

#include <cctype>
#include <cstdio>
#include <vector>

#include "common.h"
#include "enumerators.h"
#include "environment.h"
#include "library.h"
#include "symbols.h"
#include "sysfs.h"
#include "text.h"

namespace gpustack {
namespace {

// DCMI V1 ABI (dcmi_interface_api.h), card-id + device-id addressed. Returns 0 or a
// negative error code. Memory is in MB.
constexpr int kSuccess = 0;
constexpr int kCardListSlots = 64;
constexpr int kMaxChipsPerCard = 16;
constexpr int kUnitNpu = 0;  // DCMI_UNIT_TYPE_NPU: skip MCU/CPU units
constexpr int kDieVirtual = 1;  // VDIE: the die id gpustack uses as the device UUID
constexpr unsigned kDriverVersionSize = 64;

struct ChipInfo {
  unsigned char chip_type[32];
  unsigned char chip_name[32];
  unsigned char chip_ver[32];
  unsigned int aicore_cnt;
};
struct ChipInfoV2 {
  ChipInfo base;
  unsigned char npu_name[32];
};
static_assert(sizeof(ChipInfo) == 100, "dcmi_chip_info");
static_assert(sizeof(ChipInfoV2) == 132, "dcmi_chip_info_v2");
struct DieId {
  unsigned int soc_die[5];
};
struct HbmInfo {
  unsigned long long memory_size;
  unsigned int freq;
  unsigned long long memory_usage;
  int temp;
  unsigned int bandwith_util_rate;
};
struct PcieInfoAll {
  unsigned int venderid, subvenderid, deviceid, subdeviceid;
  int domain;
  unsigned int bdf_busid, bdf_deviceid, bdf_funcid;
  unsigned char reserve[32];
};
static_assert(sizeof(PcieInfoAll) == 64, "dcmi_pcie_info_all");
// memory_size (MB) leads every memory-info struct; spare bytes absorb the rest.
union MemoryBuffer {
  unsigned long long memory_size;
  unsigned char spare[512];
};

struct Api {
  int (*init)() = nullptr;
  int (*card_list)(int*, int*, int) = nullptr;
  int (*chips_in_card)(int, int*) = nullptr;
  int (*unit_type)(int, int, int*) = nullptr;
  int (*chip_info_v2)(int, int, ChipInfoV2*) = nullptr;
  int (*chip_info)(int, int, ChipInfo*) = nullptr;
  int (*die_v2)(int, int, int, DieId*) = nullptr;
  int (*die)(int, int, DieId*) = nullptr;
  int (*hbm)(int, int, HbmInfo*) = nullptr;
  int (*memory_v3)(int, int, MemoryBuffer*) = nullptr;
  int (*memory_v2)(int, int, MemoryBuffer*) = nullptr;
  int (*pcie_v2)(int, int, PcieInfoAll*) = nullptr;
  int (*logic_id)(int*, int, int) = nullptr;
  int (*driver_version)(char*, unsigned) = nullptr;
};

std::vector<Symbol> Symbols(Api* api) {
  return {
      {{"dcmi_init"}, Slot(&api->init)},
      {{"dcmi_get_card_list"}, Slot(&api->card_list)},
      {{"dcmi_get_device_num_in_card"}, Slot(&api->chips_in_card)},
      {{"dcmi_get_device_type"}, Slot(&api->unit_type), Need::kOptional},
      {{"dcmi_get_device_chip_info_v2"}, Slot(&api->chip_info_v2), Need::kRequired, "chip"},
      {{"dcmi_get_device_chip_info"}, Slot(&api->chip_info), Need::kRequired, "chip"},
      {{"dcmi_get_device_die_v2"}, Slot(&api->die_v2), Need::kOptional},
      {{"dcmi_get_device_die"}, Slot(&api->die), Need::kOptional},
      {{"dcmi_get_device_hbm_info"}, Slot(&api->hbm), Need::kRequired, "memory"},
      {{"dcmi_get_device_memory_info_v3"}, Slot(&api->memory_v3), Need::kRequired, "memory"},
      {{"dcmi_get_device_memory_info_v2"}, Slot(&api->memory_v2), Need::kRequired, "memory"},
      {{"dcmi_get_device_pcie_info_v2"}, Slot(&api->pcie_v2), Need::kOptional},
      {{"dcmi_get_device_logic_id"}, Slot(&api->logic_id), Need::kOptional},
      {{"dcmi_get_driver_version"}, Slot(&api->driver_version), Need::kOptional},
  };
}

// DCMI has no error-string call; names from its header.
const char* ErrorText(int code) {
  switch (code) {
    case -8001: return "invalid parameter";
    case -8002: return "operation not permitted";
    case -8005: return "inner error";
    case -8007: return "invalid device id";
    case -8008: return "device does not exist";
    case -8012: return "not ready";
    case -8013: return "not supported in container";
    case -8020: return "resource occupied";
    case -8255: return "not supported";
    default: return nullptr;
  }
}

std::string Describe(int code) { return gpustack::Describe(&ErrorText, code); }

// "910B2" -> "910B", "310P3" -> "310P", "910" -> "910" (gpustack's soc families).
std::optional<std::string> AscendFamily(const std::string& chip) {
  size_t digits = 0;
  while (digits < chip.size() && std::isdigit(static_cast<unsigned char>(chip[digits]))) ++digits;
  if (digits != 3) return std::nullopt;
  std::string family = chip.substr(0, 3);
  if (chip.size() > 3 && std::string("BCDP").find(static_cast<char>(std::toupper(chip[3]))) != std::string::npos) {
    family += static_cast<char>(std::toupper(chip[3]));
  }
  return family;
}

bool ReadChip(const Api& api, int card, int chip, Device* device, std::string* why) {
  ChipInfoV2 info{};
  int ret = api.chip_info_v2 != nullptr ? api.chip_info_v2(card, chip, &info) : -1;
  if (ret != kSuccess && api.chip_info != nullptr) ret = api.chip_info(card, chip, &info.base);
  if (ret != kSuccess) {
    *why = "dcmi_get_device_chip_info: " + Describe(ret);
    return false;
  }
  auto name = ReadCString(reinterpret_cast<const char*>(info.base.chip_name), sizeof info.base.chip_name);
  if (!name || name->empty()) {
    *why = "chip_name is empty or not NUL-terminated within 32 bytes";
    return false;
  }
  device->product = name->rfind("Ascend", 0) == 0 ? *name : "Ascend" + *name;
  device->family = AscendFamily(name->rfind("Ascend", 0) == 0 ? name->substr(6) : *name);
  device->cores = info.base.aicore_cnt;
  return true;
}

bool ReadMemory(const Api& api, int card, int chip, uint64_t* mib, std::string* why) {
  int ret = -1;
  HbmInfo hbm{};
  // HBM parts answer hbm_info; DDR parts (310P) answer 0 there and fill memory_info.
  if (api.hbm != nullptr && (ret = api.hbm(card, chip, &hbm)) == kSuccess && hbm.memory_size > 0) {
    *mib = hbm.memory_size;
    return true;
  }
  for (auto fn : {api.memory_v3, api.memory_v2}) {
    MemoryBuffer memory{};
    if (fn != nullptr && (ret = fn(card, chip, &memory)) == kSuccess && memory.memory_size > 0) {
      *mib = memory.memory_size;
      return true;
    }
  }
  *why = "dcmi_get_device_hbm_info: " + (ret == kSuccess ? std::string("no memory reported") : Describe(ret));
  return false;
}

void ReadOptionalFields(const Api& api, int card, int chip, Device* device) {
  DieId die{};
  int ret = api.die_v2 != nullptr ? api.die_v2(card, chip, kDieVirtual, &die) : -1;
  if (ret != kSuccess && api.die != nullptr) ret = api.die(card, chip, &die);
  if (ret == kSuccess) {
    char text[64];
    std::snprintf(text, sizeof text, "%08X-%08X-%08X-%08X-%08X", die.soc_die[0], die.soc_die[1], die.soc_die[2],
                  die.soc_die[3], die.soc_die[4]);
    device->uuid = text;
  }
  PcieInfoAll pcie{};
  if (api.pcie_v2 != nullptr && api.pcie_v2(card, chip, &pcie) == kSuccess && pcie.domain >= 0) {
    device->pci_bus_id = FormatBdf(static_cast<uint64_t>(pcie.domain), pcie.bdf_busid, pcie.bdf_deviceid,
                                   pcie.bdf_funcid);
  }
}

std::optional<std::string> DriverVersion(const Api& api) {
  if (api.driver_version == nullptr) return std::nullopt;
  return OptionalText(api.driver_version, kDriverVersionSize);
}

class Enumeration {
 public:
  Enumeration(const Api& api, Report& report) : api_(api), report_(report), driver_(DriverVersion(api)) {}

  void Card(int card) {
    int chips = 0;
    int ret = api_.chips_in_card(card, &chips);
    if (ret != kSuccess || chips < 0 || chips > kMaxChipsPerCard) {
      report_.Fail(ErrorCode::kCallFailed, "card " + std::to_string(card) + ": dcmi_get_device_num_in_card: " +
                                               (ret != kSuccess ? Describe(ret) : "implausible count " +
                                                                                      std::to_string(chips)));
      return;
    }
    for (int chip = 0; chip < chips; ++chip) Chip(card, chip);
  }

 private:
  void Chip(int card, int chip) {
    int type = kUnitNpu;
    if (api_.unit_type != nullptr && api_.unit_type(card, chip, &type) == kSuccess && type != kUnitNpu) return;
    Device device;
    int logic = -1;
    bool has_logic = api_.logic_id != nullptr && api_.logic_id(&logic, card, chip) == kSuccess && logic >= 0;
    device.index = has_logic ? static_cast<uint32_t>(logic) : next_index_;
    ++next_index_;
    std::string why;
    if (!ReadChip(api_, card, chip, &device, &why) || !ReadMemory(api_, card, chip, &device.memory_mib, &why)) {
      report_.DeviceFail(device.index, why);
      return;
    }
    ReadOptionalFields(api_, card, chip, &device);
    device.driver_version = driver_;
    report_.Add(std::move(device));
  }

  const Api& api_;
  Report& report_;
  std::optional<std::string> driver_;
  uint32_t next_index_ = 0;
};

void Enumerate(const Api& api, Report& report) {
  int cards[kCardListSlots + 1] = {};
  int count = 0;
  int ret = api.card_list(&count, cards, kCardListSlots);
  if (ret != kSuccess) {
    report.Fail(ErrorCode::kCallFailed, "dcmi_get_card_list: " + Describe(ret));
    return;
  }
  if (count < 0 || count > kCardListSlots) {
    report.Fail(ErrorCode::kCallFailed, "implausible card count " + std::to_string(count));
    return;
  }
  Enumeration enumeration(api, report);
  for (int i = 0; i < count; ++i) enumeration.Card(cards[i]);
}

}  // namespace

void DetectAscend(const DetectContext& context, Report& report) {
  std::string root = InstallRoot(context.env, {"CANN_HOME"}, "/usr/local/Ascend");
  SearchPlan plan{{"libdcmi.so"}, {root + "/driver/lib64/driver", "/usr/local/dcmi", root + "/driver/lib64"}};
  Library library;
  if (!OpenLibrary(context, plan, &library, report)) return;
  Api api;
  if (!BindSymbols(library, Symbols(&api), report)) return;
  int ret = api.init();
  if (ret != kSuccess) {
    report.Fail(ErrorCode::kInitFailed, "dcmi_init failed: " + Describe(ret));
    return;
  }
  // DCMI has no shutdown call.
  Enumerate(api, report);
}

}  // namespace gpustack

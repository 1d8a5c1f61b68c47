#include "symbols.h"

#include <algorithm>
#include <cstring>

namespace gpustack {

void ResolveSymbols(const Library& library, const std::vector<Symbol>& table) {
  for (const Symbol& row : table) {
    void* address = nullptr;
    for (const auto& name : row.names) {
      if ((address = library.Raw(name.c_str())) != nullptr) {
        if (row.found != nullptr) *row.found = name;
        break;
      }
    }
    std::memcpy(row.slot, &address, sizeof address);
  }
}

std::string MissingSymbols(const std::vector<Symbol>& table) {
  auto resolved = [](const Symbol& row) {
    void* address = nullptr;
    std::memcpy(&address, row.slot, sizeof address);
    return address != nullptr;
  };
  std::string missing;
  std::vector<std::string> groups_seen;
  for (const Symbol& row : table) {
    if (row.need != Need::kRequired || row.names.empty()) continue;
    std::string name = row.names.front();
    if (row.group != nullptr) {
      if (std::find(groups_seen.begin(), groups_seen.end(), row.group) != groups_seen.end()) continue;
      groups_seen.emplace_back(row.group);
      bool any = false;
      name.clear();
      for (const Symbol& member : table) {
        if (member.group == nullptr || std::strcmp(member.group, row.group) != 0) continue;
        any = any || resolved(member);
        name += (name.empty() ? "" : " or ") + member.names.front();
      }
      if (any) continue;
    } else if (resolved(row)) {
      continue;
    }
    missing += (missing.empty() ? "" : ", ") + name;
  }
  return missing;
}

bool BindSymbols(const Library& library, const std::vector<Symbol>& table, Report& report) {
  ResolveSymbols(library, table);
  std::string missing = MissingSymbols(table);
  if (missing.empty()) return true;
  report.MissingSymbol(library, missing);
  return false;
}

}  // namespace gpustack

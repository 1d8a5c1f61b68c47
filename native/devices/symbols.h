// Binding a vendor's functions: a table of symbols resolved through one Library handle.
#pragma once

#include <string>
#include <type_traits>
#include <vector>

#include "library.h"
#include "report.h"

namespace gpustack {

// How much detection depends on one vendor symbol.
enum class Need {
  kRequired,  // missing: a SymbolNotFound entry, and nothing is called
  kOptional,  // missing: the field it feeds is "unknown"
};

// One row of a vendor's symbol table. `slot` is the address of the function pointer the
// symbol goes into (see Slot()). Required rows that share a `group` stand in for each other
// (memory_v2 or memory_v1): the group is missing only when all of them are.
struct Symbol {
  std::vector<std::string> names;  // tried in order: versioned names first
  void* slot;
  Need need = Need::kRequired;
  const char* group = nullptr;
  std::string* found = nullptr;  // receives the name that resolved, for messages
};

template <typename Fn>
void* Slot(Fn* function_pointer) {
  static_assert(std::is_function_v<std::remove_pointer_t<Fn>>, "a slot holds a function pointer");
  // dlsym() hands out function addresses as void*, which POSIX makes the same size.
  static_assert(sizeof(Fn) == sizeof(void*), "function pointers are not void*-sized");
  return function_pointer;
}

// Resolves every row through `library` (nullptr where absent).
void ResolveSymbols(const Library& library, const std::vector<Symbol>& table);
// The required symbols or groups still unresolved, ", "-joined; "" when none.
std::string MissingSymbols(const std::vector<Symbol>& table);
// ResolveSymbols, then a SymbolNotFound entry for whatever required is missing. False then:
// the caller must call nothing.
bool BindSymbols(const Library& library, const std::vector<Symbol>& table, Report& report);

}  // namespace gpustack

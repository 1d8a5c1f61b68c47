#include "host-root.h"

#include <unistd.h>

#include <utility>
#include <vector>

namespace gpustack {

std::optional<std::string> ResolveOnHost(const std::string& host_root, const std::string& path) {
  if (host_root.empty()) return path;
  // Components still to walk, the next one last; `resolved` is below host_root ("" or "/a/b").
  std::vector<std::string> pending;
  auto push_components = [&pending](const std::string& text) {
    std::vector<std::string> parts;
    for (size_t start = 0; start <= text.size();) {
      size_t end = text.find('/', start);
      if (end == std::string::npos) end = text.size();
      parts.push_back(text.substr(start, end - start));
      start = end + 1;
    }
    pending.insert(pending.end(), parts.rbegin(), parts.rend());
  };
  push_components(path);
  std::string resolved;
  int links = 0;
  while (!pending.empty()) {
    std::string part = std::move(pending.back());
    pending.pop_back();
    if (part.empty() || part == ".") continue;
    if (part == "..") {
      resolved.erase(resolved.empty() ? 0 : resolved.rfind('/'));  // never above the root
      continue;
    }
    std::string next = resolved + "/" + part;
    char target[4096];
    ssize_t length = readlink((host_root + next).c_str(), target, sizeof target);
    // Not a link, or missing: taken as it is (opening it later says why).
    if (length < 0 || static_cast<size_t>(length) == sizeof target) {
      resolved = next;
      continue;
    }
    if (++links > 40) return std::nullopt;  // the kernel's own limit (ELOOP)
    std::string link(target, static_cast<size_t>(length));
    if (!link.empty() && link.front() == '/') resolved.clear();
    push_components(link);
  }
  return host_root + (resolved.empty() ? "/" : resolved);
}

}  // namespace gpustack

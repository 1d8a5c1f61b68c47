#include "text.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstring>

namespace gpustack {

std::optional<std::string> ReadCString(const char* buffer, size_t capacity) {
  size_t length = strnlen(buffer, capacity);
  if (length == capacity) return std::nullopt;
  return Trim(std::string(buffer, length));
}

std::optional<std::string> ReadReturnedString(const char* text, size_t limit) {
  if (text == nullptr) return std::nullopt;
  return ReadCString(text, limit);
}

std::string Trim(const std::string& text) {
  auto is_space = [](unsigned char c) { return std::isspace(c) != 0; };
  auto begin = std::find_if_not(text.begin(), text.end(), is_space);
  auto end = std::find_if_not(text.rbegin(), text.rend(), is_space).base();
  if (begin >= end) return std::string();
  std::string out(begin, end);
  // Control characters would end up in JSON and labels; no real product name has them.
  for (char& c : out) {
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  }
  return out;
}

std::optional<std::string> MajorMinor(const std::string& version) {
  unsigned major = 0, minor = 0;
  if (std::sscanf(version.c_str(), "%u.%u", &major, &minor) != 2) return std::nullopt;
  return std::to_string(major) + "." + std::to_string(minor);
}

std::string FormatUuid(const unsigned char* bytes) {
  static const char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(36);
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) out.push_back('-');
    out.push_back(kHex[bytes[i] >> 4]);
    out.push_back(kHex[bytes[i] & 0xf]);
  }
  return out;
}

std::string DescribeCode(long long code, const char* text) {
  std::string out = ReadReturnedString(text).value_or("");
  if (out.empty()) out = "error";
  return out + " (code " + std::to_string(code) + ")";
}

}  // namespace gpustack

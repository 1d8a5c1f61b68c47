// Text from vendor libraries: C strings read without trusting their NUL, trimmed, and the
// libraries' error codes described in their own words.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace gpustack {

// Reads a C string the library wrote into a caller buffer of `capacity` bytes. nullopt
// when no NUL lies inside the buffer (a hostile or buggy library): the caller allocates
// capacity + 1 zeroed bytes, so reading never runs past the buffer either way.
std::optional<std::string> ReadCString(const char* buffer, size_t capacity);
// Same for a pointer the library returns; reads at most `limit` bytes.
std::optional<std::string> ReadReturnedString(const char* text, size_t limit = 256);

std::string Trim(const std::string& text);
// "12.8.1" -> "12.8"; empty or unparsable -> nullopt.
std::optional<std::string> MajorMinor(const std::string& version);

// 16 bytes as a UUID in its canonical form: 8-4-4-4-12 lowercase hex digits (36 characters).
std::string FormatUuid(const unsigned char* bytes);

// "<text> (code <n>)" from the vendor's own error text, "error (code <n>)" without one.
std::string DescribeCode(long long code, const char* text);
// For libraries that return the text (nvmlErrorString, cndevGetErrorString, ...).
template <typename Code>
std::string Describe(const char* (*error_string)(Code), Code code) {
  return DescribeCode(static_cast<long long>(code), error_string != nullptr ? error_string(code) : nullptr);
}
// For libraries that write it through a pointer and return a status (amdsmi, rsmi).
template <typename Code>
std::string Describe(Code (*status_string)(Code, const char**), Code code) {
  const char* text = nullptr;
  if (status_string == nullptr || status_string(code, &text) != 0) text = nullptr;
  return DescribeCode(static_cast<long long>(code), text);
}

// Reads the C string a vendor call writes into a caller buffer: `call(buffer, size)` returns
// the vendor's status (0 = success). The buffer holds one zeroed byte more than the library
// is told, so a missing NUL is caught instead of read past. `what` names the call and
// `error_text` is the library's error-text function, both for `why`.
template <typename Call, typename ErrorText>
bool ReadText(Call call, unsigned size, const char* what, ErrorText error_text, std::string* out,
              std::string* why) {
  std::vector<char> buffer(size + 1, '\0');
  auto status = call(buffer.data(), size);
  if (status != 0) {
    *why = std::string(what) + ": " + Describe(error_text, status);
    return false;
  }
  auto text = ReadCString(buffer.data(), size);
  if (!text) {
    *why = std::string(what) + " is not NUL-terminated within " + std::to_string(size) + " bytes";
    return false;
  }
  *out = *text;
  return true;
}

// The same for facts that may be unknown (versions): nullopt when the call fails, writes
// nothing, or leaves no NUL.
template <typename Call>
std::optional<std::string> OptionalText(Call call, unsigned size) {
  std::vector<char> buffer(size + 1, '\0');
  if (call(buffer.data(), size) != 0) return std::nullopt;
  auto text = ReadCString(buffer.data(), size);
  if (!text || text->empty()) return std::nullopt;
  return text;
}

}  // namespace gpustack

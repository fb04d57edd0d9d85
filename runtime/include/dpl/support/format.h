// Number formatting shared by the IR's attribute printing and the TVMScript printer.
#pragma once

#include <charconv>
#include <cstdint>
#include <string>

namespace dpl {

// Formats `value` exactly as Python's repr(float) does: the shortest text that reads back to the same double,
// `2.0`, `0.125`, `1e-05`, `-3.4028234663852886e+38`, `inf`, `nan`.
std::string format_double_like_python(double value);

// Appends the decimal digits of `value` to `out`, without a temporary string (std::to_string's).
inline void append_integer(std::string& out, int64_t value) {
  char digits[24];
  out.append(digits, std::to_chars(digits, digits + sizeof digits, value).ptr);
}

}  // namespace dpl

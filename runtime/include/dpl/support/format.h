// Number formatting shared by the IR's attribute printing and the TVMScript printer.
#pragma once

#include <string>

namespace dpl {

// Formats `value` exactly as Python's repr(float) does: the shortest text that reads back to the same double,
// `2.0`, `0.125`, `1e-05`, `-3.4028234663852886e+38`, `inf`, `nan`.
std::string format_double_like_python(double value);

}  // namespace dpl

// A byte of one-bit flags for the per-node arrays of the hot loops (the sweep's queued marks, the function's states).
#pragma once

#include <cstdint>

namespace dpl {

// Not uint8_t: a store through an unsigned char may modify any object, so a loop that marks a node in a uint8_t
// array must load again every pointer it read from memory before (a vector's ends, the order's data); an enum has
// an alias set of its own, and the loads stay in registers. Reading the array's bytes with memcpy stays allowed.
enum class FlagByte : uint8_t {};

constexpr FlagByte operator|(FlagByte a, FlagByte b) {
  return static_cast<FlagByte>(static_cast<uint8_t>(a) | static_cast<uint8_t>(b));
}
constexpr FlagByte operator&(FlagByte a, FlagByte b) {
  return static_cast<FlagByte>(static_cast<uint8_t>(a) & static_cast<uint8_t>(b));
}
constexpr FlagByte operator~(FlagByte a) { return static_cast<FlagByte>(~static_cast<uint8_t>(a)); }
constexpr FlagByte& operator|=(FlagByte& a, FlagByte b) { return a = a | b; }
constexpr FlagByte& operator&=(FlagByte& a, FlagByte b) { return a = a & b; }
// Whether any flag is set.
constexpr bool any(FlagByte flags) { return flags != FlagByte{}; }

}  // namespace dpl

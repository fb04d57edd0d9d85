// The slot of a key in a small direct-mapped cache (the IR's inferred-type memo, the rewriter's shared scalars).
#pragma once

#include <cstddef>
#include <cstdint>

namespace dpl {

// Fibonacci hashing: the top `slots_log2` bits of `key` times 2^64/phi. A multiplication carries each key bit
// upwards only, so every bit of the key reaches the top bits that pick the slot; a fixed middle window would miss
// the high ones and see low ones only a few places below it (keys that are nearby addresses, or doubles that differ
// in their exponent alone, then share a slot). Keys that differ in their top bits alone must fold them down first.
constexpr size_t hash_slot(uint64_t key, int slots_log2) {
  return static_cast<size_t>((key * 0x9E3779B97F4A7C15u) >> (64 - slots_log2));
}

}  // namespace dpl

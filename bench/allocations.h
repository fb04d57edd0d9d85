// Counting the heap allocations of the calling thread, for the benchmarks' allocations-per-rewrite counters.
#pragma once

#include <cstdint>

namespace dpl::bench {

// How many times the calling thread has called a global `operator new` (any form) since it started. The bench
// binaries replace the global allocation functions with counting ones that forward to malloc (allocations.cpp);
// C code calling malloc directly is not counted, and neither is anything dpl allocates through its own pools.
uint64_t allocations_so_far();

}  // namespace dpl::bench

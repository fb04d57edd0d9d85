// The re-scan baseline (TVM's rewrite strategy, built only to compare against): whole-graph scans until a scan
// changes nothing.
#pragma once

#include <cstdint>
#include <string>

#include "dpl/ir/graph.h"
#include "dpl/rewrite/driver.h"

namespace dpl::bench {

struct RescanStats {
  PassStats pass;      // nodes_visited and rewrites summed over all scans
  uint64_t scans = 0;  // including the last one, which found nothing
  std::string error;   // non-empty when the scans did not converge within the scan budget
};

// Runs `pass`'s compiled matcher the way TVM's `rewrite_call` runs a pattern: each scan visits, in order, every
// node that existed when the scan began (a post-order mutation of the whole function), so a rewrite whose inputs
// were rewritten earlier in the same scan is found in that scan, but the nodes a rewrite creates are only tried
// by the next scan. Scans repeat until one rewrites nothing; every scan ends by compacting the function (TVM
// rebuilds it). Gives up after 16 scans per node of the input (rules that undo each other never converge). TVM additionally compares the old and new function structurally and re-runs canonicalization,
// CSE and dead-code removal after every scan; this baseline leaves those out, which only flatters it.
RescanStats run_rescan(const PassDef& pass, Function& function);

}  // namespace dpl::bench

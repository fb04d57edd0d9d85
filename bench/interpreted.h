// Rule files loaded for the rule interpreter, for the benchmarks that compare it with the compiled passes.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "dpl/rewrite/driver.h"

namespace dpl::bench {

// The passes of the .dpl file at `path`, interpreted (dpl/compiler/rule_interpreter.h), in file order; alive until
// the process ends. The process exits when the file cannot be interpreted (the interpreter says why on stderr):
// an interpreted benchmark would otherwise measure nothing.
const std::vector<const PassDef*>& interpreted_passes(const std::string& path);

// The interpreted pass `name` of the file at `path`; the process exits when the file has none.
const PassDef& interpreted_pass(const std::string& path, std::string_view name);

}  // namespace dpl::bench

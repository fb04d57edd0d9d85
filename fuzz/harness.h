// The checks each fuzz target applies to one input, shared with the ctest that replays tests/fuzz_regressions/.
#pragma once

#include <string>
#include <string_view>

namespace dpl::fuzz {

// Each returns "" when the input was handled cleanly, else what went wrong (the fuzz targets abort on it).
// A crash, a sanitizer report or a hang inside them is a finding as well.

// `text` as a .dpl file through parse, imports, pattern macros, sema and C++ emission (to memory). Clean: it
// compiles to a non-empty header and source, or it fails with at least one error and every error has a location;
// split into three parts (dplc --parts 3), the source defines the same decision trees, each once, and its first
// part declares those the others define.
std::string check_rules_input(std::string_view text);

// `text` as TVMScript. Clean: it reads to a module that verifies and prints to text that reads back to an equal
// module, or it fails with at least one error and every error has a location.
std::string check_relax_input(std::string_view text);

// The first byte picks one of the bundled example passes (registered by whatever pass libraries are linked), the
// rest is TVMScript read as above; when it reads, the pass runs with verify_each. Clean: the pass leaves a module
// that verifies, or stops on its rewrite budget; a malformed graph after a rewrite is a finding.
std::string check_pass_input(std::string_view bytes);

// `text` as a .dpl file edited in dpl-lsp (tools/dpl-lsp): opened, its symbols listed, hover, definition and completion at
// positions spread over it, changed to its first half, closed. Clean: every reply is a JSON-RPC message (a response
// with exactly one of result and error, or a notification) that serializes, and every range runs forward.
std::string check_lsp_input(std::string_view text);

}  // namespace dpl::fuzz

// The Language Server Protocol's base protocol: messages framed by a `Content-Length` header, over streams.
#pragma once

#include <iosfwd>
#include <optional>
#include <string>

namespace dpl::lsp {

// One message read from `in`: its body, or nothing at the end of the input. A header block without a valid
// `Content-Length` is skipped with a line on `log` (the client's next message can still be read); a body cut short
// by the end of the input ends the input.
std::optional<std::string> read_message(std::istream& in, std::ostream& log);

// Writes `body` framed with its length, and flushes (the client waits for it).
void write_message(std::ostream& out, const std::string& body);

}  // namespace dpl::lsp

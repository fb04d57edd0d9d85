// Content-Length framing of Language Server Protocol messages.
#include "transport.h"

#include <cctype>
#include <charconv>
#include <istream>
#include <ostream>
#include <string_view>

namespace dpl::lsp {
namespace {

// A header line without its "\r\n" (a bare "\n" is accepted too); nothing at the end of the input.
std::optional<std::string> read_header_line(std::istream& in) {
  std::string line;
  if (!std::getline(in, line)) return std::nullopt;
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return line;
}

// The value of a `Content-Length: N` line (the header name is case-insensitive), or nothing.
std::optional<size_t> content_length(const std::string& line) {
  static constexpr std::string_view kName = "content-length:";
  if (line.size() < kName.size()) return std::nullopt;
  for (size_t i = 0; i < kName.size(); ++i) {
    if (std::tolower(static_cast<unsigned char>(line[i])) != kName[i]) return std::nullopt;
  }
  size_t begin = kName.size();
  while (begin < line.size() && line[begin] == ' ') ++begin;
  size_t length = 0;
  const char* end = line.data() + line.size();
  const auto [ptr, error] = std::from_chars(line.data() + begin, end, length);
  if (error != std::errc() || ptr != end || ptr == line.data() + begin) return std::nullopt;
  return length;
}

}  // namespace

std::optional<std::string> read_message(std::istream& in, std::ostream& log) {
  // The largest message accepted: a .dpl file of this size is not something an editor sends.
  static constexpr size_t kMaxBody = 64u << 20;
  while (true) {
    std::optional<size_t> length;
    bool saw_header = false;
    while (true) {
      const std::optional<std::string> line = read_header_line(in);
      if (!line) return std::nullopt;
      if (line->empty()) {
        if (saw_header) break;
        continue;  // blank lines between messages
      }
      saw_header = true;
      if (const std::optional<size_t> value = content_length(*line)) length = value;
    }
    if (!length) {
      log << "dpl-lsp: skipped a message without a valid Content-Length header\n";
      continue;
    }
    if (*length > kMaxBody) {
      log << "dpl-lsp: skipped a message of " << *length << " bytes (at most " << kMaxBody << ")\n";
      in.ignore(static_cast<std::streamsize>(*length));
      continue;
    }
    std::string body(*length, '\0');
    in.read(body.data(), static_cast<std::streamsize>(body.size()));
    if (static_cast<size_t>(in.gcount()) != body.size()) return std::nullopt;
    return body;
  }
}

void write_message(std::ostream& out, const std::string& body) {
  out << "Content-Length: " << body.size() << "\r\n\r\n" << body;
  out.flush();
}

}  // namespace dpl::lsp

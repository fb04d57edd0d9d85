// Stepping through UTF-8 text by character: what columns, carets and editors' positions are counted in.
#pragma once

#include <cstddef>
#include <string_view>

namespace dpl::utf8 {

inline bool is_continuation(char byte) { return (static_cast<unsigned char>(byte) & 0xC0) == 0x80; }

// The byte after the character that starts at byte `i` of `text` (one byte further when `i` is past its end).
inline size_t next(std::string_view text, size_t i) {
  ++i;
  while (i < text.size() && is_continuation(text[i])) ++i;
  return i;
}

// The byte offset of character number `characters` (from 0) of `text`; past its end, one byte per character.
inline size_t byte_offset(std::string_view text, size_t characters) {
  size_t offset = 0;
  for (; characters > 0 && offset < text.size(); --characters) offset = next(text, offset);
  return offset + characters;
}

// The code point of the character at byte `i` of `text`; a cut-off sequence reads as its lead byte.
inline char32_t code_point(std::string_view text, size_t i) {
  const auto lead = static_cast<unsigned char>(text[i]);
  const size_t bytes = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
  if (bytes == 1 || i + bytes > text.size()) return lead;
  char32_t code = lead & (0x7F >> bytes);
  for (size_t k = 1; k < bytes; ++k) code = (code << 6) | (static_cast<unsigned char>(text[i + k]) & 0x3F);
  return code;
}

}  // namespace dpl::utf8

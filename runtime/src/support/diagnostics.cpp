// Source files, diagnostics (file:line:col, source line, caret, notes) and Python-style number formatting.
#include "dpl/support/diagnostics.h"

#include <charconv>
#include <cstdint>
#include <cmath>
#include <fstream>
#include <ostream>
#include <sstream>

#include "dpl/support/format.h"
#include "dpl/support/utf8.h"

namespace dpl {

SourceFile::SourceFile(std::string path, std::string text) : path_(std::move(path)), text_(std::move(text)) {
  line_starts_.push_back(0);
  for (size_t i = 0; i < text_.size(); ++i) {
    // A final newline ends the last line; it does not start an empty one.
    if (text_[i] == '\n' && i + 1 < text_.size()) line_starts_.push_back(static_cast<uint32_t>(i + 1));
  }
}

std::unique_ptr<SourceFile> SourceFile::load(const std::string& path, std::string& error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot open '" + path + "'";
    return nullptr;
  }
  std::ostringstream buffer;
  buffer << in.rdbuf();
  if (in.bad()) {
    error = "cannot read '" + path + "'";
    return nullptr;
  }
  return std::make_unique<SourceFile>(path, buffer.str());
}

std::string_view SourceFile::line(uint32_t line) const {
  if (line == 0 || line > line_starts_.size()) return {};
  size_t begin = line_starts_[line - 1];
  size_t end = line < line_starts_.size() ? line_starts_[line] - 1 : text_.size();
  if (end > begin && text_[end - 1] == '\n') --end;
  if (end > begin && text_[end - 1] == '\r') --end;
  return std::string_view(text_).substr(begin, end - begin);
}

Diagnostic& DiagnosticEngine::error(SourceLoc loc, std::string message) {
  ++error_count_;
  return diagnostics_.emplace_back(Diagnostic{Severity::Error, loc, std::move(message), {}});
}

Diagnostic& DiagnosticEngine::warning(SourceLoc loc, std::string message) {
  return diagnostics_.emplace_back(Diagnostic{Severity::Warning, loc, std::move(message), {}});
}

void DiagnosticEngine::add_note(Diagnostic& diag, SourceLoc loc, std::string message) {
  diag.notes.push_back(Diagnostic{Severity::Note, loc, std::move(message), {}});
}

void DiagnosticEngine::clear() {
  diagnostics_.clear();
  error_count_ = 0;
}

void DiagnosticEngine::print(std::ostream& out) const {
  for (const Diagnostic& diag : diagnostics_) print_diagnostic(out, diag);
}

std::string DiagnosticEngine::str() const {
  std::ostringstream out;
  print(out);
  return out.str();
}

namespace {

std::string_view severity_label(Severity severity) {
  switch (severity) {
    case Severity::Error: return "error";
    case Severity::Warning: return "warning";
    case Severity::Note: return "note";
  }
  return "error";
}

// The terminal columns of the character at byte `i`: 2 for the wide East Asian scripts and emoji, else 1 (a
// malformed sequence, or a position past the end of the line, counts 1).
size_t display_width(std::string_view text, size_t i) {
  if (i >= text.size()) return 1;
  const char32_t code = utf8::code_point(text, i);
  const bool wide = (code >= 0x1100 && code <= 0x115F) || (code >= 0x2E80 && code <= 0xA4CF) ||
                    (code >= 0xAC00 && code <= 0xD7A3) || (code >= 0xF900 && code <= 0xFAFF) ||
                    (code >= 0xFE30 && code <= 0xFE4F) || (code >= 0xFF00 && code <= 0xFF60) ||
                    (code >= 0xFFE0 && code <= 0xFFE6) || (code >= 0x1F300 && code <= 0x1F64F) ||
                    (code >= 0x1F900 && code <= 0x1F9FF) || (code >= 0x20000 && code <= 0x3FFFD);
  return wide ? 2 : 1;
}

// The header line, then (when the location has a line) the quoted source line and a caret under the range.
void print_one(std::ostream& out, const Diagnostic& diag) {
  const SourceLoc& loc = diag.loc;
  if (loc.file != nullptr) {
    out << loc.file->path() << ':';
    if (loc.line > 0) out << loc.line << ':' << loc.col << ':';
    out << ' ';
  }
  out << severity_label(diag.severity) << ": " << diag.message << '\n';
  if (!loc.valid() || loc.line > loc.file->line_count()) return;

  std::string_view text = loc.file->line(loc.line);
  out << text << '\n';
  // Columns count bytes; the caret line counts what a terminal shows: tabs are copied from the source line so the
  // caret lines up whatever the tab width, and a character takes the columns it is shown in.
  size_t col = loc.col > 0 ? loc.col - 1 : 0;
  std::string caret;
  for (size_t i = 0; i < col; i = utf8::next(text, i)) {
    if (i < text.size() && text[i] == '\t') {
      caret.push_back('\t');
    } else {
      caret.append(display_width(text, i), ' ');
    }
  }
  caret.push_back('^');
  // The range never reaches past the end of the line (an error at end of line still gets its caret).
  size_t length = loc.length > 0 ? loc.length : 1;
  size_t end = col + length;
  if (end > text.size()) end = text.size() > col ? text.size() : col + 1;
  size_t underlined = 0;
  for (size_t i = col; i < end; i = utf8::next(text, i)) underlined += display_width(text, i);
  if (underlined > 1) caret.append(underlined - 1, '~');
  out << caret << '\n';
}

}  // namespace

void print_diagnostic(std::ostream& out, const Diagnostic& diag) {
  print_one(out, diag);
  for (const Diagnostic& note : diag.notes) print_diagnostic(out, note);
}

std::string format_double_like_python(double value) {
  if (std::isnan(value)) return "nan";
  if (std::isinf(value)) return value > 0 ? "inf" : "-inf";
  // Shortest round-trip digits in scientific form, e.g. "1.2345e+02" or "-5e-05".
  char buffer[64];
  auto [end, ec] = std::to_chars(buffer, buffer + sizeof(buffer), value, std::chars_format::scientific);
  std::string_view sci(buffer, static_cast<size_t>(end - buffer));
  size_t e_pos = sci.find('e');
  std::string_view mantissa = sci.substr(0, e_pos);
  int exponent = 0;
  std::from_chars(sci.data() + e_pos + 1 + (sci[e_pos + 1] == '+' ? 1 : 0), sci.data() + sci.size(), exponent);

  std::string result;
  if (!mantissa.empty() && mantissa.front() == '-') {
    result.push_back('-');
    mantissa.remove_prefix(1);
  }
  std::string digits;  // significant digits without the decimal point
  for (char c : mantissa)
    if (c != '.') digits.push_back(c);

  // Python's repr switches to exponent notation when the decimal exponent is < -4 or >= 16.
  if (exponent < -4 || exponent >= 16) {
    result.push_back(digits[0]);
    if (digits.size() > 1) {
      result.push_back('.');
      result.append(digits, 1);
    }
    result.push_back('e');
    result.push_back(exponent < 0 ? '-' : '+');
    int magnitude = exponent < 0 ? -exponent : exponent;
    if (magnitude < 10) result.push_back('0');
    result += std::to_string(magnitude);
    return result;
  }
  if (exponent < 0) {
    result += "0.";
    result.append(static_cast<size_t>(-exponent - 1), '0');
    result += digits;
    return result;
  }
  size_t int_digits = static_cast<size_t>(exponent) + 1;
  if (digits.size() <= int_digits) {
    result += digits;
    result.append(int_digits - digits.size(), '0');
    result += ".0";
  } else {
    result.append(digits, 0, int_digits);
    result.push_back('.');
    result.append(digits, int_digits);
  }
  return result;
}

}  // namespace dpl

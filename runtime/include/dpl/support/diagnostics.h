// Source files and diagnostics (file:line:col, source line, caret, notes) shared by dplc and the IR reader.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace dpl {

// A whole text file kept in memory so diagnostics can quote any line of it.
class SourceFile {
 public:
  SourceFile(std::string path, std::string text);
  // Reads `path`; returns nullptr and sets `error` when the file cannot be read.
  static std::unique_ptr<SourceFile> load(const std::string& path, std::string& error);

  const std::string& path() const { return path_; }
  const std::string& text() const { return text_; }
  // 1-based line number; the returned text excludes the line terminator.
  std::string_view line(uint32_t line) const;
  uint32_t line_count() const { return static_cast<uint32_t>(line_starts_.size()); }

 private:
  std::string path_;
  std::string text_;
  std::vector<uint32_t> line_starts_;
};

// A range inside one source file: 1-based line and column, `length` characters on that line (at least 1).
struct SourceLoc {
  const SourceFile* file = nullptr;
  uint32_t line = 0;
  uint32_t col = 0;
  uint32_t length = 1;

  bool valid() const { return file != nullptr && line > 0; }
};

enum class Severity : uint8_t { Error, Warning, Note };

struct Diagnostic {
  Severity severity = Severity::Error;
  SourceLoc loc;
  std::string message;
  std::vector<Diagnostic> notes;  // "first bound here" and the like; severity Note
};

// Collects every diagnostic of a run; printed together at the end so the user sees all of them at once.
class DiagnosticEngine {
 public:
  Diagnostic& error(SourceLoc loc, std::string message);
  Diagnostic& warning(SourceLoc loc, std::string message);
  static void add_note(Diagnostic& diag, SourceLoc loc, std::string message);

  bool has_errors() const { return error_count_ > 0; }
  size_t error_count() const { return error_count_; }
  size_t warning_count() const { return diagnostics_.size() - error_count_; }
  const std::vector<Diagnostic>& diagnostics() const { return diagnostics_; }
  void clear();

  // Format: `path:line:col: error: message`, then the source line and a caret line (`^~~~`), then notes alike.
  void print(std::ostream& out) const;
  std::string str() const;

 private:
  std::vector<Diagnostic> diagnostics_;
  size_t error_count_ = 0;
};

// Renders one diagnostic (and its notes) in the format above.
void print_diagnostic(std::ostream& out, const Diagnostic& diag);

}  // namespace dpl

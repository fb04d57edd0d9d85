// Data-driven compiler tests: each fail/*.dpl states the diagnostics it must produce in `// expect-...` comments
// and gets exactly those; each pass/*.dpl compiles with no diagnostic at all.
//
// Expectation syntax (anywhere in a line, usually a trailing or a preceding comment):
//   expect-error: MESSAGE          on this line, any column
//   expect-error@:COL: MESSAGE     on this line, at column COL
//   expect-error@+N: MESSAGE       N lines below (@-N: above; @N: line N), any column
//   expect-error@+N:COL: MESSAGE   N lines below, at column COL
// `error` may be `warning` or `note`. Errors and warnings must all be expected; notes are checked in files that
// expect at least one note. MESSAGE is compared exactly. A diagnostic located in an imported file is expected by
// a comment in that file.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <optional>
#include <cctype>
#include <cstring>
#include <set>
#include <string>
#include <vector>

#include "dpl/compiler/compile.h"

namespace {

namespace fs = std::filesystem;
using dpl::Diagnostic;
using dpl::Severity;

struct Expected {
  std::string file;  // the path of the file the diagnostic is in
  Severity severity;
  uint32_t line;
  std::optional<uint32_t> col;
  std::string message;
  uint32_t written_on;  // the line of the expect- comment, for failure messages
};

std::string severity_name(Severity severity) {
  switch (severity) {
    case Severity::Error:
      return "error";
    case Severity::Warning:
      return "warning";
    case Severity::Note:
      return "note";
  }
  return "?";
}

// Reads an unsigned number at `pos` (advancing it); nullopt when there is no digit.
std::optional<uint32_t> read_number(const std::string& text, size_t& pos) {
  size_t start = pos;
  while (pos < text.size() && std::isdigit(static_cast<unsigned char>(text[pos]))) ++pos;
  if (pos == start) return std::nullopt;
  return static_cast<uint32_t>(std::stoul(text.substr(start, pos - start)));
}

// One `expect-SEVERITY[@[+|-]LINE][:COL]: MESSAGE` in a line, if there is one.
std::optional<Expected> parse_expectation(const std::string& text, uint32_t line) {
  size_t pos = text.find("expect-");
  if (pos == std::string::npos) return std::nullopt;
  pos += 7;
  Expected expected;
  expected.line = line;
  expected.written_on = line;
  bool known = false;
  for (auto [word, severity] : {std::pair{"error", Severity::Error}, std::pair{"warning", Severity::Warning},
                                std::pair{"note", Severity::Note}}) {
    if (text.compare(pos, std::strlen(word), word) == 0) {
      expected.severity = severity;
      pos += std::strlen(word);
      known = true;
      break;
    }
  }
  if (!known) return std::nullopt;
  if (pos < text.size() && text[pos] == '@') {
    ++pos;
    char sign = pos < text.size() ? text[pos] : ' ';
    if (sign == '+' || sign == '-') ++pos;
    if (std::optional<uint32_t> amount = read_number(text, pos)) {
      expected.line = sign == '+' ? line + *amount : sign == '-' ? line - *amount : *amount;
    }
    if (pos < text.size() && text[pos] == ':' && pos + 1 < text.size() &&
        std::isdigit(static_cast<unsigned char>(text[pos + 1]))) {
      ++pos;
      expected.col = read_number(text, pos);
    }
  }
  if (text.compare(pos, 2, ": ") != 0) return std::nullopt;
  expected.message = text.substr(pos + 2);
  while (!expected.message.empty() && std::isspace(static_cast<unsigned char>(expected.message.back()))) {
    expected.message.pop_back();
  }
  return expected;
}

std::vector<Expected> parse_expectations(const dpl::SourceFile& source) {
  std::vector<Expected> out;
  for (uint32_t line = 1; line <= source.line_count(); ++line) {
    std::optional<Expected> expected = parse_expectation(std::string(source.line(line)), line);
    if (!expected) continue;
    expected->file = source.path();
    out.push_back(std::move(*expected));
  }
  return out;
}

std::string describe(const Diagnostic& diag) {
  return severity_name(diag.severity) + " at " + std::to_string(diag.loc.line) + ":" + std::to_string(diag.loc.col) +
         ": " + diag.message;
}

bool matches(const Expected& expected, const Diagnostic& diag) {
  return diag.loc.file != nullptr && expected.file == diag.loc.file->path() && expected.severity == diag.severity &&
         expected.line == diag.loc.line && (!expected.col || *expected.col == diag.loc.col) &&
         expected.message == diag.message;
}

std::vector<fs::path> dpl_files(const std::string& subdir) {
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(fs::path(DPL_COMPILER_TEST_DIR) / subdir)) {
    if (entry.path().extension() == ".dpl") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string test_name(const testing::TestParamInfo<fs::path>& info) {
  std::string name = info.param.stem().string();
  std::replace_if(
      name.begin(), name.end(), [](char c) { return !std::isalnum(static_cast<unsigned char>(c)); }, '_');
  return name;
}

std::unique_ptr<dpl::SourceFile> load(const fs::path& path) {
  std::string error;
  auto source = dpl::SourceFile::load(path.string(), error);
  EXPECT_NE(source, nullptr) << error;
  return source;
}

class FailFile : public testing::TestWithParam<fs::path> {};

TEST_P(FailFile, ProducesExactlyTheExpectedDiagnostics) {
  auto source = load(GetParam());
  ASSERT_NE(source, nullptr);
  std::vector<Expected> expectations = parse_expectations(*source);
  ASSERT_FALSE(expectations.empty()) << "a fail/ file must state its expected diagnostics";
  bool check_notes = std::any_of(expectations.begin(), expectations.end(),
                                 [](const Expected& e) { return e.severity == Severity::Note; });
  bool expects_error = std::any_of(expectations.begin(), expectations.end(),
                                   [](const Expected& e) { return e.severity == Severity::Error; });

  dpl::DiagnosticEngine diags;
  dpl::compiler::CompileResult result = dpl::compiler::compile(*source, diags);
  EXPECT_EQ(result.ok, !expects_error);
  if (expects_error) {
    EXPECT_FALSE(result.cpp.has_value()) << "no output may be produced after an error";
  }

  std::vector<const Diagnostic*> actual;
  std::set<const dpl::SourceFile*> other_files;
  for (const Diagnostic& diag : diags.diagnostics()) {
    actual.push_back(&diag);
    if (check_notes) {
      for (const Diagnostic& note : diag.notes) actual.push_back(&note);
    }
    if (diag.loc.file != nullptr && diag.loc.file != source.get()) other_files.insert(diag.loc.file);
  }
  for (const dpl::SourceFile* file : other_files) {
    for (Expected& expected : parse_expectations(*file)) expectations.push_back(std::move(expected));
  }
  std::vector<bool> used(actual.size(), false);
  for (const Expected& expected : expectations) {
    bool found = false;
    for (size_t i = 0; i < actual.size() && !found; ++i) {
      if (!used[i] && matches(expected, *actual[i])) used[i] = found = true;
    }
    EXPECT_TRUE(found) << expected.file << ":" << expected.written_on << " expects " << severity_name(expected.severity)
                       << " at line " << expected.line << (expected.col ? ":" + std::to_string(*expected.col) : "")
                       << ": " << expected.message << "\nall diagnostics:\n"
                       << diags.str();
  }
  for (size_t i = 0; i < actual.size(); ++i) {
    EXPECT_TRUE(used[i]) << "unexpected " << describe(*actual[i]);
  }
}

INSTANTIATE_TEST_SUITE_P(Compiler, FailFile, testing::ValuesIn(dpl_files("fail")), test_name);

class PassFile : public testing::TestWithParam<fs::path> {};

TEST_P(PassFile, CompilesWithoutDiagnostics) {
  auto source = load(GetParam());
  ASSERT_NE(source, nullptr);
  dpl::DiagnosticEngine diags;
  dpl::compiler::CompileResult result = dpl::compiler::compile(*source, diags);
  EXPECT_TRUE(result.ok);
  EXPECT_TRUE(diags.diagnostics().empty()) << diags.str();
  ASSERT_TRUE(result.cpp.has_value());
  EXPECT_NE(result.cpp->source.find("dpl::PassRegistration"), std::string::npos);
}

INSTANTIATE_TEST_SUITE_P(Compiler, PassFile, testing::ValuesIn(dpl_files("pass")), test_name);

// The harness itself: a wrong expectation must be noticed, or the tests above prove nothing.
TEST(ExpectationSyntax, ParsesLineOffsetsColumnsAndSeverities) {
  dpl::SourceFile source("t.dpl",
                         "a // expect-error: same line\n"
                         "// expect-warning@+1:7: below\n"
                         "b\n"
                         "// expect-note@-3: above\n"
                         "// expect-error@2:3: absolute\n");
  std::vector<Expected> expectations = parse_expectations(source);
  ASSERT_EQ(expectations.size(), 4u);
  EXPECT_EQ(expectations[0].line, 1u);
  EXPECT_FALSE(expectations[0].col.has_value());
  EXPECT_EQ(expectations[0].message, "same line");
  EXPECT_EQ(expectations[1].severity, Severity::Warning);
  EXPECT_EQ(expectations[1].line, 3u);
  EXPECT_EQ(expectations[1].col, 7u);
  EXPECT_EQ(expectations[2].severity, Severity::Note);
  EXPECT_EQ(expectations[2].line, 1u);
  EXPECT_EQ(expectations[3].line, 2u);
  EXPECT_EQ(expectations[3].col, 3u);
}

TEST(ExpectationSyntax, ColumnAndMessageMustBothMatch) {
  dpl::SourceFile source("t.dpl", "x\n");
  Diagnostic diag{Severity::Error, dpl::SourceLoc{&source, 1, 5, 1}, "unknown op 'ad'", {}};
  EXPECT_TRUE(matches(Expected{"t.dpl", Severity::Error, 1, 5, "unknown op 'ad'", 1}, diag));
  EXPECT_TRUE(matches(Expected{"t.dpl", Severity::Error, 1, std::nullopt, "unknown op 'ad'", 1}, diag));
  EXPECT_FALSE(matches(Expected{"t.dpl", Severity::Error, 1, 4, "unknown op 'ad'", 1}, diag));
  EXPECT_FALSE(matches(Expected{"t.dpl", Severity::Error, 2, 5, "unknown op 'ad'", 1}, diag));
  EXPECT_FALSE(matches(Expected{"t.dpl", Severity::Warning, 1, 5, "unknown op 'ad'", 1}, diag));
  EXPECT_FALSE(matches(Expected{"t.dpl", Severity::Error, 1, 5, "unknown op 'add'", 1}, diag));
  EXPECT_FALSE(matches(Expected{"other.dpl", Severity::Error, 1, 5, "unknown op 'ad'", 1}, diag));
}

}  // namespace

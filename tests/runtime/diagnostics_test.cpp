// Tests of SourceFile line access and the exact text of printed diagnostics.
#include "dpl/support/diagnostics.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "dpl/support/format.h"

namespace dpl {
namespace {

TEST(SourceFile, SplitsLinesWithoutTerminators) {
  SourceFile file("a.txt", "first\r\nsecond\n\nfourth");
  EXPECT_EQ(file.line_count(), 4u);
  EXPECT_EQ(file.line(1), "first");
  EXPECT_EQ(file.line(2), "second");
  EXPECT_EQ(file.line(3), "");
  EXPECT_EQ(file.line(4), "fourth");
  EXPECT_EQ(file.line(5), "");
  EXPECT_EQ(file.line(0), "");
}

TEST(SourceFile, FinalNewlineDoesNotAddALine) {
  SourceFile file("a.txt", "one\ntwo\n");
  EXPECT_EQ(file.line_count(), 2u);
  EXPECT_EQ(file.line(2), "two");
}

TEST(SourceFile, LoadReportsMissingFile) {
  std::string error;
  EXPECT_EQ(SourceFile::load("/nonexistent/dir/x.dpl", error), nullptr);
  EXPECT_NE(error.find("/nonexistent/dir/x.dpl"), std::string::npos);
}

TEST(Diagnostics, ErrorWithCaretAndRange) {
  SourceFile file("rules.dpl", "rule a: add(x, y) => z;\n");
  DiagnosticEngine diags;
  diags.error(SourceLoc{&file, 1, 22, 1}, "unbound name 'z'");
  EXPECT_EQ(diags.str(),
            "rules.dpl:1:22: error: unbound name 'z'\n"
            "rule a: add(x, y) => z;\n"
            "                     ^\n");
  diags.clear();
  diags.error(SourceLoc{&file, 1, 9, 3}, "unknown op");
  EXPECT_EQ(diags.str(),
            "rules.dpl:1:9: error: unknown op\n"
            "rule a: add(x, y) => z;\n"
            "        ^~~\n");
}

TEST(Diagnostics, NotesAndWarningsAndCounts) {
  SourceFile file("r.dpl", "let x = 1\nlet x = 2\n");
  DiagnosticEngine diags;
  Diagnostic& error = diags.error(SourceLoc{&file, 2, 5, 1}, "x is bound twice");
  DiagnosticEngine::add_note(error, SourceLoc{&file, 1, 5, 1}, "first bound here");
  diags.warning(SourceLoc{&file, 1, 1, 3}, "unused");
  EXPECT_EQ(diags.error_count(), 1u);
  EXPECT_EQ(diags.warning_count(), 1u);
  EXPECT_TRUE(diags.has_errors());
  EXPECT_EQ(diags.str(),
            "r.dpl:2:5: error: x is bound twice\n"
            "let x = 2\n"
            "    ^\n"
            "r.dpl:1:5: note: first bound here\n"
            "let x = 1\n"
            "    ^\n"
            "r.dpl:1:1: warning: unused\n"
            "let x = 1\n"
            "^~~\n");
  diags.clear();
  EXPECT_FALSE(diags.has_errors());
  EXPECT_EQ(diags.str(), "");
}

TEST(Diagnostics, TabsKeepCaretAlignment) {
  SourceFile file("t.dpl", "\tfoo(\tbar)\n");
  DiagnosticEngine diags;
  diags.error(SourceLoc{&file, 1, 7, 3}, "bad");
  EXPECT_EQ(diags.str(), "t.dpl:1:7: error: bad\n\tfoo(\tbar)\n\t    \t^~~\n");
}

TEST(Diagnostics, CaretCountsShownColumnsNotBytes) {
  // Columns are bytes: "é" (2 bytes) shows in one column, "😀" (4 bytes) in two, "名前" (3 bytes each) in two each.
  SourceFile file("u.dpl", "\"é😀\" x \"名前\" y\n");
  DiagnosticEngine diags;
  diags.error(SourceLoc{&file, 1, 10, 1}, "at x");
  diags.error(SourceLoc{&file, 1, 12, 8}, "the string");
  EXPECT_EQ(diags.str(),
            "u.dpl:1:10: error: at x\n\"é😀\" x \"名前\" y\n      ^\n"
            "u.dpl:1:12: error: the string\n\"é😀\" x \"名前\" y\n        ^~~~~~\n");
}

TEST(Diagnostics, RangeIsClippedToTheLine) {
  SourceFile file("t.dpl", "abc\n");
  DiagnosticEngine diags;
  diags.error(SourceLoc{&file, 1, 2, 10}, "long");
  diags.error(SourceLoc{&file, 1, 4, 1}, "at end");
  EXPECT_EQ(diags.str(), "t.dpl:1:2: error: long\nabc\n ^~\nt.dpl:1:4: error: at end\nabc\n   ^\n");
}

TEST(Diagnostics, WithoutLocation) {
  DiagnosticEngine diags;
  diags.error(SourceLoc{}, "no input files");
  EXPECT_EQ(diags.str(), "error: no input files\n");
  SourceFile file("f.relax", "");
  diags.clear();
  diags.error(SourceLoc{&file, 0, 0, 1}, "empty file");
  EXPECT_EQ(diags.str(), "f.relax: error: empty file\n");
}

TEST(FormatDouble, MatchesPythonRepr) {
  EXPECT_EQ(format_double_like_python(1e-5), "1e-05");
  EXPECT_EQ(format_double_like_python(1e-12), "1e-12");
  EXPECT_EQ(format_double_like_python(0.125), "0.125");
  EXPECT_EQ(format_double_like_python(2.0), "2.0");
  EXPECT_EQ(format_double_like_python(-2.0), "-2.0");
  EXPECT_EQ(format_double_like_python(0.0), "0.0");
  EXPECT_EQ(format_double_like_python(-0.0), "-0.0");
  EXPECT_EQ(format_double_like_python(0.1), "0.1");
  EXPECT_EQ(format_double_like_python(0.0001), "0.0001");
  EXPECT_EQ(format_double_like_python(0.00012), "0.00012");
  EXPECT_EQ(format_double_like_python(1.5e-5), "1.5e-05");
  EXPECT_EQ(format_double_like_python(-65504.0), "-65504.0");
  EXPECT_EQ(format_double_like_python(123456789.125), "123456789.125");
  EXPECT_EQ(format_double_like_python(1e15), "1000000000000000.0");
  EXPECT_EQ(format_double_like_python(1e16), "1e+16");
  EXPECT_EQ(format_double_like_python(1.25e17), "1.25e+17");
  EXPECT_EQ(format_double_like_python(-3.4028234663852886e+38), "-3.4028234663852886e+38");
  EXPECT_EQ(format_double_like_python(1e100), "1e+100");
  EXPECT_EQ(format_double_like_python(0.1 + 0.2), "0.30000000000000004");
  EXPECT_EQ(format_double_like_python(static_cast<double>(0.1f)), "0.10000000149011612");
  EXPECT_EQ(format_double_like_python(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(format_double_like_python(-std::numeric_limits<double>::infinity()), "-inf");
  EXPECT_EQ(format_double_like_python(std::nan("")), "nan");
}

}  // namespace
}  // namespace dpl

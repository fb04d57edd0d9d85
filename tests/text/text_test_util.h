// Helpers shared by the text tests: reading TVMScript from strings and files, and checking diagnostics.
#pragma once

#include <fstream>
#include <memory>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "dpl/ir/graph.h"
#include "dpl/support/diagnostics.h"
#include "dpl/text/tvmscript.h"

namespace dpl::text_test {

inline const std::string kDataDir = DPL_TEXT_TEST_DATA;
inline const std::string kModelDir = std::string(DPL_SHARED_DIR) + "/models";

// Keeps the source alive as long as the diagnostics that point into it.
struct ReadResult {
  std::unique_ptr<SourceFile> source;
  DiagnosticEngine diags;
  std::unique_ptr<Module> module;
};

inline std::unique_ptr<ReadResult> read_string(std::string text, std::string path = "test.relax") {
  auto result = std::make_unique<ReadResult>();
  result->source = std::make_unique<SourceFile>(std::move(path), std::move(text));
  result->module = read_module(*result->source, result->diags);
  return result;
}

inline std::string load_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot open " << path;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

inline std::unique_ptr<ReadResult> read_file(const std::string& path) { return read_string(load_text(path), path); }

// The module read from `text`, failing the test (with the diagnostics) if it does not read.
inline std::unique_ptr<ReadResult> read_ok(std::string text) {
  auto result = read_string(std::move(text));
  EXPECT_NE(result->module, nullptr) << result->diags.str();
  EXPECT_FALSE(result->diags.has_errors()) << result->diags.str();
  return result;
}

// Reading `text` fails, and its first error is `message` at line:col.
inline ::testing::AssertionResult fails_with(const std::string& text, uint32_t line, uint32_t col,
                                             const std::string& message) {
  auto result = read_string(text);
  if (result->module != nullptr) return ::testing::AssertionFailure() << "the text was read without error";
  const auto& diags = result->diags.diagnostics();
  if (diags.empty()) return ::testing::AssertionFailure() << "no module and no diagnostic";
  const Diagnostic& first = diags.front();
  if (first.message != message || first.loc.line != line || first.loc.col != col) {
    return ::testing::AssertionFailure() << "expected " << line << ":" << col << ": " << message << "\ngot\n"
                                         << result->diags.str();
  }
  return ::testing::AssertionSuccess();
}

}  // namespace dpl::text_test

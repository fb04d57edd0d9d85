// Helpers shared by the importer tests: loading and importing ONNX files, counting ops, locating test data.
#pragma once

#include <cstdlib>
#include <filesystem>
#include <map>
#include <memory>
#include <string>

#include <gtest/gtest.h>

#include "dpl/import/onnx.h"
#include "dpl/ir/analysis.h"
#include "dpl/ir/graph.h"
#include "dpl/text/tvmscript.h"

namespace dpl::import_test {

// ONNX's backend node tests (Debian package libonnx-testdata): DIR/model.onnx, DIR/test_data_set_0/*.pb.
inline const std::filesystem::path kNodeTests = DPL_ONNX_NODE_TESTS;

struct Imported {
  std::unique_ptr<SourceFile> source;  // diagnostics point into it
  std::unique_ptr<Module> module;
  OnnxImportStats stats;
  DiagnosticEngine diags;
};

inline std::unique_ptr<Imported> import_file(const std::filesystem::path& path, const OnnxImportOptions& options = {}) {
  auto result = std::make_unique<Imported>();
  std::string error;
  result->source = SourceFile::load(path.string(), error);
  EXPECT_NE(result->source, nullptr) << error;
  if (result->source == nullptr) return result;
  result->module = import_onnx(*result->source, result->diags, options, &result->stats);
  return result;
}

// How many live calls of each op ("nn.conv2d", "onnx.LSTM") the function has.
inline std::map<std::string, int> op_counts(const Function& function) {
  std::map<std::string, int> counts;
  for (const Node* node : function.nodes())
    if (!node->is_dead() && node->is_call()) ++counts[OpRegistry::global().get(node->op()).name];
  return counts;
}

// The module printed and read back (in this process, which registered any opaque ops) is the same graph and
// prints the same text.
inline void expect_text_reads_back(const Module& module, const std::string& name) {
  const std::string text = print_module(module);
  SourceFile source(name, text);
  DiagnosticEngine diags;
  std::unique_ptr<Module> reread = read_module(source, diags);
  ASSERT_NE(reread, nullptr) << diags.str();
  EqualityResult equal = structurally_equal(*reread, module);
  EXPECT_TRUE(equal) << equal.difference;
  EXPECT_EQ(print_module(*reread), text);  // and prints the same text again
}

inline const Node* first_call_of(const Function& function, std::string_view op) {
  for (const Node* node : function.nodes())
    if (!node->is_dead() && node->is_call() && OpRegistry::global().get(node->op()).name == op) return node;
  return nullptr;
}

}  // namespace dpl::import_test

// dpl-lsp's server, message by message: diagnostics (errors, warnings, notes, other files, UTF-16 columns),
// document symbols, definitions, hovers, completions, and the protocol's errors.
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "server.h"

namespace dpl::lsp {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

// A scratch directory per test (imports and test files are read relative to the document).
class LanguageServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / ("dpl_lsp_" + std::string(info->name()) + "_" + std::to_string(getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    const std::vector<json> replies = server_.handle(
        request(1, "initialize", {{"capabilities", json::object()}, {"rootUri", uri_of_path(dir_.string())}}));
    ASSERT_EQ(replies.size(), 1u);
    initialize_reply_ = replies[0];
  }
  void TearDown() override { fs::remove_all(dir_); }

  static json request(int id, const std::string& method, json params) {
    return {{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}};
  }
  static json notification(const std::string& method, json params) {
    return {{"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}};
  }
  std::string uri(const std::string& name) const { return uri_of_path((dir_ / name).string()); }
  void write(const std::string& name, const std::string& text) const { std::ofstream(dir_ / name) << text; }

  // Opens `name` with `text`; returns the diagnostics published for it.
  json open(const std::string& name, const std::string& text) { return published(open_all(name, text), name); }
  // Opens `name` with `text`; returns every message the server sent (for open files importing it, too).
  std::vector<json> open_all(const std::string& name, const std::string& text) {
    return server_.handle(notification(
        "textDocument/didOpen",
        {{"textDocument", {{"uri", uri(name)}, {"languageId", "dpl"}, {"version", 1}, {"text", text}}}}));
  }
  json published(const std::vector<json>& replies, const std::string& name) const {
    EXPECT_EQ(replies.size(), 1u);
    if (replies.empty()) return json::array();
    EXPECT_EQ(replies[0]["method"], "textDocument/publishDiagnostics");
    EXPECT_EQ(replies[0]["params"]["uri"], uri(name));
    return replies[0]["params"]["diagnostics"];
  }
  // The one reply to a request, which must be a result.
  json result(const json& message) {
    const std::vector<json> replies = server_.handle(message);
    EXPECT_EQ(replies.size(), 1u);
    if (replies.empty()) return nullptr;
    EXPECT_EQ(replies[0]["id"], message["id"]);
    EXPECT_FALSE(replies[0].contains("error")) << replies[0].dump();
    return replies[0]["result"];
  }
  int error_code(const json& message) {
    const std::vector<json> replies = server_.handle(message);
    EXPECT_EQ(replies.size(), 1u);
    if (replies.empty() || !replies[0].contains("error")) return 0;
    return replies[0]["error"]["code"].get<int>();
  }
  json definition_at(const std::string& name, int line, int character) {
    return result(request(7, "textDocument/definition",
                          {{"textDocument", {{"uri", uri(name)}}},
                           {"position", {{"line", line}, {"character", character}}}}));
  }

  static json range(int line, int start, int end) {
    return {{"start", {{"line", line}, {"character", start}}}, {"end", {{"line", line}, {"character", end}}}};
  }

  LanguageServer server_;
  fs::path dir_;
  json initialize_reply_;
};

TEST_F(LanguageServerTest, InitializeAnnouncesFullSyncSymbolsAndDefinitions) {
  const json& capabilities = initialize_reply_["result"]["capabilities"];
  EXPECT_EQ(initialize_reply_["id"], 1);
  EXPECT_EQ(capabilities["textDocumentSync"]["change"], 1);
  EXPECT_EQ(capabilities["textDocumentSync"]["openClose"], true);
  EXPECT_EQ(capabilities["documentSymbolProvider"], true);
  EXPECT_EQ(capabilities["definitionProvider"], true);
}

TEST_F(LanguageServerTest, EveryErrorOfTheFileIsPublishedWithItsRangeAndNotes) {
  const json diagnostics = open("dup.dpl",
                                "pass first {\n"
                                "  rule fold: exp(log(x)) => x;\n"
                                "}\n"
                                "pass second {\n"
                                "  rule fold: log(exp(x)) => nosuch(x);\n"
                                "}\n");
  ASSERT_EQ(diagnostics.size(), 2u) << diagnostics.dump(2);
  // Sorted as dplc reports them; find each by its text.
  const auto find = [&](const std::string& text) {
    for (const json& diag : diagnostics) {
      if (diag["message"].get<std::string>().find(text) != std::string::npos) return diag;
    }
    ADD_FAILURE() << "no diagnostic saying " << text << " in " << diagnostics.dump(2);
    return json();
  };
  const json duplicate = find("duplicate rule name 'fold'");
  EXPECT_EQ(duplicate["severity"], 1);
  EXPECT_EQ(duplicate["source"], "dplc");
  EXPECT_EQ(duplicate["range"], range(4, 7, 11));
  ASSERT_EQ(duplicate["relatedInformation"].size(), 1u);
  EXPECT_EQ(duplicate["relatedInformation"][0]["message"], "first defined here");
  EXPECT_EQ(duplicate["relatedInformation"][0]["location"]["uri"], uri("dup.dpl"));
  EXPECT_EQ(duplicate["relatedInformation"][0]["location"]["range"], range(1, 7, 11));
  const json unknown_op = find("nosuch");
  EXPECT_EQ(unknown_op["severity"], 1);
  EXPECT_EQ(unknown_op["range"]["start"]["line"], 4);
}

TEST_F(LanguageServerTest, AChangeThatFixesTheFileClearsItsDiagnostics) {
  ASSERT_EQ(open("fix.dpl", "rule r: add(x, x) => nosuch(x);\n").size(), 1u);
  const std::vector<json> replies = server_.handle(notification(
      "textDocument/didChange", {{"textDocument", {{"uri", uri("fix.dpl")}, {"version", 2}}},
                                 {"contentChanges", {{{"text", "rule r: add(x, x) => multiply(x, const(2.0));\n"}}}}}));
  EXPECT_TRUE(published(replies, "fix.dpl").empty());
  const std::vector<json> closed =
      server_.handle(notification("textDocument/didClose", {{"textDocument", {{"uri", uri("fix.dpl")}}}}));
  EXPECT_TRUE(published(closed, "fix.dpl").empty());
  EXPECT_EQ(error_code(request(3, "textDocument/documentSymbol", {{"textDocument", {{"uri", uri("fix.dpl")}}}})),
            -32602);
}

TEST_F(LanguageServerTest, OverlapWarningsAreWarnings) {
  const json diagnostics = open("overlap.dpl",
                                "pass ambiguous {\n"
                                "  rule fold_product: add(multiply(a, _), c) => subtract(c, a);\n"
                                "  rule add_zero: add(x, const(0)) => x;\n"
                                "}\n");
  ASSERT_EQ(diagnostics.size(), 1u) << diagnostics.dump(2);
  EXPECT_EQ(diagnostics[0]["severity"], 2);
  EXPECT_THAT(diagnostics[0]["message"].get<std::string>(), HasSubstr("have the same priority"));
  EXPECT_EQ(diagnostics[0]["range"], range(2, 7, 15));
}

TEST_F(LanguageServerTest, ColumnsAreUtf16CodeUnits) {
  // "é" is two bytes in UTF-8 and one UTF-16 unit; "😀" four bytes and two units.
  const json diagnostics = open("utf.dpl", "pass p \"é😀\" { rule r: add(x, x) => nosuch(x); }\n");
  ASSERT_EQ(diagnostics.size(), 1u) << diagnostics.dump(2);
  const std::string before = "pass p \"é😀\" { rule r: add(x, x) => ";  // 39 bytes, 36 UTF-16 units
  ASSERT_EQ(before.size(), 39u);
  EXPECT_EQ(diagnostics[0]["range"], range(0, 36, 42));
}

TEST_F(LanguageServerTest, AnErrorInAnImportedFileIsShownAtTheTopSayingWhere) {
  write("lib.dpl", "pattern broken(x) = add(x, ;\n");
  const json diagnostics = open("main.dpl", "import \"lib.dpl\";\nrule r: exp(x) => x;\n");
  ASSERT_FALSE(diagnostics.empty());
  const json& diag = diagnostics[0];
  EXPECT_EQ(diag["range"], range(0, 0, 0));
  EXPECT_THAT(diag["message"].get<std::string>(), HasSubstr((dir_ / "lib.dpl").string() + ":1:"));
  ASSERT_FALSE(diag["relatedInformation"].empty());
  EXPECT_EQ(diag["relatedInformation"][0]["location"]["uri"], uri("lib.dpl"));
}

TEST_F(LanguageServerTest, DocumentSymbolsNestRulesInTheirPass) {
  write("in.relax",
        "@R.function\n"
        "def main(x: R.Tensor((2,), dtype=\"float32\")) -> R.Tensor((2,), dtype=\"float32\"):\n"
        "    return x\n");
  open("symbols.dpl",
       "pattern scaled(x, s) = multiply(x, s);\n"
       "pass simplify \"x * 1 => x\" {\n"
       "  rule one: scaled(x, const(1.0)) => x;\n"
       "  rule zero: add(x, const(0.0)) => x;\n"
       "}\n"
       "pipeline all = simplify;\n");
  const json symbols =
      result(request(2, "textDocument/documentSymbol", {{"textDocument", {{"uri", uri("symbols.dpl")}}}}));
  ASSERT_EQ(symbols.size(), 3u) << symbols.dump(2);
  EXPECT_EQ(symbols[0]["name"], "simplify");
  EXPECT_EQ(symbols[0]["detail"], "x * 1 => x");
  EXPECT_EQ(symbols[0]["selectionRange"], range(1, 5, 13));
  EXPECT_EQ(symbols[0]["range"]["end"]["line"], 3);  // through its last rule
  ASSERT_EQ(symbols[0]["children"].size(), 2u);
  EXPECT_EQ(symbols[0]["children"][1]["name"], "zero");
  EXPECT_EQ(symbols[0]["children"][1]["kind"], 12);
  EXPECT_EQ(symbols[1]["name"], "scaled");
  EXPECT_EQ(symbols[1]["detail"], "pattern");
  EXPECT_EQ(symbols[2]["name"], "all");
  EXPECT_EQ(symbols[2]["detail"], "pipeline");
}

TEST_F(LanguageServerTest, DefinitionsOfPatternsPassesAndTestFiles) {
  write("lib.dpl", "pattern double(x) = add(x, x);\n");
  write("in.relax",
        "@R.function\n"
        "def main(x: R.Tensor((2,), dtype=\"float32\")) -> R.Tensor((2,), dtype=\"float32\"):\n"
        "    return x\n");
  open("defs.dpl",
       "import \"lib.dpl\";\n"
       "pattern scaled(x, s) = multiply(x, s);\n"
       "pass simplify {\n"
       "  rule one: scaled(x, const(1.0)) => x;\n"
       "  rule two: double(x) => multiply(x, const(2.0));\n"
       "}\n"
       "test t { pass simplify; input \"in.relax\"; expect unchanged; }\n");
  // `scaled` in rule one -> its declaration on line 1.
  json location = definition_at("defs.dpl", 3, 13);
  EXPECT_EQ(location["uri"], uri("defs.dpl"));
  EXPECT_EQ(location["range"], range(1, 8, 14));
  // `double` -> the imported file.
  location = definition_at("defs.dpl", 4, 12);
  EXPECT_EQ(location["uri"], uri("lib.dpl"));
  EXPECT_EQ(location["range"], range(0, 8, 14));
  // The pass a test runs, and the test's input file.
  location = definition_at("defs.dpl", 6, 16);
  EXPECT_EQ(location["range"], range(2, 5, 13));
  location = definition_at("defs.dpl", 6, 33);
  EXPECT_EQ(location["uri"], uri("in.relax"));
  // Nothing is declared as `multiply` or under a blank.
  EXPECT_TRUE(definition_at("defs.dpl", 4, 28).is_null());
  EXPECT_TRUE(definition_at("defs.dpl", 3, 1).is_null());
  EXPECT_TRUE(definition_at("defs.dpl", 99, 0).is_null());
}

TEST_F(LanguageServerTest, HoverShowsOpsPatternsAndPasses) {
  open("hover.dpl",
       "op my.scale(x, factor: float = 1.5) : elementwise -> same_as(x);\n"
       "pattern scaled(x, s) = multiply(x, s);\n"
       "pass fold \"x * 1 => x\" {\n"
       "  rule one: scaled(x, const(1.0)) => my.scale(x);\n"
       "  rule soft: nn.softmax(nn.softmax(x)) => nn.softmax(x);\n"
       "}\n");
  const auto hover_text = [&](int line, int character) -> std::string {
    const json reply = result(request(8, "textDocument/hover",
                                      {{"textDocument", {{"uri", uri("hover.dpl")}}},
                                       {"position", {{"line", line}, {"character", character}}}}));
    if (reply.is_null()) return "";
    EXPECT_EQ(reply["contents"]["kind"], "markdown");
    return reply["contents"]["value"].get<std::string>();
  };
  EXPECT_EQ(hover_text(1, 26), "**multiply**: 2 operands, commutative, broadcast; no attributes");
  EXPECT_EQ(hover_text(4, 15), "**nn.softmax**: 1 operand, opaque\n\n- `axis`: int = `-1`");
  EXPECT_EQ(hover_text(3, 40), "**my.scale**: 1 operand, elementwise\n\n- `factor`: float = `1.5`");
  EXPECT_EQ(hover_text(3, 12), "pattern **scaled**(x, s)");
  EXPECT_EQ(hover_text(2, 6), "pass **fold**: 2 rules\n\nx * 1 => x");
  EXPECT_EQ(hover_text(3, 2), "");
  EXPECT_EQ(result(request(9, "initialize", json::object()))["capabilities"]["hoverProvider"], true);
}

TEST_F(LanguageServerTest, CompletionOffersAttributesOpsPatternsAndKeywords) {
  open("complete.dpl",
       "pattern scaled(x, s) = multiply(x, s);\n"
       "pass fold {\n"
       "  rule soft: nn.softmax(nn.soft(x), ax\n");
  const auto labels = [&](int line, int character) {
    const json items = result(request(10, "textDocument/completion",
                                      {{"textDocument", {{"uri", uri("complete.dpl")}}},
                                       {"position", {{"line", line}, {"character", character}}}}));
    std::vector<std::string> names;
    for (const json& item : items) names.push_back(item["label"].get<std::string>());
    return std::pair{names, items};
  };
  // After `ax` inside nn.softmax(...): its attribute, inserted as `axis=`.
  auto [names, items] = labels(2, 39);
  ASSERT_EQ(names, std::vector<std::string>{"axis"});
  EXPECT_EQ(items[0]["insertText"], "axis=");
  EXPECT_EQ(items[0]["detail"], "int = -1");
  // `nn.soft` (the file does not parse: completion still works): the softmax ops.
  std::tie(names, items) = labels(2, 31);
  EXPECT_THAT(names, ::testing::Contains("nn.softmax"));
  for (const std::string& name : names) EXPECT_EQ(name.rfind("nn.soft", 0), 0u) << name;
  // At the start of a line: everything, keywords and the file's patterns included (when it parses).
  open("ok.dpl", "pattern scaled(x, s) = multiply(x, s);\npass fold { rule r: scaled(x, const(1.0)) => x; }\n\n");
  const json all = result(request(11, "textDocument/completion",
                                  {{"textDocument", {{"uri", uri("ok.dpl")}}},
                                   {"position", {{"line", 2}, {"character", 0}}}}));
  std::vector<std::string> all_names;
  for (const json& item : all) all_names.push_back(item["label"].get<std::string>());
  EXPECT_THAT(all_names, ::testing::IsSupersetOf({"add", "nn.conv2d", "scaled", "fold", "rule", "where", "const"}));
}

// Names in one file, by line: a pattern (1), a pass (2, 8), rule-local variables (3-6), a variable spelled like
// an op (5) and an imported pattern (6). Its rules overlap (warnings), but it has no errors.
constexpr const char* kNamesDocument =
    "import \"lib.dpl\";\n"
    "pattern scaled(x, s) = multiply(x, s);\n"
    "pass fold {\n"
    "  rule one: scaled(x, const(1.0)) => x;\n"
    "  rule two: add(scaled(x, c), scaled(x, c)) => multiply(x, multiply(c, const(2.0)));\n"
    "  rule three: subtract(exp, exp) => multiply(exp, const(0.0));\n"
    "  rule four: double(x) => multiply(x, const(2.0));\n"
    "}\n"
    "pipeline all = fold;\n";

class NamesTest : public LanguageServerTest {
 protected:
  void SetUp() override {
    LanguageServerTest::SetUp();
    write("lib.dpl", "pattern double(x) = add(x, x);\n");
    for (const json& diagnostic : open("names.dpl", kNamesDocument)) EXPECT_NE(diagnostic["severity"], 1);
  }
  static json at(int line, int character) {
    return {{"line", line}, {"character", character}};
  }
  json text_document() const { return {{"uri", uri("names.dpl")}}; }
  json references(int line, int character, bool with_declaration) {
    return result(request(20, "textDocument/references",
                          {{"textDocument", text_document()},
                           {"position", at(line, character)},
                           {"context", {{"includeDeclaration", with_declaration}}}}));
  }
  // The ranges of `locations` (all in names.dpl) as (line, start) pairs.
  std::vector<std::pair<int, int>> starts(const json& locations) const {
    std::vector<std::pair<int, int>> result;
    for (const json& location : locations) {
      if (location.contains("uri")) {
        EXPECT_EQ(location["uri"], uri("names.dpl"));
      }
      result.emplace_back(location["range"]["start"]["line"], location["range"]["start"]["character"]);
    }
    return result;
  }
  json rename_request(int line, int character, const std::string& new_name) const {
    return request(21, "textDocument/rename",
                   {{"textDocument", text_document()}, {"position", at(line, character)}, {"newName", new_name}});
  }
  // The edits of a rename, as (line, start, end, new text).
  std::vector<std::tuple<int, int, int, std::string>> rename(int line, int character, const std::string& new_name) {
    const json reply = result(rename_request(line, character, new_name));
    std::vector<std::tuple<int, int, int, std::string>> edits;
    for (const json& edit : reply["changes"][uri("names.dpl")]) {
      edits.emplace_back(edit["range"]["start"]["line"], edit["range"]["start"]["character"],
                         edit["range"]["end"]["character"], edit["newText"]);
    }
    return edits;
  }
  std::string refusal(int line, int character, const std::string& new_name) {
    const std::vector<json> replies = server_.handle(rename_request(line, character, new_name));
    EXPECT_EQ(replies.size(), 1u);
    if (replies.empty() || !replies[0].contains("error")) return "";
    EXPECT_EQ(replies[0]["error"]["code"], -32803);
    return replies[0]["error"]["message"];
  }
  using Starts = std::vector<std::pair<int, int>>;
};

TEST_F(NamesTest, ReferencesOfAPatternAPassAndAnImportedPattern) {
  EXPECT_EQ(starts(references(3, 13, true)), (Starts{{1, 8}, {3, 12}, {4, 16}, {4, 30}}));
  EXPECT_EQ(starts(references(3, 13, false)), (Starts{{3, 12}, {4, 16}, {4, 30}}));
  EXPECT_EQ(starts(references(8, 16, true)), (Starts{{2, 5}, {8, 15}}));
  const json imported = references(6, 14, true);
  ASSERT_EQ(imported.size(), 2u);
  EXPECT_EQ(imported[0]["uri"], uri("lib.dpl"));
  EXPECT_EQ(imported[1]["range"], range(6, 13, 19));
}

TEST_F(NamesTest, AVariableIsLocalToItsRule) {
  EXPECT_EQ(starts(references(4, 23, true)), (Starts{{4, 23}, {4, 37}, {4, 56}}));
  EXPECT_EQ(starts(references(3, 19, true)), (Starts{{3, 19}, {3, 37}}));
  // `exp` is a variable where it is not called, though an op of that name exists.
  const json highlights = result(request(22, "textDocument/documentHighlight",
                                         {{"textDocument", text_document()}, {"position", at(5, 24)}}));
  ASSERT_EQ(highlights.size(), 3u);
  EXPECT_EQ(highlights[0]["range"], range(5, 23, 26));
  EXPECT_EQ(highlights[0]["kind"], 1);
  // A built-in op: its uses anywhere in the file.
  EXPECT_EQ(references(5, 37, true).size(), 5u);
  EXPECT_EQ(references(2, 0, true), json::array());  // the keyword `pass`
}

TEST_F(NamesTest, RenamesEditEveryUseInTheNamesScope) {
  using Edits = std::vector<std::tuple<int, int, int, std::string>>;
  EXPECT_EQ(rename(3, 19, "y"), (Edits{{3, 19, 20, "y"}, {3, 37, 38, "y"}}));
  EXPECT_EQ(rename(1, 10, "scale"),
            (Edits{{1, 8, 14, "scale"}, {3, 12, 18, "scale"}, {4, 16, 22, "scale"}, {4, 30, 36, "scale"}}));
  EXPECT_EQ(rename(2, 6, "folding"), (Edits{{2, 5, 9, "folding"}, {8, 15, 19, "folding"}}));
  EXPECT_EQ(rename(3, 8, "first"), (Edits{{3, 7, 10, "first"}}));
  EXPECT_EQ(rename(3, 19, "x"), Edits{});
  const json prepared = result(request(23, "textDocument/prepareRename",
                                       {{"textDocument", text_document()}, {"position", at(4, 57)}}));
  EXPECT_EQ(prepared["range"], range(4, 56, 57));
  EXPECT_EQ(prepared["placeholder"], "x");
  EXPECT_EQ(initialize_reply_["result"]["capabilities"]["renameProvider"]["prepareProvider"], true);
}

TEST_F(NamesTest, RenamesThatWouldChangeMeaningOrBreakTheFileAreRefused) {
  EXPECT_THAT(refusal(4, 23, "c"), HasSubstr("'c' is already used here"));
  EXPECT_THAT(refusal(1, 10, "fold"), HasSubstr("'fold' is already used here"));
  EXPECT_THAT(refusal(4, 48, "times"), HasSubstr("'multiply' is a built-in op"));
  EXPECT_THAT(refusal(3, 19, "let"), HasSubstr("not a name dpl accepts"));
  EXPECT_THAT(refusal(3, 19, "2x"), HasSubstr("not a name dpl accepts"));
  EXPECT_THAT(refusal(3, 19, "a.b"), HasSubstr("not a name dpl accepts"));
  EXPECT_THAT(refusal(1, 10, "tanh"), HasSubstr("would break the file: pattern 'tanh' has the name of an op"));
  EXPECT_THAT(refusal(2, 1, "x"), HasSubstr("no name to rename here"));
  const std::vector<json> replies = server_.handle(
      request(24, "textDocument/prepareRename", {{"textDocument", text_document()}, {"position", at(4, 48)}}));
  ASSERT_EQ(replies.size(), 1u);
  EXPECT_EQ(replies[0]["error"]["code"], -32803);
}

// A rule variable spelled like a file-level name hides it in that rule: the pattern's references and renames
// leave the variable alone, and the variable's stay in its rule. A test's `pass q;` is the pass, not a variable.
TEST_F(LanguageServerTest, AVariableHidesTheFileLevelNameOfItsSpelling) {
  write("in.relax",
        "@R.function\n"
        "def main(x: R.Tensor((2,), dtype=\"float32\")) -> R.Tensor((2,), dtype=\"float32\"):\n"
        "    return x\n");
  const json errors = open("shadow.dpl",
                           "pattern p(x) = exp(x);\n"
                           "pass q {\n"
                           "  rule r: add(p, p) => p;\n"
                           "  rule s: p(y) => y;\n"
                           "}\n"
                           "test t { pass q; input \"in.relax\"; expect \"in.relax\"; }\n");
  for (const json& diagnostic : errors) EXPECT_NE(diagnostic["severity"], 1) << diagnostic.dump();
  const auto starts = [&](int line, int character) {
    std::vector<std::pair<int, int>> found;
    for (const json& location : result(request(40, "textDocument/references",
                                               {{"textDocument", {{"uri", uri("shadow.dpl")}}},
                                                {"position", {{"line", line}, {"character", character}}},
                                                {"context", {{"includeDeclaration", true}}}}))) {
      found.emplace_back(location["range"]["start"]["line"], location["range"]["start"]["character"]);
    }
    return found;
  };
  using Starts = std::vector<std::pair<int, int>>;
  EXPECT_EQ(starts(0, 8), (Starts{{0, 8}, {3, 10}}));                     // the pattern
  EXPECT_EQ(starts(3, 10), (Starts{{0, 8}, {3, 10}}));
  EXPECT_EQ(starts(2, 14), (Starts{{2, 14}, {2, 17}, {2, 23}}));          // rule r's variable
  EXPECT_EQ(starts(1, 5), (Starts{{1, 5}, {5, 14}}));                     // the pass, named by the test
  const json renamed = result(request(41, "textDocument/rename",
                                      {{"textDocument", {{"uri", uri("shadow.dpl")}}},
                                       {"position", {{"line", 0}, {"character", 8}}},
                                       {"newName", "expo"}}));
  std::vector<std::pair<int, int>> edited;
  for (const json& edit : renamed["changes"][uri("shadow.dpl")]) {
    edited.emplace_back(edit["range"]["start"]["line"], edit["range"]["start"]["character"]);
  }
  EXPECT_EQ(edited, (Starts{{0, 8}, {3, 10}}));
}

// A pattern is seen by the files importing its file: its references and renames cover them, open or not.
class ImportedNamesTest : public NamesTest {
 protected:
  void SetUp() override {
    NamesTest::SetUp();
    fs::create_directories(dir_ / "more");
    write("more/other.dpl", "import \"../lib.dpl\";\nrule halve: double(x) => x;\n");
    fs::create_directories(dir_ / "build");  // build trees are not searched
    write("build/copy.dpl", "import \"../lib.dpl\";\nrule halve: double(x) => x;\n");
  }
  // The edits of a rename per file name (relative to the scratch directory), as (line, start, end).
  std::map<std::string, std::vector<std::tuple<int, int, int>>> edits_by_file(const json& reply) const {
    std::map<std::string, std::vector<std::tuple<int, int, int>>> edits;
    for (const auto& [file_uri, file_edits] : reply["changes"].items()) {
      const std::string name = fs::relative(*path_of_uri(file_uri), dir_).string();
      for (const json& edit : file_edits) {
        edits[name].emplace_back(edit["range"]["start"]["line"], edit["range"]["start"]["character"],
                                 edit["range"]["end"]["character"]);
      }
    }
    return edits;
  }
  using FileEdits = std::map<std::string, std::vector<std::tuple<int, int, int>>>;
};

TEST_F(ImportedNamesTest, RenamingAnImportedPatternEditsItsFileAndEveryImporter) {
  EXPECT_EQ(edits_by_file(result(rename_request(6, 14, "twice"))),
            (FileEdits{{"lib.dpl", {{0, 8, 14}}}, {"names.dpl", {{6, 13, 19}}}, {"more/other.dpl", {{1, 12, 18}}}}));
  // From the declaring file, once it is open, the same edits.
  EXPECT_EQ(open_all("lib.dpl", "pattern double(x) = add(x, x);\n").size(), 2u);  // names.dpl checked again
  EXPECT_EQ(edits_by_file(result(request(30, "textDocument/rename",
                                         {{"textDocument", {{"uri", uri("lib.dpl")}}},
                                          {"position", at(0, 9)},
                                          {"newName", "twice"}}))),
            (FileEdits{{"lib.dpl", {{0, 8, 14}}}, {"names.dpl", {{6, 13, 19}}}, {"more/other.dpl", {{1, 12, 18}}}}));
}

TEST_F(ImportedNamesTest, ReferencesOfAnImportedPatternIncludeEveryImporter) {
  std::vector<std::string> files;
  for (const json& location : references(6, 14, false)) {
    files.push_back(fs::relative(*path_of_uri(location["uri"]), dir_).string() + ":" +
                    std::to_string(location["range"]["start"]["line"].get<int>()));
  }
  EXPECT_EQ(files, (std::vector<std::string>{"names.dpl:6", "more/other.dpl:1"}));
}

TEST_F(ImportedNamesTest, APatternRenameThatClashesOrBreaksAnImporterIsRefused) {
  write("more/other.dpl", "import \"../lib.dpl\";\npattern twice(x) = add(x, x);\nrule halve: double(twice(x)) => x;\n");
  EXPECT_THAT(refusal(6, 14, "twice"), HasSubstr("'twice' is already used in " + (dir_ / "more/other.dpl").string()));
  EXPECT_THAT(refusal(6, 14, "tanh"),
              HasSubstr("would break " + (dir_ / "lib.dpl").string() + ": pattern 'tanh' has the name of an op"));
}

TEST_F(ImportedNamesTest, ImportsReadTheEditorsTextAndImportersAreCheckedAgain) {
  // lib.dpl opened with unsaved text that no longer declares `double`: names.dpl is checked again with it.
  std::vector<json> replies = open_all("lib.dpl", "pattern twice(x) = add(x, x);\n");
  ASSERT_EQ(replies.size(), 2u);
  EXPECT_EQ(replies[0]["params"]["uri"], uri("lib.dpl"));
  EXPECT_EQ(replies[1]["params"]["uri"], uri("names.dpl"));
  const json& errors = replies[1]["params"]["diagnostics"];
  ASSERT_FALSE(errors.empty());
  EXPECT_THAT(errors[0]["message"].get<std::string>(), HasSubstr("double"));
  // Closed without saving: names.dpl reads lib.dpl from disk again, where `double` is declared.
  replies = server_.handle(notification("textDocument/didClose", {{"textDocument", {{"uri", uri("lib.dpl")}}}}));
  ASSERT_EQ(replies.size(), 2u);
  EXPECT_EQ(replies[1]["params"]["uri"], uri("names.dpl"));
  for (const json& diagnostic : replies[1]["params"]["diagnostics"]) EXPECT_NE(diagnostic["severity"], 1);
}

TEST_F(LanguageServerTest, RenamingADeclaredOpRenamesItsDottedUses) {
  open("ops.dpl",
       "op my.scale(x, factor: float = 1.5) : elementwise -> same_as(x);\n"
       "rule r: my.scale(my.scale(x)) => my.scale(x, factor=2.25);\n");
  const json reply = result(request(25, "textDocument/rename",
                                    {{"textDocument", {{"uri", uri("ops.dpl")}}},
                                     {"position", {{"line", 1}, {"character", 12}}},
                                     {"newName", "my.scaled"}}));
  const json& edits = reply["changes"][uri("ops.dpl")];
  ASSERT_EQ(edits.size(), 4u);
  EXPECT_EQ(edits[0]["range"], range(0, 3, 11));
  EXPECT_EQ(edits[3]["range"], range(1, 33, 41));
}

TEST_F(LanguageServerTest, ProtocolErrorsAreAnsweredNotFatal) {
  const std::vector<json> parse_error = server_.handle(std::string("{not json"));
  ASSERT_EQ(parse_error.size(), 1u);
  EXPECT_EQ(parse_error[0]["error"]["code"], -32700);
  EXPECT_TRUE(parse_error[0]["id"].is_null());
  EXPECT_EQ(error_code(request(2, "textDocument/formatting", json::object())), -32601);
  EXPECT_EQ(error_code(request(3, "textDocument/documentSymbol", json::object())), -32602);
  EXPECT_EQ(error_code(request(4, "textDocument/documentSymbol", {{"textDocument", {{"uri", 5}}}})), -32602);
  EXPECT_EQ(error_code({{"jsonrpc", "2.0"}, {"id", 5}}), -32600);
  EXPECT_EQ(error_code(request(6, "textDocument/didOpen",
                               {{"textDocument", {{"uri", "untitled:1"}, {"text", ""}}}})),
            -32602);
  // Unknown notifications and responses get no reply.
  EXPECT_TRUE(server_.handle(notification("workspace/didChangeConfiguration", json::object())).empty());
  EXPECT_TRUE(server_.handle(json{{"jsonrpc", "2.0"}, {"id", 9}, {"result", nullptr}}).empty());
  // The server still works.
  EXPECT_TRUE(open("ok.dpl", "rule r: exp(log(x)) => x;\n").empty());
}

TEST_F(LanguageServerTest, ShutdownThenExitEndsWithZero) {
  EXPECT_TRUE(result(request(2, "shutdown", nullptr)).is_null());
  EXPECT_EQ(error_code(request(3, "textDocument/documentSymbol", json::object())), -32600);
  EXPECT_FALSE(server_.exited());
  EXPECT_TRUE(server_.handle(notification("exit", nullptr)).empty());
  EXPECT_TRUE(server_.exited());
  EXPECT_EQ(server_.exit_code(), 0);
}

TEST_F(LanguageServerTest, ExitWithoutShutdownEndsWithOne) {
  server_.handle(notification("exit", nullptr));
  EXPECT_TRUE(server_.exited());
  EXPECT_EQ(server_.exit_code(), 1);
}

TEST(LanguageServer, RequestsBeforeInitializeAreRefusedAndNotificationsDropped) {
  LanguageServer server;
  const auto message = [](const std::string& method, json params, std::optional<int> id) {
    json result = {{"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}};
    if (id) result["id"] = *id;
    return result;
  };
  const json open_params = {{"textDocument", {{"uri", "file:///a.dpl"}, {"text", "rule r: exp(x) => x;"}}}};
  const std::vector<json> refused = server.handle(message("textDocument/documentSymbol", json::object(), 1));
  ASSERT_EQ(refused.size(), 1u);
  EXPECT_EQ(refused[0]["error"]["code"], -32002);
  EXPECT_TRUE(server.handle(message("textDocument/didOpen", open_params, std::nullopt)).empty());
  EXPECT_EQ(server.handle(message("initialize", json::object(), 2)).size(), 1u);
  EXPECT_EQ(server.handle(message("textDocument/didOpen", open_params, std::nullopt)).size(), 1u);
}

TEST(Uri, FilePathsRoundTripThroughPercentEncoding) {
  EXPECT_EQ(uri_of_path("/a b/c%d/é.dpl"), "file:///a%20b/c%25d/%C3%A9.dpl");
  EXPECT_EQ(path_of_uri("file:///a%20b/c%25d/%C3%A9.dpl"), "/a b/c%d/é.dpl");
  EXPECT_EQ(path_of_uri("file:///x/%zz"), "/x/%zz");
  EXPECT_FALSE(path_of_uri("untitled:Untitled-1").has_value());
  EXPECT_FALSE(path_of_uri("file://host/share/a.dpl").has_value());
}

}  // namespace
}  // namespace dpl::lsp

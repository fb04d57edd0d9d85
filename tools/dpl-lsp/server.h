// dpl-lsp's language server: .dpl files checked as they are edited (diagnostics with notes), their declarations
// as document symbols, op signatures on hover, completion of ops and attributes, go-to-definition, references and
// renames (a pattern's across the files importing it).
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace dpl::lsp {

// A JSON-RPC 2.0 server for the Language Server Protocol, without I/O: handle() takes one message and returns what
// to send back, in order (a response to a request, and notifications such as published diagnostics).
class LanguageServer {
 public:
  LanguageServer();
  ~LanguageServer();
  LanguageServer(const LanguageServer&) = delete;
  LanguageServer& operator=(const LanguageServer&) = delete;

  // `body` is one message as read from the client; malformed JSON gets a JSON-RPC parse error.
  std::vector<nlohmann::json> handle(const std::string& body);
  std::vector<nlohmann::json> handle(const nlohmann::json& message);

  // True once the client sent `exit`; the process then ends with exit_code().
  bool exited() const { return exited_; }
  // 0 when `shutdown` came before `exit`, 1 otherwise (what the protocol asks of a server).
  int exit_code() const { return shutdown_ ? 0 : 1; }

 private:
  struct Document;

  nlohmann::json dispatch(const std::string& method, const nlohmann::json& params,
                          std::vector<nlohmann::json>& notifications);
  // Checks `text`, the document's new text, as dplc --check does (imports of open documents read from the
  // editor's text); returns the publishDiagnostics notification.
  nlohmann::json analyze(Document& document, std::string text);
  // Checks again the open documents that import the file (directly or not): their diagnostics depend on its text.
  void reanalyze_importers_of(const std::string& canonical_path, std::vector<nlohmann::json>& notifications);
  Document& document_of(const nlohmann::json& params);
  // The open documents' texts by canonical path (views into the documents): what checks read in place of the files
  // on disk.
  std::map<std::string, std::string_view> open_texts() const;
  // The paths a pattern's references and renames look through: the open documents, then the .dpl files under the
  // workspace folders (hidden directories and build trees skipped; at most kMaxWorkspaceFiles).
  std::vector<std::string> workspace_files() const;
  static constexpr size_t kMaxWorkspaceFiles = 5000;

  std::map<std::string, std::unique_ptr<Document>> documents_;  // by URI
  std::vector<std::string> workspace_roots_;
  bool initialized_ = false;
  bool shutdown_ = false;
  bool exited_ = false;
};

// `file:///a/b%20c.dpl` -> `/a/b c.dpl`; nothing for other schemes.
std::optional<std::string> path_of_uri(const std::string& uri);
// `/a/b c.dpl` -> `file:///a/b%20c.dpl`.
std::string uri_of_path(const std::string& path);

}  // namespace dpl::lsp

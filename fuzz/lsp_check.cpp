// The language server's fuzz check (harness.h): a rule file edited in dpl-lsp, every reply checked.
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness.h"
#include "server.h"

namespace dpl::fuzz {
namespace {

using nlohmann::json;

constexpr const char* kUri = "file:///nonexistent-dpl-fuzz/input.dpl";

// "" when every range in `value` (any object with `start` and `end` positions) runs forward.
std::string check_ranges(const json& value) {
  if (value.is_object()) {
    if (value.contains("start") && value.contains("end")) {
      const json& start = value["start"];
      const json& end = value["end"];
      const auto key = [](const json& position) {
        return std::pair{position.at("line").get<int64_t>(), position.at("character").get<int64_t>()};
      };
      if (key(start) > key(end) || key(start).first < 0 || key(start).second < 0) {
        return "a range runs backwards or starts before the file: " + value.dump(-1, ' ', false,
                                                                                  json::error_handler_t::replace);
      }
    }
    for (const auto& [name, member] : value.items()) {
      if (std::string problem = check_ranges(member); !problem.empty()) return problem;
    }
  } else if (value.is_array()) {
    for (const json& member : value) {
      if (std::string problem = check_ranges(member); !problem.empty()) return problem;
    }
  }
  return "";
}

std::string check_replies(const std::vector<json>& replies, bool request) {
  size_t responses = 0;
  for (const json& reply : replies) {
    if (!reply.is_object() || reply.value("jsonrpc", "") != "2.0") return "a reply is not JSON-RPC 2.0";
    if (reply.contains("id")) {
      ++responses;
      if (reply.contains("result") == reply.contains("error")) return "a response needs one of result and error";
    } else if (!reply.contains("method")) {
      return "a reply is neither a response nor a notification";
    }
    // What the server writes: it must serialize (a message or path holding invalid UTF-8 is replaced).
    if (reply.dump(-1, ' ', false, json::error_handler_t::replace).empty()) return "a reply serializes to nothing";
    if (std::string problem = check_ranges(reply); !problem.empty()) return problem;
  }
  if (responses != (request ? 1u : 0u)) return "a request got " + std::to_string(responses) + " responses";
  return "";
}

}  // namespace

std::string check_lsp_input(std::string_view text) {
  lsp::LanguageServer server;
  int next_id = 1;
  std::string problem;
  const auto send = [&](const std::string& method, json params, bool request) {
    if (!problem.empty()) return;
    json message = {{"jsonrpc", "2.0"}, {"method", method}, {"params", std::move(params)}};
    if (request) message["id"] = next_id++;
    problem = check_replies(server.handle(message), request);
    if (!problem.empty()) problem = method + ": " + problem;
  };
  const json document = {{"uri", kUri}};
  send("initialize", json::object(), true);
  send("textDocument/didOpen", {{"textDocument", {{"uri", kUri}, {"text", std::string(text)}}}}, false);
  send("textDocument/documentSymbol", {{"textDocument", document}}, true);
  // Positions spread over the text: up to 64 lines, a few characters on each (past the end of lines too).
  int lines = 1;
  for (const char c : text) lines += c == '\n';
  const int step = std::max(1, lines / 64);
  for (int line = 0; line <= lines; line += step) {
    for (const int character : {0, 3, 11, 40, 200}) {
      const json position = {{"line", line}, {"character", character}};
      send("textDocument/hover", {{"textDocument", document}, {"position", position}}, true);
      send("textDocument/definition", {{"textDocument", document}, {"position", position}}, true);
      send("textDocument/completion", {{"textDocument", document}, {"position", position}}, true);
      send("textDocument/references",
           {{"textDocument", document}, {"position", position}, {"context", {{"includeDeclaration", true}}}}, true);
      send("textDocument/documentHighlight", {{"textDocument", document}, {"position", position}}, true);
      send("textDocument/prepareRename", {{"textDocument", document}, {"position", position}}, true);
    }
    // A rename checks the renamed text by compiling it: once per line.
    send("textDocument/rename",
         {{"textDocument", document}, {"position", {{"line", line}, {"character", 3}}}, {"newName", "renamed"}}, true);
  }
  send("textDocument/didChange",
       {{"textDocument", document}, {"contentChanges", {{{"text", std::string(text.substr(0, text.size() / 2))}}}}},
       false);
  send("textDocument/documentSymbol", {{"textDocument", document}}, true);
  send("textDocument/didClose", {{"textDocument", document}}, false);
  send("shutdown", nullptr, true);
  return problem;
}

}  // namespace dpl::fuzz

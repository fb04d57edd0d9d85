// dpl-lsp: a Language Server Protocol server for .dpl files over standard input and output.
#include <iostream>
#include <string>

#include <CLI/CLI.hpp>

#include "server.h"
#include "transport.h"

int main(int argc, char** argv) {
  CLI::App app{
      "dpl-lsp: a language server for .dpl rule files (LSP over stdin/stdout). Editors start it; it checks each "
      "open file as dplc --check does (diagnostics with notes), lists its passes, rules, patterns, pipelines, ops "
      "and tests as document symbols, shows op signatures on hover, completes ops and attributes, and goes to the "
      "declaration of a pattern, pass, pipeline, extern or op, and to a test's input and expected files."};
  app.set_version_flag("--version", "dpl-lsp 0.1");
  CLI11_PARSE(app, argc, argv);

  std::ios::sync_with_stdio(false);
  dpl::lsp::LanguageServer server;
  while (const std::optional<std::string> body = dpl::lsp::read_message(std::cin, std::cerr)) {
    for (const nlohmann::json& reply : server.handle(*body)) {
      // A path or message may hold bytes that are not UTF-8 (a file name): they are replaced, never thrown on.
      dpl::lsp::write_message(std::cout, reply.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
    }
    if (server.exited()) return server.exit_code();
  }
  return 1;  // the input ended without `exit`
}

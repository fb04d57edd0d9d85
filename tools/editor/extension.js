// The VS Code extension's entry point: starts dpl-lsp for .dpl files through the vscode-languageclient library.
'use strict';

const vscode = require('vscode');

let client;

// The server command: the `dpl.server.path` setting, else `dpl-lsp` found on PATH.
function serverCommand() {
  const configured = vscode.workspace.getConfiguration('dpl').get('server.path');
  return typeof configured === 'string' && configured.trim() !== '' ? configured.trim() : 'dpl-lsp';
}

function loadClientLibrary() {
  try {
    return require('vscode-languageclient/node');
  } catch (error) {
    return null;
  }
}

async function activate(context) {
  const library = loadClientLibrary();
  if (library === null) {
    // Highlighting still works; only the server needs the library, which `npm install` puts beside this file.
    vscode.window.showErrorMessage(
        'dpl: the language client library is missing, so dpl-lsp is not started. ' +
        `Run "npm install --omit=dev" in ${context.extensionPath} and reload the window.`);
    return;
  }
  const server = {command: serverCommand(), args: []};
  client = new library.LanguageClient('dpl', 'dpl language server', server, {
    documentSelector: [{scheme: 'file', language: 'dpl'}],
  });
  try {
    await client.start();
  } catch (error) {
    client = undefined;
    vscode.window.showErrorMessage(
        `dpl: could not start "${server.command}" (${error && error.message ? error.message : error}). ` +
        'Set dpl.server.path to the dpl-lsp binary (build/tools/dpl-lsp/dpl-lsp).');
  }
}

async function deactivate() {
  if (client === undefined) return;
  const running = client;
  client = undefined;
  await running.stop();
}

module.exports = {activate, deactivate, serverCommand};

// The VS Code extension (tools/editor/extension.js) against stand-ins for VS Code and its language client: which
// server it starts and how it reports what goes wrong; the configured command must start the real dpl-lsp.
'use strict';

const assert = require('node:assert/strict');
const childProcess = require('node:child_process');
const Module = require('node:module');
const path = require('node:path');

function argument(name) {
  const at = process.argv.indexOf(name);
  if (at < 0 || at + 1 >= process.argv.length) throw new Error(`usage: extension_test.js ${name} VALUE ...`);
  return process.argv[at + 1];
}
const extensionDir = argument('--extension-dir');
const serverBinary = argument('--server');

// What the stand-ins saw.
let settings = {};
let errors = [];
let clients = [];
let libraryPresent = true;
let startFails = false;

// Sends `initialize` to the command with the protocol's framing; resolves with the server's name from the reply.
function initializeOver(server) {
  return new Promise((resolve, reject) => {
    const child = childProcess.spawn(server.command, server.args, {stdio: ['pipe', 'pipe', 'inherit']});
    let output = Buffer.alloc(0);
    child.on('error', reject);
    child.on('exit', (code) => reject(new Error(`${server.command} exited with ${code} before answering`)));
    child.stdout.on('data', (chunk) => {
      output = Buffer.concat([output, chunk]);
      const text = output.toString('utf8');
      const body = text.indexOf('\r\n\r\n');
      if (body < 0) return;
      const length = Number(/Content-Length: (\d+)/i.exec(text)[1]);
      if (output.length < body + 4 + length) return;
      child.kill();
      resolve(JSON.parse(output.subarray(body + 4, body + 4 + length).toString('utf8')).result.serverInfo.name);
    });
    const request = JSON.stringify({jsonrpc: '2.0', id: 1, method: 'initialize', params: {capabilities: {}}});
    child.stdin.write(`Content-Length: ${Buffer.byteLength(request)}\r\n\r\n${request}`);
  });
}

class FakeLanguageClient {
  constructor(id, name, server, options) {
    Object.assign(this, {id, name, server, options, started: 0, stopped: 0, serverName: null});
    clients.push(this);
  }
  async start() {
    this.started += 1;
    if (startFails) throw new Error('spawn ENOENT');
    this.serverName = await initializeOver(this.server);
  }
  async stop() { this.stopped += 1; }
}

const fakeVscode = {
  workspace: {getConfiguration: (section) => ({get: (key) => settings[`${section}.${key}`]})},
  window: {showErrorMessage: (message) => { errors.push(message); }},
};

const load = Module._load;
Module._load = function(request, parent, isMain) {
  if (request === 'vscode') return fakeVscode;
  if (request === 'vscode-languageclient/node') {
    if (!libraryPresent) throw Object.assign(new Error(`Cannot find module '${request}'`), {code: 'MODULE_NOT_FOUND'});
    return {LanguageClient: FakeLanguageClient};
  }
  return load.call(this, request, parent, isMain);
};

const extension = require(path.join(extensionDir, 'extension.js'));
const context = {extensionPath: extensionDir, subscriptions: []};

function reset(options) {
  settings = options.settings || {};
  errors = [];
  clients = [];
  libraryPresent = options.libraryPresent !== false;
  startFails = options.startFails === true;
}

const tests = {
  async 'starts the configured dpl-lsp for dpl files and stops it'() {
    reset({settings: {'dpl.server.path': ` ${serverBinary} `}});
    await extension.activate(context);
    assert.equal(clients.length, 1);
    const [client] = clients;
    assert.deepEqual(client.server, {command: serverBinary, args: []});
    assert.deepEqual(client.options.documentSelector, [{scheme: 'file', language: 'dpl'}]);
    assert.equal(client.started, 1);
    assert.equal(client.serverName, 'dpl-lsp');  // the real server answered `initialize`
    assert.deepEqual(errors, []);
    await extension.deactivate();
    assert.equal(client.stopped, 1);
    await extension.deactivate();  // nothing left to stop
    assert.equal(client.stopped, 1);
  },
  async 'without a setting the server is dpl-lsp on PATH'() {
    reset({settings: {'dpl.server.path': '  '}});
    assert.equal(extension.serverCommand(), 'dpl-lsp');
    reset({});
    assert.equal(extension.serverCommand(), 'dpl-lsp');
  },
  async 'a missing client library is reported with how to install it'() {
    reset({libraryPresent: false});
    await extension.activate(context);
    assert.equal(clients.length, 0);
    assert.equal(errors.length, 1);
    assert.match(errors[0], /npm install --omit=dev/);
    assert.ok(errors[0].includes(extensionDir));
    await extension.deactivate();
  },
  async 'a server that does not start is reported with the setting to fix'() {
    reset({settings: {'dpl.server.path': '/no/such/dpl-lsp'}, startFails: true});
    await extension.activate(context);
    assert.equal(errors.length, 1);
    assert.match(errors[0], /could not start "\/no\/such\/dpl-lsp" \(spawn ENOENT\)/);
    assert.match(errors[0], /dpl\.server\.path/);
    await extension.deactivate();
    assert.equal(clients[0].stopped, 0);
  },
};

(async () => {
  let failed = 0;
  for (const [name, test] of Object.entries(tests)) {
    try {
      await test();
      console.log(`ok - ${name}`);
    } catch (error) {
      failed += 1;
      console.log(`not ok - ${name}\n${error.stack}`);
    }
  }
  process.exit(failed === 0 ? 0 : 1);
})();

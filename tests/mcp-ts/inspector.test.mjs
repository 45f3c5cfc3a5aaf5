// Smoke test of `tether serve` with the MCP Inspector CLI (@modelcontextprotocol/inspector, pinned
// in package.json; 2.x needs Node >= 22.19, see lib/daemon.mjs node22()). One-shot `--cli` calls
// with the bearer token passed through `--header`.

import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';

import { B_SPLIT, Daemon, HERE, TOKEN, node22, run } from './lib/daemon.mjs';

const INSPECTOR = path.join(HERE, 'node_modules', '@modelcontextprotocol', 'inspector', 'clients', 'launcher', 'build', 'index.js');

let daemon;
let home;

before(async () => {
  daemon = await Daemon.start();
  // The Inspector keeps a catalog under ~/.mcp-inspector: give it a throwaway HOME.
  home = mkdtempSync(path.join(tmpdir(), 'tether-inspector-home-'));
});

after(async () => {
  await daemon?.close();
  if (home) rmSync(home, { recursive: true, force: true });
});

function inspector(...args) {
  return run(node22(), [INSPECTOR, '--cli', daemon.url, '--transport', 'http', '--header', `Authorization: Bearer ${TOKEN}`, ...args], {
    env: { ...process.env, HOME: home, MCP_CATALOG_PATH: path.join(home, 'mcp.json'), NO_COLOR: '1' },
    timeoutMs: 60_000,
  });
}

function parseJson(out) {
  try {
    return JSON.parse(out.stdout);
  } catch (e) {
    throw new Error(`Inspector output is not JSON (exit ${out.code}): ${out.stdout}\n${out.stderr}`);
  }
}

test('inspector --cli tools/list (--strict: no error-severity schema portability problem)', async () => {
  // --strict exits 6 if a tool schema has an error-severity portability problem; warnings
  // (e.g. nullable `type: [..., "null"]`) only go to stderr.
  const out = await inspector('--method', 'tools/list', '--strict');
  assert.equal(out.code, 0, out.stderr);
  const { tools } = parseJson(out);
  const names = tools.map((t) => t.name);
  for (const n of ['sessions_find', 'session_read', 'session_tag']) assert.ok(names.includes(n), `${n} in ${names}`);
  assert.ok(tools.length <= 13);
});

test('inspector --cli tools/call sessions_find', async () => {
  const out = await inspector('--method', 'tools/call', '--tool-name', 'sessions_find', '--tool-arg', 'query=narwhal', 'project=all');
  assert.equal(out.code, 0, out.stderr);
  const result = parseJson(out);
  assert.notEqual(result.isError, true, out.stdout);
  const found = JSON.parse(result.content[0].text);
  assert.equal(found.hits[0].session_id, B_SPLIT);
  assert.match(found.hits[0].snippet, /\*\*narwhal\*\*/);
});

test('inspector --cli with a wrong token fails', async () => {
  const out = await run(node22(), [INSPECTOR, '--cli', daemon.url, '--transport', 'http', '--header', 'Authorization: Bearer wrong', '--method', 'tools/list'], {
    env: { ...process.env, HOME: home, MCP_CATALOG_PATH: path.join(home, 'mcp.json'), NO_COLOR: '1' },
    timeoutMs: 60_000,
  });
  // The 401 (no WWW-Authenticate) makes the Inspector want OAuth, which it cannot do here.
  assert.notEqual(out.code, 0, `expected a failure, got: ${out.stdout}`);
  assert.match(out.stderr, /auth/i);
  assert.doesNotMatch(out.stdout, /sessions_find/);
});

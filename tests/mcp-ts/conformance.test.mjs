// The MCP conformance suite (@modelcontextprotocol/conformance, pinned in package.json; needs
// Node >= 22) against `tether serve`.
//
// The suite has no option to send a header, and the product keeps its bearer token (there is no
// auth-off switch). So the suite talks to a loopback reverse proxy (lib/daemon.mjs
// startAuthProxy) that adds `Authorization` and forwards everything else untouched, Host and
// Origin included: dns-rebinding-protection's forged `Host: evil.example.com` reaches the
// daemon as sent, and its valid case arrives as `Host: 127.0.0.1:<proxy port>`.
//
// Every server scenario (`--suite all`, so the pending SSE ones too) runs once with
// conformance-baseline.yml as --expected-failures: the suite exits non-zero on any failure not in
// the baseline *and* on a baselined scenario that now passes. On top of that, the generic
// scenarios below must each pass with no FAILURE and no WARNING check, and a baselined scenario
// may fail only because it asked for one of the suite's own fixtures.

import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, test } from 'node:test';

import { Daemon, HERE, TOKEN, node22, run, startAuthProxy } from './lib/daemon.mjs';

const SUITE = path.join(HERE, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
const BASELINE = path.join(HERE, 'conformance-baseline.yml');

// Scenarios that do not depend on the suite's own fixture tools: they must pass outright.
const GENERIC = [
  'server-initialize',
  'ping',
  'tools-list',
  'resources-list',
  'resources-subscribe',
  'resources-unsubscribe',
  'prompts-list',
  'completion-complete',
  'server-sse-multiple-streams',
  'dns-rebinding-protection',
];

// The only acceptable reasons for a baselined scenario to fail: it asked for a fixture tool,
// prompt or resource that a real server does not have, or for logging (not offered by Tether).
const FIXTURE_MISSING = [
  /MCP error -32602: tool not found/,
  /MCP error -32602: unknown prompt "test_/,
  /MCP error -32002: unknown resource test:\/\//,
  /MCP error -32601: logging\/setLevel/,
  /Tool 'json_schema_2020_12_tool' not found/,
];

let daemon;
let proxy;
let out;

before(async () => {
  daemon = await Daemon.start();
  proxy = await startAuthProxy(daemon.port, TOKEN);
  out = mkdtempSync(path.join(tmpdir(), 'tether-conformance-'));
});

after(async () => {
  await proxy?.close();
  await daemon?.close();
  if (out) rmSync(out, { recursive: true, force: true });
});

function baselineEntries() {
  return readFileSync(BASELINE, 'utf8')
    .split('\n')
    .map((l) => l.match(/^\s*-\s*([\w-]+)/)?.[1])
    .filter(Boolean);
}

/** checks.json of every scenario run, by scenario name. */
function results(dir) {
  const by = {};
  for (const d of readdirSync(dir)) {
    const m = d.match(/^server-(.+)-\d{4}-\d{2}-\d{2}T[\d-]+Z$/);
    if (m) by[m[1]] = JSON.parse(readFileSync(path.join(dir, d, 'checks.json'), 'utf8'));
  }
  return by;
}

test('the product keeps its auth: without the proxy the suite would get 401', async () => {
  const r = await fetch(daemon.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
  });
  assert.equal(r.status, 401);
  await r.body?.cancel();
});

test('conformance server suite through the auth proxy, against the baseline', { timeout: 150_000 }, async () => {
  const url = `http://127.0.0.1:${proxy.port}/mcp`;
  const r = await run(node22(), [SUITE, 'server', '--url', url, '--suite', 'all', '--expected-failures', BASELINE, '-o', out], {
    timeoutMs: 140_000,
  });
  const summary = r.stdout.slice(r.stdout.lastIndexOf('=== SUMMARY ==='));
  console.log(summary.trim());
  const byScenario = results(out);

  // Every generic scenario ran and passed cleanly.
  const problems = [];
  for (const s of GENERIC) {
    const checks = byScenario[s];
    if (!checks) {
      problems.push(`${s}: did not run`);
      continue;
    }
    for (const c of checks.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING')) {
      problems.push(`${s}: ${c.status} ${c.id}: ${c.errorMessage ?? c.description} ${JSON.stringify(c.details ?? {})}`);
    }
  }
  assert.deepEqual(problems, [], problems.join('\n'));
  for (const s of GENERIC) assert.ok(!baselineEntries().includes(s), `${s} must not be baselined`);

  // Baselined scenarios fail only for want of the suite's fixtures, never for another reason.
  for (const s of baselineEntries().filter((s) => s !== 'server-sse-polling')) {
    for (const c of (byScenario[s] ?? []).filter((c) => c.status === 'FAILURE' || c.status === 'WARNING')) {
      if (!FIXTURE_MISSING.some((re) => re.test(c.errorMessage ?? ''))) {
        problems.push(`${s}: ${c.status} ${c.id}: ${c.errorMessage} ${JSON.stringify(c.details ?? {})}`);
      }
    }
  }
  // server-sse-polling: priming event and retry field pass; only the resume check, which needs
  // the fixture tool test_reconnection, may warn.
  const polling = byScenario['server-sse-polling'] ?? [];
  for (const id of ['server-sse-priming-event', 'server-sse-retry-field']) {
    if (polling.find((c) => c.id === id)?.status !== 'SUCCESS') problems.push(`server-sse-polling: ${id} did not pass`);
  }
  for (const c of polling.filter((c) => c.status === 'FAILURE' || c.status === 'WARNING')) {
    if (c.id !== 'server-sse-disconnect-resume') problems.push(`server-sse-polling: ${c.status} ${c.id}: ${c.errorMessage}`);
  }
  if (!polling.some((c) => c.id === 'incoming-sse-event' && /tool not found/.test(c.details?.data ?? ''))) {
    problems.push('server-sse-polling: the call of test_reconnection was not answered "tool not found" on the POST stream');
  }
  assert.deepEqual(problems, [], problems.join('\n'));

  // The baseline holds only scenarios that really fail, and nothing else fails.
  assert.equal(r.code, 0, `conformance exited ${r.code} (unexpected failure or stale baseline entry):\n${r.stdout.slice(-3000)}\n${r.stderr.slice(-2000)}`);
  assert.match(r.stdout, /Baseline check passed/);
  assert.ok(Object.keys(byScenario).length >= GENERIC.length + baselineEntries().length, 'all scenarios ran');

  // The proxy really was in the path and added the token (no request came with its own).
  assert.ok(proxy.seen.requests > 20 && proxy.seen.authAdded === proxy.seen.requests, JSON.stringify(proxy.seen));
});

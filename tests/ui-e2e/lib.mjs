// Helpers for the GUI's end-to-end tests: a real `tether serve` on fixture data (the same
// Daemon as tests/mcp-ts, serving this checkout's ui/dist), Debian's chromium driven by
// playwright-core (never a downloaded browser), and the one-time login link from
// `tether open --print`. Only loopback addresses are used.

import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

import { chromium } from 'playwright-core';

import { BIN, Daemon, ROOT, TOKEN } from '../mcp-ts/lib/daemon.mjs';

export { B_SPLIT, C_V10, ROOT, TOKEN } from '../mcp-ts/lib/daemon.mjs';

export const UI_DIST = path.join(ROOT, 'ui', 'dist');
// Each run writes its pictures here; scripts/screenshots copies a run's into docs/screenshots.
export const SCREENSHOTS = path.resolve(process.env.TETHER_SCREENSHOT_DIR || path.join(ROOT, 'target', 'screenshots'));

export function chromiumPath() {
  const candidates = [process.env.TETHER_CHROMIUM, '/usr/bin/chromium', '/usr/bin/chromium-browser'].filter(Boolean);
  const found = candidates.find((p) => existsSync(p));
  if (!found) throw new Error('Debian chromium is missing: run TETHER_SETUP_TESTS=1 scripts/setup (apt-get install chromium)');
  return found;
}

/** The key the fake of Cursor's Cloud API takes (never a real one). */
export const CLOUD_KEY = 'key_ui_e2e_cloud_0123456789abcdef';

/** The test kit's fake of Cursor's Cloud Agents API, on a loopback port: `{ proc, url }`. */
async function startFakeCursorApi() {
  const proc = spawn(path.join(BIN, 'tether-fake-cursor-api'), ['--key', CLOUD_KEY], { stdio: ['ignore', 'pipe', 'ignore'] });
  const url = await new Promise((resolve, reject) => {
    let buf = '';
    proc.stdout.setEncoding('utf8').on('data', (x) => {
      buf += x;
      if (buf.includes('\n')) resolve(buf.split('\n')[0].trim());
    });
    proc.once('exit', (code) => reject(new Error(`the fake Cursor API exited (${code})`)));
  });
  return { proc, url };
}

/**
 * Starts a daemon that serves ui/dist (which must be built: `cd ui && npm run build`). Cloud runs
 * use the test kit's fake of Cursor's API; agent runs use the test kit's fake Cursor CLI, with a temp HOME (where it keeps its chats) and a temp
 * workspace as the only allowed root (`daemon.workspace`).
 */
export async function startDaemon() {
  if (!existsSync(path.join(UI_DIST, 'index.html'))) throw new Error('ui/dist is not built: run `cd ui && npm run build`');
  const d = new Daemon();
  const home = path.join(d.tmp, 'user-home');
  d.workspace = path.join(d.tmp, 'workspace');
  mkdirSync(path.join(d.workspace, '.cursor'), { recursive: true });
  mkdirSync(d.env.TETHER_HOME, { recursive: true });
  writeFileSync(
    path.join(d.env.TETHER_HOME, 'settings.json'),
    JSON.stringify({ runs: { roots: [d.workspace], result_grace_secs: 1, kill_grace_secs: 1 } }),
  );
  Object.assign(d.env, { TETHER_UI_DIR: UI_DIST, HOME: home, TETHER_CURSOR_AGENT: path.join(BIN, 'tether-fake-agent') });
  // Cloud runs go to the fake of Cursor's API, with a key from the environment (as a user may set it).
  const fake = await startFakeCursorApi();
  Object.assign(d.env, { TETHER_CURSOR_API_URL: fake.url, CURSOR_API_KEY: CLOUD_KEY });
  const stop = d.stop.bind(d);
  d.stop = async () => {
    fake.proc.kill();
    return stop();
  };
  try {
    await d.start();
  } catch (e) {
    await d.stop().catch(() => {});
    d.cleanup();
    throw e;
  }
  return d;
}

/**
 * A daemon caught in its first index: the fixture's chats are all listed and one of them read,
 * then the indexer stops there (the core's test hook: one chat a batch, pause after the listing
 * and one batch) while the server keeps answering.
 */
export async function startFirstIndexDaemon() {
  const d = new Daemon();
  const marker = path.join(d.tmp, 'paused');
  Object.assign(d.env, {
    TETHER_UI_DIR: UI_DIST,
    TETHER_TEST_BATCH_SESSIONS: '1',
    TETHER_TEST_PAUSE_AFTER_BATCHES: '2',
    TETHER_TEST_PAUSE_MARKER: marker,
  });
  return serve(d, ['serve', '--port', '0'], { also: () => existsSync(marker), what: 'a paused first index' });
}

/**
 * Spawns `tether ARGS` for `d` and waits (30 s) until its daemon.json names it with a port and
 * `also()` holds, then runs `after()`; on any failure the daemon is stopped and its dir removed.
 */
async function serve(d, args, { also = () => true, what = 'daemon.json', after = async () => {} } = {}) {
  d.proc = spawn(path.join(BIN, 'tether'), args, { env: d.env, stdio: ['ignore', 'ignore', 'pipe'] });
  d.proc.stderr.setEncoding('utf8').on('data', (x) => (d.stderr += x));
  d.exited = new Promise((resolve) => d.proc.once('exit', (code, sig) => resolve({ code, sig })));
  try {
    await waitUntil(() => {
      if (d.proc.exitCode !== null) throw new Error(`tether serve exited early: ${d.stderr}`);
      const info = JSON.parse(readFileSync(path.join(d.env.TETHER_HOME, 'daemon.json'), 'utf8'));
      if (info.pid === d.proc.pid && info.port) d.port = info.port;
      return d.port && also();
    }, what, 30_000);
    await after();
  } catch (e) {
    await d.stop().catch(() => {});
    d.cleanup();
    throw e;
  }
  return d;
}

/** A loopback port nothing listens on (for a moment). */
export async function freePort() {
  const srv = net.createServer();
  await new Promise((resolve) => srv.listen(0, '127.0.0.1', resolve));
  const { port } = srv.address();
  await new Promise((resolve) => srv.close(resolve));
  return port;
}

/**
 * A daemon on an empty machine: Cursor's folders do not exist. Waits until /health answers with
 * an idle index (there is nothing to index). With `savedPort`, the port comes from settings.json
 * (as on a person's machine) rather than a flag, so saving another one moves the daemon.
 */
export async function startEmptyDaemon({ savedPort } = {}) {
  const d = new Daemon();
  d.env.TETHER_UI_DIR = UI_DIST;
  d.env.TETHER_CURSOR_DIR = path.join(d.tmp, 'nowhere', 'Cursor', 'User');
  d.env.TETHER_CURSOR_HOME = path.join(d.tmp, 'nowhere', '.cursor');
  const args = ['serve', '--port', '0'];
  if (savedPort) {
    delete d.env.TETHER_PORT;
    args.splice(1);
    mkdirSync(d.env.TETHER_HOME, { recursive: true });
    writeFileSync(path.join(d.env.TETHER_HOME, 'settings.json'), JSON.stringify({ port: savedPort }));
  }
  return serve(d, args, {
    after: () => waitUntil(async () => (await d.health()).index?.state === 'idle', 'an idle index', 30_000),
  });
}

/**
 * A throwaway PostgreSQL cluster for team mode (the test kit's `tether-pg-cluster`): `{ url,
 * password, stop() }`; with `{ tls: true }` it takes TLS only and adds `{ ca, cert_url,
 * client_cert, client_key }` (a user that signs in by certificate). It lives until `stop()`
 * closes its stdin, or this process ends.
 */
export async function startPgCluster({ tls = false } = {}) {
  const proc = spawn(path.join(BIN, 'tether-pg-cluster'), tls ? ['--tls'] : [], { stdio: ['pipe', 'pipe', 'inherit'] });
  const info = await new Promise((resolve, reject) => {
    let buf = '';
    proc.stdout.setEncoding('utf8').on('data', (x) => {
      buf += x;
      if (buf.includes('\n')) resolve(JSON.parse(buf.split('\n')[0]));
    });
    proc.once('exit', (code) => reject(new Error(`tether-pg-cluster exited (${code})`)));
  });
  const gone = new Promise((resolve) => proc.once('exit', resolve));
  return { ...info, stop: () => (proc.stdin.end(), gone) };
}

/** The one-time login URL, exactly as a person gets it. */
export function loginUrl(daemon) {
  const out = execFileSync(path.join(BIN, 'tether'), ['open', '--print'], { env: daemon.env, encoding: 'utf8', timeout: 20_000 });
  const url = out.trim().split(/\s+/).find((w) => w.startsWith('http://127.0.0.1:'));
  if (!url) throw new Error(`tether open --print printed no login URL: ${out}`);
  return url;
}

/** A browser and a page logged in to `daemon` through its one-time link: `{ browser, page }`. */
export async function loggedIn(daemon) {
  const browser = await launchBrowser();
  const page = await newPage(browser);
  await page.goto(loginUrl(daemon));
  await page.getByTestId('nav-sessions').waitFor();
  return { browser, page };
}

export async function launchBrowser() {
  return chromium.launch({
    executablePath: chromiumPath(),
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--no-first-run', '--disable-extensions'],
    timeout: 30_000,
  });
}

/** A 1280×800 light-theme page that collects console errors and uncaught page errors. */
export async function newPage(browser) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: 'light', reducedMotion: 'reduce' });
  const page = await context.newPage();
  page.errors = [];
  page.on('pageerror', (e) => page.errors.push(String(e)));
  page.on('console', (m) => {
    if (m.type() === 'error') page.errors.push(m.text());
  });
  page.setDefaultTimeout(10_000);
  return page;
}

export async function screenshot(page, name) {
  mkdirSync(SCREENSHOTS, { recursive: true });
  // Let fonts and transitions settle; toasts from earlier steps would cover the view.
  await page.evaluate(() => document.fonts?.ready);
  await page.addStyleTag({ content: '[data-testid=toasts] { display: none !important; }' });
  await sleep(150);
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`) });
}

/** Calls the API as the desktop shell / scripts do (bearer token). */
export async function apiCall(daemon, method, p, body) {
  const headers = { Authorization: `Bearer ${TOKEN}` };
  if (method !== 'GET') headers['X-Tether'] = '1';
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  const r = await fetch(`${daemon.base}${p}`, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await r.text();
  const json = text ? JSON.parse(text) : undefined;
  if (!r.ok) throw new Error(`${method} ${p}: ${r.status} ${text}`);
  return json;
}

export async function waitUntil(fn, what, ms = 15_000) {
  const deadline = Date.now() + ms;
  let last;
  while (Date.now() < deadline) {
    try {
      last = await fn();
      if (last) return last;
    } catch (e) {
      last = e;
    }
    await sleep(100);
  }
  throw new Error(`timed out waiting for ${what} (last: ${last})`);
}

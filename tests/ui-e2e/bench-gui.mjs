// The browser half of `scripts/bench --suite gui` (crates/tether-bench/src/gui.rs starts the
// daemon on a generated history and passes what it made as one JSON argument: base, login, long_id,
// run_id, reps). Drives Debian's chromium through playwright-core and prints the figures as JSON:
// each time is measured in the page with performance.now(), from the action (a navigation, a
// click, a keystroke) to the frame after the DOM first shows its result, so Playwright's own
// round trips are not in it.

import { launchBrowser, newPage } from './lib.mjs';

const { base, login, long_id: longId, run_id: runId, reps } = JSON.parse(process.argv[2]);

// Words of the generator's vocabulary (crates/tether-testkit/src/generate.rs), typed a key at a time.
const WORDS = ['function', 'config', 'migration', 'parse', 'render', 'database'];

// In every page: `__until(pred)` resolves with the time of the frame after `pred()` first holds
// (checked on every DOM change), and the first chat row's time since navigation is kept.
const INIT = () => {
  const afterFrame = (resolve) => requestAnimationFrame(() => setTimeout(() => resolve(performance.now()), 0));
  window.__until = (pred, timeout = 60_000) =>
    new Promise((resolve, reject) => {
      if (pred()) return afterFrame(resolve);
      const obs = new MutationObserver(() => {
        if (!pred()) return;
        obs.disconnect();
        clearTimeout(t);
        afterFrame(resolve);
      });
      obs.observe(document, { subtree: true, childList: true, attributes: true, characterData: true });
      const t = setTimeout(() => (obs.disconnect(), reject(new Error(`timed out waiting for ${pred}`))), timeout);
    });
  window.__firstRow = new Promise((resolve) => {
    const check = () => document.querySelector('[data-testid=session-row]');
    const start = () => window.__until(check).then(resolve);
    if (document.readyState === 'loading') addEventListener('DOMContentLoaded', start);
    else start();
  });
};

function stats(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const at = (p) => s[Math.min(s.length - 1, Math.round((p / 100) * (s.length - 1)))];
  return { p50: at(50), p95: at(95), max: s[s.length - 1], n: s.length };
}

const browser = await launchBrowser();
try {
  const page = await newPage(browser);
  page.setDefaultTimeout(120_000);
  await page.addInitScript(INIT);
  await page.goto(login);
  await page.getByTestId('nav-sessions').waitFor();
  await page.locator('[data-testid=session-row]').first().waitFor();

  // Opens `hash` from another view, timing until `sel` is in the page. With `api`, also the
  // requests the page made meanwhile whose URL holds it (Resource Timing: request start to
  // response end, so the server's part and the wire's), as `{ ms, api: [ms…] }`.
  const open = (from, fromSel, hash, sel, api) =>
    page.evaluate(
      async ({ from, fromSel, hash, sel, api }) => {
        location.hash = from;
        await window.__until(() => document.querySelector(fromSel));
        await new Promise((r) => setTimeout(r, 100));
        performance.clearResourceTimings();
        const t0 = performance.now();
        location.hash = hash;
        const ms = (await window.__until(() => document.querySelector(sel))) - t0;
        if (!api) return ms;
        const reqs = performance.getEntriesByType('resource').filter((e) => e.name.includes(api));
        return { ms, api: reqs.map((e) => ({ url: e.name, start: e.startTime - t0, ms: e.responseEnd - e.startTime })) };
      },
      { from, fromSel, hash, sel, api },
    );
  const TASKS = ['#/tasks', '[data-testid=board], [data-testid=tasks-empty]'];

  const listLoad = [];
  for (let i = 0; i < reps; i++) {
    // A query string of its own: a real load each time, not a move within the page.
    await page.goto(`${base}/?load=${i}#/sessions`);
    listLoad.push(await page.evaluate(() => window.__firstRow));
    if (process.env.BENCH_GUI_DEBUG) {
      const where = await page.evaluate(() => {
        const n = performance.getEntriesByType('navigation')[0];
        const res = performance.getEntriesByType('resource').map((e) => `${e.name.replace(location.origin, '').slice(0, 40)} ${Math.round(e.startTime)}+${Math.round(e.duration)}`);
        return { html: Math.round(n.responseEnd), dcl: Math.round(n.domContentLoadedEventEnd), res };
      });
      console.error(JSON.stringify(where));
    }
  }
  const listSwitch = [];
  for (let i = 0; i < reps; i++) listSwitch.push(await open(...TASKS, '#/sessions', '[data-testid=session-row]'));

  // Search: one keystroke at a time, each waiting for its own results (a newer UI marks the list
  // with the query its rows answer, `data-query`; an older one passes through "Searching…").
  await page.evaluate(() => (location.hash = '#/sessions'));
  await page.locator('[data-testid=session-row]').first().waitFor();
  const keystroke = [];
  for (const word of WORDS) {
    for (let n = 1; n <= word.length; n++) {
      keystroke.push(
        await page.evaluate(async (v) => {
          const el = document.querySelector('[data-testid=session-search]');
          const setValue = Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, 'value').set;
          let searching = false;
          const shown = () => {
            const m = document.querySelector('[data-testid=list-meta]');
            if (!m) return false;
            if (m.hasAttribute('data-query')) return m.getAttribute('data-query') === v && !m.hasAttribute('data-busy');
            if (/Searching/.test(m.textContent)) searching = true;
            return searching && /\bmatch(es)?\b/.test(m.textContent);
          };
          const t0 = performance.now();
          setValue.call(el, v);
          el.dispatchEvent(new Event('input', { bubbles: true }));
          const t1 = await window.__until(shown);
          await new Promise((r) => setTimeout(r, 30));
          return t1 - t0;
        }, word.slice(0, n)),
      );
    }
    await page.getByTestId('session-search').fill('');
    await page.waitForFunction(() => /\bchats?\b/.test(document.querySelector('[data-testid=list-meta]')?.textContent ?? ''));
  }

  const longChat = [];
  const chatSel = `[data-testid=reader][data-id="${longId}"] [data-seq]`;
  // The chat's page of messages (`/api/sessions/{id}?…`): how much of an open is the request.
  const longChatApi = [];
  for (let i = 0; i < reps; i++) {
    const o = await open('#/sessions', '[data-testid=reader-empty]', `#/sessions/${longId}`, chatSel, `/api/sessions/${longId}?`);
    longChat.push(o.ms);
    if (o.api.length) longChatApi.push(o.api[0].ms);
    if (process.env.BENCH_GUI_DEBUG) console.error(JSON.stringify(o));
  }
  // Once its window is all in the page (the reader puts the first messages in at once and the
  // rest a frame later, marking the list `data-partial` meanwhile).
  await page.locator('[data-testid=messages]:not([data-partial])').waitFor();
  const longChatDom = await page.evaluate(() => document.querySelectorAll('[data-testid=messages] [data-seq]').length);

  const run = [];
  const runApi = [];
  for (let i = 0; i < reps; i++) {
    const o = await open(...TASKS, `#/runs/${runId}`, '[data-testid=run-events] .msg', `/api/runs/${runId}`);
    run.push(o.ms);
    if (o.api.length) runApi.push(Math.max(...o.api.map((a) => a.start + a.ms)));
    if (process.env.BENCH_GUI_DEBUG) console.error(JSON.stringify(o));
  }

  const insights = [];
  for (let i = 0; i < reps; i++) insights.push(await open(...TASKS, '#/insights', '[data-testid=insights-totals]'));

  // The API alone, from the page (its cookie), for where the time goes: the searches typed above,
  // a page of the chat list and the whole list.
  const timeFetch = (urls) =>
    page.evaluate(async (urls) => {
      const out = [];
      for (const u of urls) {
        const t0 = performance.now();
        const r = await fetch(u, { headers: { Accept: 'application/json' } });
        await r.json();
        out.push(performance.now() - t0);
      }
      return out;
    }, urls);
  const prefixes = WORDS.flatMap((w) => [...w].map((_, n) => w.slice(0, n + 1)));
  const searchApi = await timeFetch(prefixes.map((q) => `/api/search?q=${encodeURIComponent(q)}&limit=200`));
  const listPage = await timeFetch(Array.from({ length: reps }, () => '/api/sessions?limit=200'));
  const listAll = await timeFetch(Array.from({ length: Math.min(reps, 3) }, () => '/api/sessions?limit=100000'));

  if (page.errors.length) console.error(`page errors: ${page.errors.join('\n')}`);
  console.log(
    JSON.stringify({
      list_load: stats(listLoad),
      list_switch: stats(listSwitch),
      keystroke: stats(keystroke),
      long_chat: stats(longChat),
      long_chat_dom: longChatDom,
      long_chat_api: stats(longChatApi),
      run: stats(run),
      run_api: stats(runApi),
      insights: stats(insights),
      search_api: stats(searchApi),
      list_page_api: stats(listPage),
      list_all_api: stats(listAll),
    }),
  );
} finally {
  await browser.close();
}

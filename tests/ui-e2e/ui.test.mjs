// Tether's GUI end to end, in a real browser (Debian's chromium through playwright-core) against
// a real `tether serve` on fixture data: log in through `tether open --print`, search, read and
// tag a chat, create and drag a task, see a change made over MCP arrive live, and check that a
// hostile chat cannot run script. Saves a 1280×800 light-theme screenshot of each main view to
// target/screenshots/ (TETHER_SCREENSHOT_DIR; scripts/screenshots refreshes docs/screenshots).

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';

import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ResourceUpdatedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';

import {
  apiCall,
  B_SPLIT,
  C_V10,
  freePort,
  launchBrowser,
  loggedIn,
  loginUrl,
  newPage,
  screenshot,
  startDaemon,
  startEmptyDaemon,
  startFirstIndexDaemon,
  startPgCluster,
  TOKEN,
  waitUntil,
} from './lib.mjs';

const XSS_WORD = 'quokkaxss';
const XSS = `${XSS_WORD} <img src=x onerror="window.__xss=1"> <script>window.__xss=2</script> [click](javascript:window.__xss=3) <svg onload="window.__xss=4"></svg>
\`\`\`html
<script>window.__xss=5</script>
\`\`\``;

describe('GUI in a real browser', () => {
  let daemon;
  let browser;
  let page;
  let mcp;
  const taskIds = {};

  before(async () => {
    daemon = await startDaemon();
    browser = await launchBrowser();
    page = await newPage(browser);
  });

  after(async () => {
    await mcp?.close().catch(() => {});
    await browser?.close().catch(() => {});
    await daemon?.close();
  });

  test('without the cookie the UI says how to log in', async () => {
    await page.goto(`${daemon.base}/`);
    await page.getByTestId('login-needed').waitFor();
    assert.match(await page.getByTestId('login-needed').innerText(), /tether open/);
  });

  test('the login link from `tether open --print` gets in, and is single-use', async () => {
    const url = loginUrl(daemon);
    await page.goto(url);
    await page.getByTestId('nav-sessions').waitFor();
    assert.equal(new URL(page.url()).pathname, '/');
    await page.locator('[data-testid=session-row]').first().waitFor();
    await page.locator('[data-testid=conn][data-state=open]').waitFor();
    // Spent: a second browser with the same link is not let in.
    const other = await browser.newContext();
    const p2 = await other.newPage();
    await p2.goto(url);
    await p2.goto(`${daemon.base}/`);
    await p2.getByTestId('login-needed').waitFor();
    await other.close();
  });

  test('search as you type shows the hit with the match highlighted', async () => {
    await page.getByTestId('session-search').fill('narwhal');
    const row = page.locator(`[data-testid=session-row][data-id="${B_SPLIT}"]`);
    await row.waitFor();
    assert.equal(await row.locator('[data-testid=snippet] mark').first().innerText(), 'narwhal');
    assert.equal(await page.locator('[data-testid=session-row]').count(), 1);
  });

  test('open the chat, add a tag, and it is still there after a reload', async () => {
    await page.locator(`[data-testid=session-row][data-id="${B_SPLIT}"]`).click();
    await page.locator(`[data-testid=reader][data-id="${B_SPLIT}"]`).waitFor();
    assert.equal(await page.getByTestId('reader-title').innerText(), 'Date parsing narwhal');
    assert.match(page.url(), new RegExp(`#/sessions/${B_SPLIT}`));
    // Tool calls are loaded, collapsed.
    const tool = page.getByTestId('msg-tool').first();
    await tool.waitFor();
    assert.equal(await tool.evaluate((d) => d.open), false);

    await page.getByTestId('add-tag').fill('e2e-tag');
    await page.getByTestId('add-tag-button').click();
    await page.locator('[data-testid=tag-chip]', { hasText: '#e2e-tag' }).waitFor();

    await page.reload();
    await page.locator(`[data-testid=reader][data-id="${B_SPLIT}"]`).waitFor();
    await page.locator('[data-testid=tag-chip]', { hasText: '#e2e-tag' }).waitFor();
    const s = await apiCall(daemon, 'GET', `/api/sessions/${B_SPLIT}`);
    assert.deepEqual(s.tags, ['e2e-tag']);

    // Export (the cookie is enough for a plain download link).
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId('export-md').click()]);
    assert.match(download.suggestedFilename(), /\.md$/);
    const md = await readFile(await download.path(), 'utf8');
    assert.match(md, /narwhal/);

    // More tags on other chats (for the Tags view), then the whole list beside the open chat.
    const others = (await apiCall(daemon, 'GET', '/api/sessions')).sessions.filter((x) => x.id !== B_SPLIT && x.id !== C_V10);
    await apiCall(daemon, 'PATCH', `/api/sessions/${others[0].id}`, { add_tags: ['bug', 'parser'], bookmarked: true });
    await apiCall(daemon, 'PATCH', `/api/sessions/${others[1].id}`, { add_tags: ['bug'] });
    await page.getByTestId('session-search').fill('');
    await waitUntil(async () => (await page.locator('[data-testid=session-row]').count()) > 5, 'the full list');
    await screenshot(page, 'sessions');
  });

  test('create a task in the dialog', async () => {
    await page.getByTestId('nav-tasks').click();
    await page.getByTestId('board').or(page.getByTestId('tasks-empty')).waitFor();
    await page.getByTestId('new-task').click();
    await page.getByTestId('task-title').fill('Write the parser');
    await page.getByTestId('task-description').fill('Parse **dates** in `YYYY-MM-DD`.');
    await page.getByTestId('task-priority').selectOption('high');
    await page.getByTestId('task-labels').fill('core, parser');
    await page.getByTestId('task-acceptance').fill('rejects 2025-02-30\naccepts leap days');
    await page.getByTestId('task-save').click();
    const card = page.locator('[data-testid=column-todo] [data-testid=task-card]', { hasText: 'Write the parser' });
    await card.waitFor();
    taskIds.parser = await card.getAttribute('data-id');
    const t = await apiCall(daemon, 'GET', `/api/tasks/${taskIds.parser}`);
    assert.equal(t.priority, 'high');
    assert.deepEqual(t.labels.sort(), ['core', 'parser']);
    assert.deepEqual(t.acceptance, ['rejects 2025-02-30', 'accepts leap days']);
    // The detail pane opened for it.
    await page.locator(`[data-testid=task-detail][data-id="${taskIds.parser}"]`).waitFor();
    await page.getByTestId('task-detail-close').click();
  });

  test('drag a task from todo to in_progress; an illegal move shows the API’s message', async () => {
    const card = () => page.locator(`[data-testid=task-card][data-id="${taskIds.parser}"]`);
    await card().dragTo(page.getByTestId('column-in_progress'), { sourcePosition: { x: 10, y: 6 } });
    await page.locator(`[data-testid=column-in_progress] [data-testid=task-card][data-id="${taskIds.parser}"]`).waitFor();
    assert.equal((await apiCall(daemon, 'GET', `/api/tasks/${taskIds.parser}`)).status, 'in_progress');

    // A task waiting on an open dependency cannot start: the board says why.
    const dep = await apiCall(daemon, 'POST', '/api/tasks', { title: 'Review the parser', depends_on: [taskIds.parser] });
    taskIds.review = dep.id;
    const depCard = page.locator(`[data-testid=column-todo] [data-testid=task-card][data-id="${dep.id}"]`);
    await depCard.waitFor(); // arrived through the live `tasks` event
    await depCard.dragTo(page.getByTestId('column-in_progress'), { sourcePosition: { x: 10, y: 6 } });
    const err = page.getByTestId('board-error');
    await err.waitFor();
    assert.match(await err.innerText(), /dependencies_open/);
    assert.match(await err.innerText(), new RegExp(`waits for ${taskIds.parser}`));
    assert.equal((await apiCall(daemon, 'GET', `/api/tasks/${dep.id}`)).status, 'todo');
    await page.locator(`[data-testid=column-todo] [data-testid=task-card][data-id="${dep.id}"]`).waitFor();
  });

  test('a change made over MCP reaches the open board live, without a reload', async () => {
    await page.evaluate(() => (window.__noReload = true));
    const transport = new StreamableHTTPClientTransport(new URL(daemon.url), {
      requestInit: { headers: { Authorization: `Bearer ${TOKEN}` } },
    });
    mcp = new Client({ name: 'ui-e2e-agent', version: '0.0.0' });
    await mcp.connect(transport);
    const json = (r) => {
      assert.ok(!r.isError, JSON.stringify(r));
      return JSON.parse(r.content[0].text);
    };
    const me = json(await mcp.callTool({ name: 'session_start', arguments: { role: 'dev' } }));
    const created = json(await mcp.callTool({ name: 'task_create', arguments: { title: 'Made by an agent', priority: 'critical' } }));
    await page.locator(`[data-testid=column-todo] [data-testid=task-card][data-id="${created.id}"]`).waitFor();
    json(await mcp.callTool({ name: 'task_claim', arguments: { id: created.id } }));
    const moved = page.locator(`[data-testid=column-in_progress] [data-testid=task-card][data-id="${created.id}"]`);
    await moved.waitFor();
    assert.match(await moved.innerText(), new RegExp(`@${me.agent.name}`));
    assert.equal(await page.evaluate(() => window.__noReload), true, 'the page was not reloaded');
    taskIds.agent = created.id;
    taskIds.agentName = me.agent.name;

    // A fuller board for the screenshot: one done, one blocked, one in review.
    const docs = await apiCall(daemon, 'POST', '/api/tasks', { title: 'Document the date formats', labels: ['docs'], priority: 'low' });
    await apiCall(daemon, 'PATCH', `/api/tasks/${docs.id}`, { status: 'done', summary: 'README section' });
    const bench = await apiCall(daemon, 'POST', '/api/tasks', { title: 'Benchmark parse speed', role: 'perf' });
    await apiCall(daemon, 'PATCH', `/api/tasks/${bench.id}`, { status: 'blocked', comment: 'needs the big fixture' });
    const tz = await apiCall(daemon, 'POST', '/api/tasks', { title: 'Time zones in timestamps', labels: ['core'] });
    await apiCall(daemon, 'PATCH', `/api/tasks/${tz.id}`, { status: 'in_progress' });
    await apiCall(daemon, 'PATCH', `/api/tasks/${tz.id}`, { status: 'in_review' });
    await page.locator(`[data-testid=column-in_review] [data-testid=task-card][data-id="${tz.id}"]`).waitFor();
    await page.locator(`[data-testid=column-done] [data-testid=task-card][data-id="${docs.id}"]`).waitFor();
    await page.getByTestId('board-error').getByRole('button', { name: 'Dismiss' }).click();
    await screenshot(page, 'tasks');
  });

  test('inbox: an agent asks the person, the badge shows it live, the reply reaches the agent', async () => {
    const json = (r) => {
      assert.ok(!r.isError, JSON.stringify(r));
      return JSON.parse(r.content[0].text);
    };
    const bells = [];
    mcp.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => bells.push(n.params.uri));
    const ask = json(await mcp.callTool({ name: 'signal_send', arguments: { to: 'human', type: 'question', body: 'Should dates accept **two-digit years**?' } }));
    await page.locator('[data-testid=inbox-unread]', { hasText: '1' }).waitFor();
    await page.getByTestId('nav-inbox').click();
    const card = page.locator(`[data-testid=signal][data-id="${ask.id}"]`);
    await card.waitFor();
    assert.match(await card.innerText(), /waiting for you/i);
    assert.equal(await card.locator('.md strong').innerText(), 'two-digit years');
    await page.locator(`[data-testid=obligation-row][data-id="${ask.id}"]`).waitFor();

    // The person writes to the agent by name; its open obligation shows with wake telemetry.
    await page.getByTestId('compose-to').fill(taskIds.agentName);
    await page.getByTestId('compose-type').selectOption('review_requested');
    await page.getByTestId('compose-body').fill('Please review the time zone change.');
    await page.getByTestId('compose-send').click();
    const row = page.locator(`[data-testid=obligation-row][data-recipient="${taskIds.agentName}"]`);
    await row.waitFor();
    await waitUntil(async () => /sse/.test(await row.innerText()), 'the doorbell attempt to show');
    await waitUntil(() => bells.includes('tether://inbox'), 'the agent to hear the bell');

    await card.getByTestId('reply-body').fill('No, four digits only.');
    await card.getByTestId('reply-send').click();
    await page.locator(`[data-testid=signal][data-id="${ask.id}"]`, { hasText: 'answered' }).waitFor();
    await page.getByTestId('inbox-mark-read').click();
    await page.locator('[data-testid=inbox-unread]').waitFor({ state: 'detached' });
    const got = json(await mcp.callTool({ name: 'signals_pending', arguments: {} }));
    const bodies = got.signals.map((x) => x.body);
    assert.ok(bodies.includes('No, four digits only.') && bodies.includes('Please review the time zone change.'), bodies.join(' | '));
    await screenshot(page, 'inbox');
    await page.getByTestId('nav-tasks').click();
    await page.locator(`[data-testid=task-card][data-id="${taskIds.parser}"]`).waitFor();
  });

  test('runs: start one from the form, watch it live, follow up, cancel another, run a task from its card', async () => {
    await page.getByTestId('nav-runs').click();
    await page.getByTestId('runs-empty').waitFor();
    await page.getByTestId('run-new').click();
    await page.getByTestId('run-form').waitFor();
    await waitUntil(async () => (await page.getByTestId('run-workspace').inputValue()) !== '', 'the allowed roots');
    await page.getByTestId('run-prompt').fill('[fake:sleep=150] Fix the date parser and run the tests');
    await page.getByTestId('run-perm-write').check();
    await page.getByTestId('run-perm-shell').check();
    await page.getByTestId('run-role').selectOption('backend');
    await page.getByTestId('run-budget').fill('1M');
    await page.getByTestId('run-start').click();
    const detail = page.locator('[data-testid=run-detail][data-id="R-1"]');
    await detail.waitFor();
    // Events arrive while it runs: the prompt, then tool calls, then the answer.
    await page.locator('[data-testid=run-tool][data-tool=shell]').waitFor();
    await page.locator('[data-testid=run-detail][data-status=succeeded]').waitFor({ timeout: 20_000 });
    assert.match(await page.getByTestId('run-assistant').last().innerText(), /cargo test/);
    // What it spent, against its budget.
    assert.match(await page.getByTestId('run-spend').innerText(), /[\d,]+ tokens · budget 1M/);
    await page.getByTestId('run-budget-bar').waitFor();
    await page.locator('[data-testid=run-tool][data-tool=shell] summary').click();
    assert.match(await page.locator('[data-testid=run-tool][data-tool=shell] pre').innerText(), /\$ cargo test/);
    await page.getByTestId('run-chat').waitFor();
    await screenshot(page, 'runs');

    await page.getByTestId('run-followup').fill('Now update the CHANGELOG');
    await page.getByTestId('run-followup-send').click();
    await page.locator('[data-testid=run-detail][data-id="R-2"][data-status=succeeded]').waitFor({ timeout: 20_000 });
    assert.match(await page.getByTestId('run-detail').innerText(), /follows up R-1/);

    const hang = await apiCall(daemon, 'POST', '/api/runs', { prompt: '[fake:hang] wait forever', workspace: daemon.workspace });
    await page.locator(`[data-testid=run-row][data-id="${hang.id}"]`).click();
    await page.locator(`[data-testid=run-detail][data-id="${hang.id}"][data-status=running]`).waitFor({ timeout: 15_000 });
    await page.getByTestId('run-cancel').click();
    await page.locator(`[data-testid=run-detail][data-id="${hang.id}"][data-status=cancelled]`).waitFor({ timeout: 15_000 });

    // From the board: a task's card starts the form with the task chosen.
    const t = await apiCall(daemon, 'POST', '/api/tasks', { title: 'Document the runner', project: daemon.workspace });
    await page.getByTestId('nav-tasks').click();
    await page.locator(`[data-testid=task-card][data-id="${t.id}"] [data-testid=card-run]`).click();
    await page.getByTestId('run-form').waitFor();
    await waitUntil(async () => (await page.getByTestId('run-task-select').inputValue()) === t.id, 'the task chosen in the form');
    await page.getByTestId('run-start').click();
    await page.locator('[data-testid=run-detail][data-status=succeeded]').waitFor({ timeout: 20_000 });
    await waitUntil(async () => (await apiCall(daemon, 'GET', `/api/tasks/${t.id}`)).status === 'in_review', 'the task in review');
    await page.getByTestId('nav-tasks').click();
    await page.locator(`[data-testid=task-card][data-id="${taskIds.parser}"]`).waitFor();
  });

  test('a run on a git repository: review its changes, comment on a line, send it to the agent, merge', async () => {
    // The person's repository inside the allowed root, with a commit to start from.
    const repo = path.join(daemon.workspace, 'shop');
    mkdirSync(path.join(repo, 'src'), { recursive: true });
    const git = (...args) => execFileSync('git', ['-C', repo, ...args], { encoding: 'utf8' }).trim();
    git('init', '-q', '-b', 'main');
    writeFileSync(path.join(repo, 'src/date.rs'), 'pub fn parse(s: &str) -> u32 {\n    s.len() as u32\n}\n');
    writeFileSync(path.join(repo, 'README.md'), '# shop\n');
    git('add', '-A');
    git('-c', 'user.name=P', '-c', 'user.email=p@example.com', 'commit', '-q', '-m', 'first');
    const run = await apiCall(daemon, 'POST', '/api/runs', {
      prompt:
        '[fake:write=src/date.rs:pub fn parse(s: &str) -> Option<u32> { s.trim().parse().ok() }][fake:write=src/lib.rs:pub mod date;][fake:write=docs/dates.md:Dates are parsed as plain numbers.] Fix the date parser',
      workspace: repo,
      permissions: { allow: ['Write(**)'] },
    });
    await page.getByTestId('nav-runs').click();
    await page.locator(`[data-testid=run-row][data-id="${run.id}"]`).click();
    await page.locator(`[data-testid=run-detail][data-id="${run.id}"][data-status=succeeded]`).waitFor({ timeout: 20_000 });
    await page.getByTestId('tab-changes').click();
    await page.getByTestId('changes-files').waitFor();
    assert.match(await page.getByTestId('changes-summary').innerText(), /3\s*files/);
    assert.equal(await page.locator('[data-testid=changes-files] .file-row').count(), 3);
    await page.locator('[data-testid=diff] .d2h-file-wrapper').first().waitFor();
    assert.match(await page.getByTestId('diff').innerText(), /s\.trim\(\)\.parse\(\)\.ok\(\)/);

    // A comment on the run's line 1 of src/date.rs.
    const dateFile = page.locator('[data-testid=diff] .d2h-file-wrapper').filter({ hasText: 'src/date.rs' });
    await dateFile.locator('td.d2h-code-linenumber').filter({ has: page.locator('.line-num2', { hasText: /^\s*1\s*$/ }) }).first().click();
    await page.getByTestId('comment-text').fill('Return an error the caller can show instead of None');
    await page.getByTestId('comment-save').click();
    await page.getByTestId('comment').first().waitFor();
    assert.match(await page.getByTestId('comment').first().innerText(), /src\/date\.rs:1[\s\S]*Option<u32>/);
    await page.getByTestId('diff-side-by-side').click();
    await page.locator('[data-testid=diff] .d2h-file-side-diff').first().waitFor();
    await page.getByTestId('diff-line-by-line').click();
    await screenshot(page, 'run-changes');

    await page.getByTestId('comments-send').click();
    await waitUntil(async () => (await page.getByTestId('run-detail').getAttribute('data-id')) !== run.id, 'the follow-up opened');
    const followId = await page.getByTestId('run-detail').getAttribute('data-id');
    await page.locator(`[data-testid=run-detail][data-id="${followId}"][data-status=succeeded]`).waitFor({ timeout: 20_000 });
    const follow = await apiCall(daemon, 'GET', `/api/runs/${followId}?tail=0`);
    assert.match(follow.prompt, /src\/date\.rs line 1:\n {3}> pub fn parse/);

    await page.getByTestId('tab-changes').click();
    await page.getByTestId('run-merge').click();
    await page.getByTestId('changes-merged').waitFor({ timeout: 10_000 });
    assert.match(git('log', '-1', '--format=%B', 'main'), new RegExp(`Tether-Run: ${run.id}`));
    assert.equal(readFileSync(path.join(repo, 'docs/dates.md'), 'utf8'), 'Dates are parsed as plain numbers.\n');

    // Which chat wrote it, after the merge: the Code view's gutter names the run; its legend opens it.
    const file = path.join(realpathSync(repo), 'src/date.rs');
    await page.evaluate((h) => (location.hash = h), `#/code?path=${encodeURIComponent(file)}&line=1`);
    await page.locator('[data-testid=code-lines] [data-line="1"][data-origin=ai]').waitFor({ timeout: 10_000 });
    assert.match(await page.getByTestId('code-summary').innerText(), /1 AI · 0 mixed · 0 by a person · 0 unknown of 1 lines/);
    assert.match(await page.getByTestId('code-legend').innerText(), /run/);
    await screenshot(page, 'code');
    await page.getByTestId('code-legend-chat').first().click();
    await waitUntil(async () => /#\/(runs|sessions)\//.test(await page.evaluate(() => location.hash)), 'the chat or run opened');
  });

  test('cloud: launch a Cursor Cloud agent on a repository from the form; its chat is in the index', async () => {
    await page.getByTestId('nav-runs').click();
    await page.getByTestId('run-new').click();
    await page.getByTestId('run-form').waitFor();
    await page.getByTestId('run-where-cloud').check();
    await page.getByTestId('run-repo').fill('github.com/acme/shop');
    await page.getByTestId('run-auto-pr').check();
    assert.equal(await page.getByTestId('run-no-key').count(), 0, 'the key comes from CURSOR_API_KEY');
    await page.getByTestId('run-prompt').fill('[cloud:step=60] Add pricing for quetzals');
    await screenshot(page, 'cloud-run-form');
    await page.getByTestId('run-start').click();
    let id;
    await waitUntil(async () => {
      id = (await apiCall(daemon, 'GET', '/api/runs')).runs.find((r) => r.kind === 'cloud')?.id;
      return id;
    }, 'the cloud run queued');
    const detail = page.locator(`[data-testid=run-detail][data-id="${id}"]`);
    await detail.waitFor();
    await page.locator('[data-testid=run-tool][data-tool=read_file]').waitFor({ timeout: 20_000 });
    await page.locator(`[data-testid=run-detail][data-id="${id}"][data-status=succeeded]`).waitFor({ timeout: 20_000 });
    assert.match(await page.getByTestId('run-place').innerText(), /github\.com\/acme\/shop/);
    assert.equal(await page.getByTestId('run-pr').getAttribute('href'), 'https://github.com/acme/shop/pull/7');
    assert.match(await page.getByTestId('run-assistant').last().innerText(), /Worked on: Add pricing for quetzals/);
    await screenshot(page, 'cloud-run');
    await page.getByTestId('run-chat').click();
    await page.locator('[data-testid=reader]', { hasText: 'Worked on: Add pricing for quetzals' }).waitFor({ timeout: 15_000 });
    await page.getByTestId('nav-tasks').click();
    await page.locator(`[data-testid=task-card][data-id="${taskIds.parser}"]`).waitFor();
  });

  test('insights: activity, projects, models and the board; a busy day clicks through to its chats', async () => {
    await page.getByTestId('nav-insights').click();
    await page.getByTestId('insights').waitFor();
    await page.getByTestId('insights-range').selectOption('all');
    await page.getByTestId('chart-calendar').waitFor();
    // The year's figures show first; everything's replace them.
    const api = await apiCall(daemon, 'GET', '/api/insights');
    const want = new RegExp(`^${api.totals.chats}\\s+Chats`);
    await waitUntil(async () => want.test(await page.getByTestId('insights-totals').innerText()), 'all-time totals');
    for (const c of ['chart-weekly', 'chart-projects', 'chart-models', 'chart-board']) await page.getByTestId(c).waitFor();
    assert.match(await page.getByTestId('insights-unknown-models').innerText(), /have no model recorded/);
    await screenshot(page, 'insights');
    // Usage: the runs' tokens by model, then the account's CSV imported (a bad row named by its
    // line), shown beside them; the export is a CSV of the same rows.
    await page.getByTestId('usage-models').waitFor();
    assert.match(await page.getByTestId('usage-models').innerText(), /runs/);
    const csv = [
      'Date,Kind,Model,Max Mode,Input (w/ Cache Write),Input (w/o Cache Write),Cache Read,Output Tokens,Total Tokens,Cost',
      `${new Date().toISOString()},Usage-based,claude-4.5-sonnet,No,1000,2000,30000,500,33500,$0.12`,
      'yesterday-ish,Included,gpt-5,No,1,1,1,1,4,Included',
      `${new Date(Date.now() - 86_400_000).toISOString()},Included,gpt-5,No,0,4000,0,800,4800,Included`,
    ].join('\n');
    await page.getByTestId('usage-import').setInputFiles({ name: 'usage-events.csv', mimeType: 'text/csv', buffer: Buffer.from(csv) });
    const report = page.getByTestId('usage-import-report');
    await report.waitFor();
    assert.match(await report.innerText(), /2 new events/);
    assert.match(await report.innerText(), /line 3: Date "yesterday-ish"/);
    await waitUntil(async () => /account/.test(await page.getByTestId('usage-models').innerText()), 'the account row');
    assert.match(await page.getByTestId('usage-models').innerText(), /\$0\.12/);
    await page.getByTestId('usage-daily').waitFor();
    const href = await page.getByTestId('usage-export').getAttribute('href');
    assert.match(href, /\/api\/usage\?.*format=csv/);
    await page.getByTestId('usage').scrollIntoViewIfNeeded();
    await screenshot(page, 'usage');
    // The busiest day's chats: the list narrowed to that day holds as many chats as started then.
    const busiest = api.busiest_days.find((d) => d.chats > 0);
    await page.getByTestId('insights-busiest').getByRole('button', { name: busiest.day }).click();
    await page.getByTestId('list-narrowed').waitFor();
    await waitUntil(async () => (await page.locator('[data-testid=session-row]').count()) === busiest.chats, 'the chats of that day');
    // The longest chat opens in the reader.
    await page.getByTestId('nav-insights').click();
    await page.getByTestId('insights-longest').getByRole('button').first().click();
    await page.getByTestId('reader').waitFor();
    await page.getByTestId('nav-tasks').click();
    await page.locator(`[data-testid=task-card][data-id="${taskIds.parser}"]`).waitFor();
  });

  test('task detail: comment, handoff note and history', async () => {
    await page.locator(`[data-testid=task-card][data-id="${taskIds.parser}"] .card-open`).click();
    const detail = page.locator(`[data-testid=task-detail][data-id="${taskIds.parser}"]`);
    await detail.waitFor();
    await page.getByTestId('task-comment').fill('dates done, times next');
    await page.getByTestId('task-handoff').check();
    await page.getByTestId('task-comment-submit').click();
    await page.locator('[data-testid=task-notes] li.handoff', { hasText: 'dates done, times next' }).waitFor();
    assert.ok((await page.getByTestId('task-history').locator('li').count()) >= 2);
    // Assign to a person, then edit the title in the dialog.
    await page.getByTestId('task-assign-person').fill('alice');
    await page.getByTestId('task-assign-person').press('Enter');
    await page.locator(`[data-testid=task-card][data-id="${taskIds.parser}"]`, { hasText: '@alice' }).waitFor();
    await page.getByTestId('task-edit').click();
    await page.getByTestId('task-title').fill('Write the date parser');
    await page.getByTestId('task-save').click();
    await page.locator(`[data-testid=task-card][data-id="${taskIds.parser}"]`, { hasText: 'Write the date parser' }).waitFor();
    assert.equal((await apiCall(daemon, 'GET', `/api/tasks/${taskIds.parser}`)).title, 'Write the date parser');
    await page.getByTestId('view-list').click();
    await page.locator(`[data-testid=task-row][data-id="${taskIds.agent}"]`).waitFor();
    await page.getByTestId('view-board').click();
    await page.getByTestId('task-detail-close').click();
  });

  test('tags, agents, health and settings views', async () => {
    await page.getByTestId('nav-tags').click();
    await page.locator('[data-testid=tag-row][data-tag="e2e-tag"]').waitFor();
    await screenshot(page, 'tags');

    await page.getByTestId('nav-agents').click();
    const agent = page.locator(`[data-testid=agent-row][data-name="${taskIds.agentName}"]`);
    await agent.waitFor();
    assert.match(await agent.innerText(), /working/);
    assert.match(await agent.innerText(), new RegExp(taskIds.agent));
    assert.equal(await agent.getByTestId('agent-surface').innerText(), 'full');
    // A run is an agent too; one Tether ran can be woken by a follow-up run.
    const runAgent = page.locator('[data-testid=agent-row][data-name="run R-1"]');
    await runAgent.waitFor();
    assert.match(await runAgent.innerText(), /idle/);
    await runAgent.getByTestId('agent-wake').check();
    await waitUntil(async () => (await runAgent.getByTestId('agent-surface').innerText()) === 'resume', 'wake by resume on');
    assert.equal((await apiCall(daemon, 'GET', '/api/agents')).agents.find((a) => a.name === 'run R-1').wake_by_resume, true);
    await screenshot(page, 'agents');

    await page.getByTestId('nav-health').click();
    await page.getByTestId('mcp-url').waitFor();
    assert.equal(await page.getByTestId('mcp-url').innerText(), daemon.url);
    await page.locator('[data-testid=source-row]').first().waitFor();
    await page.getByTestId('cloud-check').click();
    await page.locator('[data-testid=cloud-check-row][data-name=key_valid][data-status=ok]').waitFor();
    await screenshot(page, 'health');

    await page.getByTestId('nav-settings').click();
    await page.getByTestId('cursor-user-dirs').locator('li').first().waitFor();
    assert.equal(await page.getByTestId('settings-port').innerText(), String(daemon.port));
    await page.getByTestId('desktop-only-note').waitFor();
    await screenshot(page, 'settings');
  });

  test('settings: saved to the data dir, bad values refused, overrides said', async () => {
    await page.getByTestId('nav-settings').click();
    await page.getByTestId('setting-port').waitFor();
    await page.getByTestId('setting-port').fill('80');
    await page.getByTestId('settings-save').click();
    await waitUntil(async () => (await page.getByTestId('settings-error').innerText()).includes('1024'), 'the port error');
    // This daemon runs with --port 0 and TETHER_CURSOR_DIR: saved values are kept and shown as overridden.
    await page.getByTestId('setting-port').fill(String(daemon.port + 1));
    await page.getByTestId('setting-cursor-user-dir').fill(daemon.env.TETHER_HOME);
    await page.getByTestId('settings-save').click();
    await page.getByTestId('overridden-port').waitFor();
    await page.getByTestId('overridden-cursor_user_dir').waitFor();
    assert.equal(await page.getByTestId('restart-needed').count(), 0);
    assert.equal(await page.getByTestId('setting-notifications').isChecked(), true);
    await page.getByTestId('setting-notifications').uncheck();
    await waitUntil(async () => (await apiCall(daemon, 'GET', '/api/settings')).settings.notifications === false, 'saved');
    await page.reload();
    await page.getByTestId('setting-port').waitFor();
    assert.equal(await page.getByTestId('setting-notifications').isChecked(), false);
    assert.equal(await page.getByTestId('setting-port').inputValue(), String(daemon.port + 1));
    const saved = JSON.parse(await readFile(`${daemon.env.TETHER_HOME}/settings.json`, 'utf8'));
    assert.deepEqual([saved.port, saved.notifications, saved.cursor_user_dir], [daemon.port + 1, false, daemon.env.TETHER_HOME]);
    await screenshot(page, 'settings-saved');
    // A change made elsewhere (another window, the API) arrives live.
    await apiCall(daemon, 'PATCH', '/api/settings', { port: null, cursor_user_dir: null, notifications: true });
    await waitUntil(async () => (await page.getByTestId('setting-port').inputValue()) === '', 'the live reset');
    assert.equal(await page.getByTestId('setting-notifications').isChecked(), true);
    // Budgets: a figure that does not read is refused with the reason; one that does is saved.
    await page.getByTestId('setting-daily-budget').fill('lots');
    await page.getByTestId('budgets-save').click();
    await waitUntil(async () => /200k/.test(await page.getByTestId('budgets-error').innerText()), 'the budget error');
    await page.getByTestId('setting-daily-budget').fill('$10');
    await page.getByTestId('budgets-save').click();
    await waitUntil(async () => (await apiCall(daemon, 'GET', '/api/settings')).settings.usage.daily_budget === '$10', 'the budget saved');
    await apiCall(daemon, 'PATCH', '/api/settings', { usage: { daily_budget: null } });
  });

  test('renaming a tag onto another merges them; the command palette jumps and searches', async () => {
    await apiCall(daemon, 'PATCH', `/api/sessions/${C_V10}`, { add_tags: ['other'] });
    await page.getByTestId('nav-tags').click();
    await page.locator('[data-testid=tag-row][data-tag="other"]').waitFor();
    await page.locator('[data-testid=tag-row][data-tag="other"] [data-testid=tag-rename]').click();
    await page.getByTestId('tag-rename-input').fill('e2e-tag');
    const before = await page.locator('[data-testid=tag-row]').count();
    await page.getByTestId('tag-rename-save').click();
    await page.getByTestId('confirm-ok').click();
    await waitUntil(async () => (await page.locator('[data-testid=tag-row]').count()) === before - 1, 'the merged tag list');
    assert.equal(await page.locator('[data-testid=tag-row][data-tag="other"]').count(), 0);
    assert.equal(await page.locator('[data-testid=tag-row][data-tag="e2e-tag"] td.num').innerText(), '2');

    await page.keyboard.press('Control+k');
    await page.getByTestId('palette-input').fill('axolotl');
    // Enter runs the selected command: wait until the typed text has made it the search.
    await page.locator('[data-testid=cmd-search][aria-selected=true]').waitFor();
    await page.keyboard.press('Enter');
    await page.locator(`[data-testid=session-row][data-id="${C_V10}"] [data-testid=snippet] mark`).first().waitFor();
    await page.keyboard.press('Escape');
    await page.locator('body').click({ position: { x: 5, y: 790 } });
    await page.keyboard.press('/');
    await waitUntil(async () => (await page.evaluate(() => document.activeElement?.id)) === 'session-search', '/ to focus the search');
  });

  test('a hostile chat cannot run script in the reader or in a snippet', async () => {
    daemon.appendBubble(C_V10, XSS);
    await waitUntil(async () => (await apiCall(daemon, 'GET', `/api/search?q=${XSS_WORD}`)).hits.length > 0, 'the payload to be indexed');
    await page.goto(`${daemon.base}/#/sessions`);
    await page.getByTestId('session-search').fill(XSS_WORD);
    const row = page.locator(`[data-testid=session-row][data-id="${C_V10}"]`, { hasText: XSS_WORD });
    await row.waitFor();
    assert.equal(await row.getByTestId('snippet').locator('mark').first().innerText(), XSS_WORD);
    assert.equal(await row.locator('img, script, svg').count(), 0);
    await row.click();
    const body = page.locator('[data-testid=msg-body]', { hasText: XSS_WORD });
    await body.waitFor();
    const text = await body.innerText();
    assert.ok(text.includes('<img src=x onerror="window.__xss=1">'), `the payload shows as text: ${text}`);
    assert.equal(await body.locator('img, script, svg, iframe, [onerror], [onload]').count(), 0);
    const link = body.locator('a', { hasText: 'click' });
    if (await link.count()) {
      assert.ok(!/^javascript:/i.test((await link.getAttribute('href')) ?? ''));
      await link.click({ force: true });
    }
    await page.waitForTimeout(300);
    assert.equal(await page.evaluate(() => window.__xss), undefined, 'no payload ran');
    assert.deepEqual(page.errors.filter((e) => !/Failed to load resource/.test(e)), []);
  });

  test('"do not index" asks first, then hides the chat’s messages until indexed again', async () => {
    const target = (await apiCall(daemon, 'GET', '/api/sessions')).sessions.find((x) => x.id !== B_SPLIT && x.id !== C_V10 && x.messages > 0);
    await page.goto(`${daemon.base}/#/sessions/${target.id}`);
    await page.locator(`[data-testid=reader][data-id="${target.id}"]`).waitFor();
    await page.getByTestId('no-index').click();
    await page.getByTestId('confirm-cancel').click();
    assert.equal((await apiCall(daemon, 'GET', `/api/sessions?limit=1000`)).sessions.find((x) => x.id === target.id).no_index, false);
    await page.getByTestId('no-index').click();
    await page.getByTestId('confirm-ok').click();
    await page.getByTestId('reader-not-indexed').waitFor();
    assert.equal((await apiCall(daemon, 'GET', `/api/sessions?limit=1000`)).sessions.find((x) => x.id === target.id).no_index, true);
    await page.getByTestId('index-again').click();
    await page.locator(`[data-testid=reader][data-id="${target.id}"]`).waitFor();
    assert.equal((await apiCall(daemon, 'GET', `/api/sessions?limit=1000`)).sessions.find((x) => x.id === target.id).no_index, false);
  });

  test('the desktop shell’s hook: a bearer token instead of the cookie, live updates included', async () => {
    const ctx = await browser.newContext({ viewport: { width: 1280, height: 800 } });
    await ctx.addInitScript((token) => {
      window.__TETHER_API__ = { base: '', token };
    }, TOKEN);
    const p = await ctx.newPage();
    await p.goto(`${daemon.base}/#/tasks`);
    await p.getByTestId('board').waitFor();
    await p.locator('[data-testid=conn][data-state=open]').waitFor();
    const t = await apiCall(daemon, 'POST', '/api/tasks', { title: 'Seen through the token stream' });
    await p.locator(`[data-testid=column-todo] [data-testid=task-card][data-id="${t.id}"]`).waitFor();
    await ctx.close();
  });
});

describe('GUI in a team (a throwaway PostgreSQL)', () => {
  let cluster;
  let daemon;
  let browser;
  let page;

  before(async () => {
    cluster = await startPgCluster();
    daemon = await startDaemon();
    await apiCall(daemon, 'POST', '/api/tasks', { title: 'planned on the laptop alone' });
    await apiCall(daemon, 'POST', '/api/team/join', { url: cluster.url, machine: 'laptop', password: cluster.password });
    ({ browser, page } = await loggedIn(daemon));
  });

  after(async () => {
    await browser?.close().catch(() => {});
    await daemon?.close();
    await cluster?.stop();
  });

  test('share a chat: the redacted text first, then teammates find it shared by whom; take it back', async () => {
    await page.goto(`${daemon.base}/#/sessions/${B_SPLIT}`);
    await page.locator(`[data-testid=reader][data-id="${B_SPLIT}"]`).waitFor();
    await page.getByTestId('share-open').click();
    await page.getByTestId('share-summary').waitFor();
    assert.match(await page.getByTestId('share-summary').innerText(), /Teammates will read this copy of “Date parsing narwhal”/);
    assert.match(await page.getByTestId('share-text').innerText(), /narwhal/);
    await screenshot(page, 'share');
    await page.getByTestId('share-confirm').click();
    // (The screenshot hid the toasts: their text is still there.)
    await waitUntil(async () => (await page.getByTestId('toasts').textContent()).includes('Shared with the team as SH-1'), 'the toast');

    await page.getByTestId('filter-source').selectOption('team');
    const row = page.locator('[data-testid=session-row][data-id="SH-1"]');
    await row.waitFor();
    assert.match(await row.getByTestId('shared-row-by').innerText(), /on laptop/);
    await row.click();
    await page.getByTestId('shared-reader').waitFor();
    assert.match(await page.getByTestId('shared-body').innerText(), /narwhal/);
    await screenshot(page, 'team-shared');

    await page.getByTestId('unshare').click();
    await page.getByTestId('confirm-ok').click();
    await page.getByTestId('shared-none').waitFor();
    assert.deepEqual(page.errors.filter((e) => !/Failed to load resource/.test(e)), []);
  });

  test('Health: this machine’s own tasks go up to the team when asked, once', async () => {
    assert.equal((await apiCall(daemon, 'GET', '/api/tasks')).tasks.length, 0, 'joining merged nothing');
    await page.getByTestId('nav-health').click();
    await page.getByTestId('team-machine').waitFor();
    await page.getByTestId('team-import-local').click();
    await waitUntil(async () => (await page.getByTestId('toasts').textContent()).includes('1 new'), 'the import toast');
    const tasks = (await apiCall(daemon, 'GET', '/api/tasks')).tasks;
    assert.deepEqual(tasks.map((t) => t.title), ['planned on the laptop alone']);
    await page.getByTestId('team-import-local').click();
    await waitUntil(async () => (await page.getByTestId('toasts').textContent()).includes('1 unchanged'), 'the second toast');
    assert.equal((await apiCall(daemon, 'GET', '/api/tasks')).tasks.length, 1);
  });
});

describe('GUI joining a team whose server asks for a client certificate', () => {
  let cluster;
  let daemon;
  let browser;
  let page;

  before(async () => {
    cluster = await startPgCluster({ tls: true });
    daemon = await startDaemon();
    ({ browser, page } = await loggedIn(daemon));
  });

  after(async () => {
    await browser?.close().catch(() => {});
    await daemon?.close();
    await cluster?.stop();
  });

  test('Health: the certificate and key picked as files join it; the keyring keeps them', async () => {
    await page.getByTestId('nav-health').click();
    await page.getByTestId('team-url').fill(cluster.cert_url);
    await page.getByTestId('team-machine-name').fill('certified');
    await page.getByText('Client certificate (for a server that asks for one)').click();
    await page.getByTestId('team-client-cert').setInputFiles(cluster.client_cert);
    await page.getByTestId('team-client-key').setInputFiles(cluster.client_key);
    await page.getByTestId('team-client-key').scrollIntoViewIfNeeded();
    await screenshot(page, 'team-join-certificate');
    await page.getByTestId('team-join').click();
    await page.getByTestId('team-machine').waitFor();
    const team = await apiCall(daemon, 'GET', '/api/team');
    assert.equal(team.reachable, true);
    assert.equal(team.machine, 'certified');
    assert.deepEqual(page.errors.filter((e) => !/Failed to load resource/.test(e)), []);
  });
});

describe('GUI during a first index', () => {
  let daemon;
  let browser;

  before(async () => {
    daemon = await startFirstIndexDaemon();
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close().catch(() => {});
    await daemon?.close();
  });

  test('every chat is listed before it is read; the rest are marked, search says how far it is', async () => {
    const page = await newPage(browser);
    await page.goto(loginUrl(daemon));
    await page.locator('[data-testid=session-row]').first().waitFor();
    const { sessions } = await apiCall(daemon, 'GET', '/api/sessions?limit=1000');
    // Workspace DBs are read whole, then the global DB's chats listed, then the CLI's chats read;
    // of the global DB's chats one is read (the pause comes after its first batch).
    const pending = sessions.filter((s) => s.searchable === false);
    const ready = sessions.length - pending.length;
    assert.ok(pending.length >= 3 && ready >= 1, `chats listed but not read: ${JSON.stringify(sessions)}`);
    await waitUntil(async () => (await page.locator('[data-testid=row-pending]').count()) === pending.length, 'marked rows', 10_000);
    await page.getByTestId('indexing-note').waitFor();
    await page.getByTestId('session-search').fill('narwhal');
    const coverage = page.getByTestId('search-coverage');
    await coverage.waitFor();
    assert.match(await coverage.innerText(), new RegExp(`still indexing: ${ready} of ${sessions.length} chats searchable`));
    const search = await apiCall(daemon, 'GET', '/api/search?q=narwhal');
    assert.deepEqual(search.coverage, { searchable: ready, total: sessions.length });
    await page.getByTestId('session-search').fill('');
    await page.locator(`[data-testid=session-row][data-id="${pending[0].id}"]`).click();
    await page.getByTestId('reader-pending').waitFor();
    await screenshot(page, 'first-start');
    assert.deepEqual(page.errors.filter((e) => !/Failed to load resource|503/.test(e)), []);
  });
});

describe('GUI on an empty machine (no Cursor data)', () => {
  let daemon;
  let browser;
  let page;

  before(async () => {
    daemon = await startEmptyDaemon({ savedPort: await freePort() });
    ({ browser, page } = await loggedIn(daemon));
  });

  after(async () => {
    await browser?.close().catch(() => {});
    await daemon?.close();
  });

  test('every view says what to do next', async () => {
    const empty = page.getByTestId('sessions-empty');
    await empty.waitFor();
    assert.match(await empty.innerText(), /tether doctor/);
    await page.getByTestId('nav-tasks').click();
    await page.getByTestId('tasks-empty').waitFor();
    await page.getByTestId('nav-tags').click();
    await page.getByTestId('tags-empty').waitFor();
    await page.getByTestId('nav-agents').click();
    await page.getByTestId('agents-empty').waitFor();
    await page.getByTestId('nav-health').click();
    await page.getByTestId('health-version').waitFor();
    assert.match(await page.getByTestId('health-sources').innerText(), /No Cursor data found|complete|partial/);
    await page.getByTestId('nav-settings').click();
    await page.getByTestId('cursor-user-dirs').locator('li').first().waitFor();
    assert.match(await page.getByTestId('cursor-user-dirs').innerText(), /missing/);
    assert.deepEqual(page.errors.filter((e) => !/Failed to load resource/.test(e)), []);
  });

  test('saving another port moves the daemon, and the page follows it there', async () => {
    const next = await freePort();
    await page.getByTestId('nav-settings').click();
    await page.getByTestId('setting-port').waitFor();
    await waitUntil(async () => (await page.getByTestId('settings-port').innerText()) === String(daemon.port), 'the port shown');
    await page.getByTestId('setting-port').fill(String(next));
    await page.getByTestId('settings-save').click();
    await page.waitForURL((u) => u.port === String(next), { timeout: 15_000 });
    await waitUntil(async () => (await page.getByTestId('settings-port').innerText()) === String(next), 'the new port shown');
    assert.equal(await page.getByTestId('restart-needed').count(), 0);
    const info = JSON.parse(await readFile(`${daemon.env.TETHER_HOME}/daemon.json`, 'utf8'));
    assert.equal(info.url, `http://127.0.0.1:${next}/mcp`);
    const was = daemon.port;
    daemon.port = next;
    // Health tells the person that Cursor, set up with the old URL, must be told the new one.
    await page.getByTestId('nav-health').click();
    assert.match(await page.getByTestId('moved-port').innerText(), new RegExp(`moved from port ${was}.*tether init`, 's'));
    await waitUntil(async () => (await page.getByTestId('mcp-url').innerText()) === info.url, 'the new MCP URL on Health');
  });
});

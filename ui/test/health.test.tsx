// @vitest-environment jsdom
import { render } from 'preact';
import { afterEach, describe, expect, it } from 'vitest';

import type { SourceStatus } from '../src/types';
import { StoresPanel, storeKindRows, TrackingPanel } from '../src/views/health';

const source = (kind: string, status: string, extra: Partial<SourceStatus> = {}): SourceStatus => ({
  path: `/c/${kind}/${status}`,
  kind,
  status,
  sessions: 1,
  messages: 1,
  reasons: {},
  notes: {},
  error: null,
  indexed_at: null,
  ...extra,
});

const doctor = {
  found: [
    { kind: 'workspace', files: 3, sessions: 12, messages: 340 },
    { kind: 'sdk_agent', files: 2, sessions: 5, messages: 40 },
    { kind: 'codex', files: 1, sessions: 1, messages: 6 },
  ],
  sources: [
    source('workspace', 'complete', { reasons: {} }),
    source('workspace', 'partial', { reasons: { bad_json: 2, unknown_version: 1 } }),
    source('workspace', 'partial', { reasons: { bad_json: 1 } }),
    source('sdk_agent', 'error', { error: 'database disk image is malformed' }),
    source('codex', 'missing', { reasons: { bad_json: 9 } }),
  ],
  skipped: [
    { kind: 'workspace', path: '/c/ws/a', reason: 'workspace folder with no state.vscdb' },
    { kind: 'workspace', path: '/c/ws/b', reason: 'workspace folder with no state.vscdb' },
    { kind: 'codex', path: '/c/codex/x.txt', reason: 'a Codex file that is not a rollout (rollout-*.jsonl)' },
    { kind: 'gemini', path: '/c/gemini/x', reason: 'a Gemini CLI session continued in the .jsonl beside it' },
  ],
};

describe('stores per kind on the Health page', () => {
  it('counts found, read, incomplete and skipped per kind, with why', () => {
    const rows = storeKindRows(doctor);
    expect(rows.map((r) => r.kind)).toEqual(['workspace', 'sdk_agent', 'codex', 'gemini']);
    const ws = rows[0];
    expect([ws.found, ws.chats, ws.messages, ws.incomplete]).toEqual([3, 12, 340, 2]);
    expect(ws.problems).toEqual([
      ['bad_json', 3],
      ['unknown_version', 1],
    ]);
    expect(ws.skipped).toEqual([{ reason: 'workspace folder with no state.vscdb', paths: ['/c/ws/a', '/c/ws/b'] }]);
    expect(rows[1].problems).toEqual([['database disk image is malformed', 1]]);
    // A source gone from disk is not a problem of what was found now.
    expect([rows[2].incomplete, rows[2].problems, rows[2].skipped.length]).toEqual([0, [], 1]);
    // A kind with nothing found but files passed over still has its row.
    expect([rows[3].found, rows[3].skipped[0].paths]).toEqual([0, ['/c/gemini/x']]);
  });

  let root: HTMLDivElement | undefined;
  afterEach(() => {
    if (!root) return;
    render(null, root);
    root.remove();
    root = undefined;
  });

  it('renders one row per kind with its skipped reasons, and nothing when nothing was found', () => {
    root = document.createElement('div');
    document.body.append(root);
    render(<StoresPanel doctor={doctor} />, root);
    const rows = [...root.querySelectorAll('[data-testid="store-kind-row"]')];
    expect(rows.map((r) => r.getAttribute('data-kind'))).toEqual(['workspace', 'sdk_agent', 'codex', 'gemini']);
    const cells = [...rows[0].querySelectorAll('td')].map((td) => td.textContent);
    expect(cells.slice(1, 6)).toEqual(['3', '12', '340', '2', '2']);
    const skipped = rows[0].querySelector('[data-testid="store-skipped"]')!;
    expect(skipped.textContent).toBe('skipped: workspace folder with no state.vscdb × 2');
    expect(skipped.getAttribute('title')).toBe('/c/ws/a\n/c/ws/b');
    expect(rows[1].textContent).toContain('SDK / Agents Window');

    render(<StoresPanel doctor={{ found: [], sources: [], skipped: [] }} />, root);
    expect(root.querySelector('[data-testid="health-stores"]')).toBeNull();
  });
});

describe("Cursor's AI-code tracking on the Health page", () => {
  const covers = 'files, not lines';
  it('says what a read database covers and why another was not read, and nothing when none exists', () => {
    const root = document.createElement('div');
    document.body.append(root);
    const coverage = { since_ms: Date.UTC(2026, 0, 1), chunks: 5, ai_chunks: 4, files: 2, chats: 2, commits: 1 };
    render(
      <TrackingPanel
        doctor={{
          cursor_tracking: [
            { path: '/h/.cursor/ai-tracking/ai-code-tracking.db', status: 'read', reason: null, coverage, covers },
            { path: '/w/.cursor/ai-tracking/ai-code-tracking.db', status: 'skipped', reason: 'not readable: locked', coverage: null, covers },
            { path: '/x/.cursor/ai-tracking/ai-code-tracking.db', status: 'missing', reason: 'not found', coverage: null, covers },
          ],
        }}
      />,
      root,
    );
    const items = [...root.querySelectorAll('[data-testid="health-cursor-tracking"] li')];
    expect(items.map((li) => li.getAttribute('data-status'))).toEqual(['read', 'skipped']);
    expect(items[0].textContent).toContain('4 AI chunks in 2 files from 2 chats, 1 commits scored');
    expect(items[1].textContent).toContain('not read: not readable: locked');
    render(<TrackingPanel doctor={{ cursor_tracking: [{ path: '/x', status: 'missing', reason: null, coverage: null, covers }] }} />, root);
    expect(root.querySelector('[data-testid="health-cursor-tracking"]')).toBeNull();
    root.remove();
  });
});

// @vitest-environment jsdom
import { render } from 'preact';
import { afterEach, describe, expect, it } from 'vitest';

import type { SourceStatus } from '../src/types';
import { StoresPanel, storeKindRows } from '../src/views/health';

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

import { describe, expect, it } from 'vitest';

import type { StoredEvent } from '../src/types';
import { foldEvents, isTerminal, permissionsFrom } from '../src/views/runs';

let seq = 0;
const ev = (e: Record<string, unknown>) => ({ seq: ++seq, at: '2026-11-23T10:00:00Z', ...e }) as unknown as StoredEvent;

describe('run events as the reader shows them', () => {
  it('joins partial deltas, folds a tool call into one item and keeps odd lines', () => {
    const items = foldEvents([
      ev({ kind: 'status', status: 'running', message: null }),
      ev({ kind: 'user', text: 'fix it' }),
      ev({ kind: 'thinking', text: 'hm', done: false }),
      ev({ kind: 'thinking', text: null, done: true }),
      ev({ kind: 'assistant', text: 'Look', partial: true }),
      ev({ kind: 'assistant', text: 'ing…', partial: true }),
      ev({ kind: 'tool_call', call_id: 'c\n1', tool: 'shell', phase: 'started', path: null, command: 'cargo test', outcome: null, args: {}, result: null }),
      ev({ kind: 'tool_call', call_id: 'c\n1', tool: 'shell', phase: 'completed', path: null, command: null, outcome: 'success', args: {}, result: { success: { exitCode: 0 } } }),
      ev({ kind: 'raw', text: '\u0000garbage', reason: 'not JSON' }),
      ev({ kind: 'result', is_error: false, text: 'done', duration_ms: 1500, duration_api_ms: null, usage: null }),
    ]);
    expect(items.map((i) => i.kind)).toEqual(['line', 'text', 'thinking', 'text', 'tool', 'line', 'line']);
    expect(items[3]).toMatchObject({ role: 'assistant', text: 'Looking…' });
    expect(items[4]).toMatchObject({ tool: 'shell', what: 'cargo test', outcome: 'success' });
    expect(items[6]).toMatchObject({ tone: 'result', text: 'Done in 1.5 s.' });
  });

  it('builds permissions from presets and typed tokens, without duplicates', () => {
    expect(permissionsFrom(['write', 'shell'], 'Shell(cargo), Write(**)', 'Shell(rm)\n')).toEqual({
      allow: ['Write(**)', 'Shell(*)', 'Shell(cargo)'],
      deny: ['Shell(rm)'],
    });
    expect(isTerminal('timed_out') && !isTerminal('queued')).toBe(true);
  });
});

import { describe, expect, it } from 'vitest';

import type { EditOrigin, LineOrigin } from '../src/types';
import { chatColors, originTitle } from '../src/views/code';
import { rangesText } from '../src/views/sessions';

const edit = (id: number, conversation_id: string | null, extra: Partial<EditOrigin> = {}): EditOrigin => ({
  id,
  at: '2026-11-25T10:00:00Z',
  kind: 'agent',
  model: 'gpt-5',
  conversation_id,
  session: conversation_id,
  title: `Chat ${conversation_id}`,
  turn: 0,
  turn_seq: 0,
  run_id: null,
  path: 'src/a.rs',
  ...extra,
});

const line = (origin: LineOrigin['origin'], e: number | null = null): LineOrigin => ({ line: 1, text: 'x', origin, edit: e, commit: null });

describe('the Code view', () => {
  it('gives each chat one colour, shared by its edits', () => {
    const c = chatColors([edit(1, 'a'), edit(2, 'b'), edit(3, 'a'), edit(4, null, { run_id: 'R-1' })]);
    expect(c.get(1)).toBe(c.get(3));
    expect(new Set([c.get(1), c.get(2), c.get(4)]).size).toBe(3);
  });

  it('says who wrote a line on hover, and what unknown means', () => {
    expect(originTitle(line('ai', 1), edit(1, 'a'))).toMatch(/^AI-written — Chat a · Cursor agent · gpt-5/);
    expect(originTitle(line('mixed', 1), edit(1, 'a', { kind: 'tab' }))).toMatch(/edited by a person since — Chat a · Cursor Tab/);
    expect(originTitle(line('human'), undefined)).toMatch(/person/);
    expect(originTitle(line('unknown'), undefined)).toMatch(/^Unknown/);
  });

  it('merges a file’s ranges for the reader', () => {
    const r = (a: number, b: number) => ({ start_line: a, end_line: b, content_hash: '' });
    expect(rangesText([r(9, 9), r(2, 3), r(4, 5), r(3, 4)])).toBe('2–5, 9');
    expect(rangesText([])).toBe('');
  });
});

import { describe, expect, it } from 'vitest';

import type { Delivery, Signal } from '../src/types';
import { obligationRows, unreadCount } from '../src/views/inbox';

function delivery(recipient: string, over: Partial<Delivery> = {}): Delivery {
  return {
    recipient,
    drained_at: null,
    obligation: 'open',
    closed_at: null,
    wake_attempt_count: 0,
    last_wake_at: null,
    last_wake_path: null,
    last_wake_result: null,
    ...over,
  };
}

function signal(id: string, created_at: string, deliveries: Delivery[]): Signal {
  return {
    id,
    type: 'question',
    from: 'ana',
    to: deliveries.length > 1 ? 'role:reviewer' : deliveries[0].recipient,
    body: 'b',
    reply_to: null,
    task: null,
    trace_id: 't',
    action_required: true,
    reply_required: true,
    created_at,
    answered_at: null,
    answered_by: null,
    deliveries,
    remote: false,
    machine: null,
  };
}

describe('inbox data', () => {
  it('counts only signals the person has not read', () => {
    const list = [
      signal('S-1', '2026-11-23T10:00:00Z', [delivery('human')]),
      signal('S-2', '2026-11-23T10:01:00Z', [delivery('human', { drained_at: '2026-11-23T10:02:00Z' })]),
      signal('S-3', '2026-11-23T10:03:00Z', [delivery('bo')]),
    ];
    expect(unreadCount(list)).toBe(1);
  });

  it('lists each open delivery once, oldest first, with its age', () => {
    const now = Date.parse('2026-11-23T11:00:00Z');
    const rows = obligationRows(
      [
        signal('S-5', '2026-11-23T10:50:00Z', [delivery('bo'), delivery('cy', { obligation: 'closed' })]),
        signal('S-4', '2026-11-23T10:00:00Z', [delivery('human', { wake_attempt_count: 2 })]),
      ],
      now,
    );
    expect(rows.map((r) => `${r.signal.id}:${r.delivery.recipient}`)).toEqual(['S-4:human', 'S-5:bo']);
    expect(rows[0].ageMs).toBe(60 * 60_000);
  });
});

import { describe, expect, it } from 'vitest';

import { columnOf, COLUMNS, dropPatch, groupByColumn } from '../src/board';
import type { Task } from '../src/types';

function task(id: string, status: Task['status'], priority: Task['priority'] = 'medium', updated_at = '2026-01-01T00:00:00Z'): Task {
  return {
    id, title: id, description: '', status, priority, role: null, project: null, labels: [], depends_on: [], blocked_by: [],
    acceptance: [], assignee: null, lease_until: null, lease_expired: false, summary: null, external_ref: null, created_by: 'ui',
    created_at: updated_at, updated_at, version: 1,
  };
}

describe('board', () => {
  it('has the five columns in workflow order', () => {
    expect(COLUMNS.map((c) => c.id)).toEqual(['todo', 'in_progress', 'in_review', 'blocked', 'done']);
  });

  it('folds cancelled into done', () => {
    expect(columnOf('cancelled')).toBe('done');
    expect(columnOf('blocked')).toBe('blocked');
  });

  it('maps a drop to a status PATCH, or nothing', () => {
    expect(dropPatch({ status: 'todo' }, 'in_progress')).toEqual({ status: 'in_progress' });
    expect(dropPatch({ status: 'in_progress' }, 'done')).toEqual({ status: 'done' });
    expect(dropPatch({ status: 'todo' }, 'todo')).toBeNull();
    expect(dropPatch({ status: 'cancelled' }, 'done')).toBeNull();
    expect(dropPatch({ status: 'cancelled' }, 'todo')).toEqual({ status: 'todo' });
    expect(dropPatch({ status: 'todo' }, 'cancelled')).toBeNull(); // not a column
    expect(dropPatch({ status: 'todo' }, 'nonsense')).toBeNull();
  });

  it('groups and orders tasks: priority then id; done newest first', () => {
    const g = groupByColumn([
      task('T-3', 'todo', 'low'), task('T-1', 'todo', 'medium'), task('T-10', 'todo', 'critical'), task('T-2', 'todo', 'medium'),
      task('T-4', 'done', 'medium', '2026-01-01T00:00:00Z'), task('T-5', 'cancelled', 'medium', '2026-02-01T00:00:00Z'),
    ]);
    expect(g.todo.map((t) => t.id)).toEqual(['T-10', 'T-1', 'T-2', 'T-3']);
    expect(g.done.map((t) => t.id)).toEqual(['T-5', 'T-4']);
    expect(g.cancelled).toEqual([]);
  });
});

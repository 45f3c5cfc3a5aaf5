// The task board: which column a task sits in, and what dropping it on a column asks the API.

import type { Status, Task, TaskPatch } from './types';

export const COLUMNS: { id: Status; label: string }[] = [
  { id: 'todo', label: 'To do' },
  { id: 'in_progress', label: 'In progress' },
  { id: 'in_review', label: 'In review' },
  { id: 'blocked', label: 'Blocked' },
  { id: 'done', label: 'Done' },
];

export const STATUS_LABEL: Record<Status, string> = {
  todo: 'To do',
  in_progress: 'In progress',
  in_review: 'In review',
  blocked: 'Blocked',
  done: 'Done',
  cancelled: 'Cancelled',
};

/** Cancelled tasks are folded into the Done column. */
export function columnOf(status: Status): Status {
  return status === 'cancelled' ? 'done' : status;
}

const PRIORITY_RANK: Record<string, number> = { critical: 0, high: 1, medium: 2, low: 3 };

/** Tasks grouped by column, best first (priority, then oldest; closed ones newest first). */
export function groupByColumn(tasks: Task[]): Record<Status, Task[]> {
  const out = { todo: [], in_progress: [], in_review: [], blocked: [], done: [], cancelled: [] } as Record<Status, Task[]>;
  for (const t of tasks) out[columnOf(t.status)].push(t);
  for (const [col, list] of Object.entries(out)) {
    if (col === 'done') list.sort((a, b) => b.updated_at.localeCompare(a.updated_at));
    else list.sort((a, b) => (PRIORITY_RANK[a.priority] ?? 2) - (PRIORITY_RANK[b.priority] ?? 2) || taskNum(a.id) - taskNum(b.id));
  }
  return out;
}

export function taskNum(id: string): number {
  const n = Number(id.replace(/^T-/i, ''));
  return Number.isFinite(n) ? n : 0;
}

/**
 * The PATCH a drop of `task` on column `target` sends, or null when nothing changes (dropped on
 * its own column, or a cancelled task dropped on Done). The API decides whether the move is
 * legal (illegal_transition, dependencies_open, task_held) and the board shows its message.
 */
export function dropPatch(task: Pick<Task, 'status'>, target: string): TaskPatch | null {
  if (!COLUMNS.some((c) => c.id === target)) return null;
  if (columnOf(task.status) === target) return null;
  return { status: target as Status };
}

/** The drag payload: a task id in a private MIME type (plus text/plain for other targets). */
export const DRAG_MIME = 'application/x-tether-task';

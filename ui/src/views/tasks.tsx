import { useEffect, useMemo, useState } from 'preact/hooks';

import { api, ApiError } from '../api';
import { COLUMNS, DRAG_MIME, dropPatch, groupByColumn, STATUS_LABEL, taskNum } from '../board';
import { Dialog, Empty, ErrorNote, SafeHtml } from '../components';
import { navigate, reportError, toast, useAsync, useLive } from '../hooks';
import { renderMarkdown } from '../markdown';
import type { Route } from '../router';
import type { Agent, NewTask, Priority, Status, Task, TaskDetail, TaskEvent, TaskPatch } from '../types';
import { ago, dateTime, splitList } from '../util';
import { BudgetBar, budgetShare } from '../budget';

const PRIORITIES: Priority[] = ['critical', 'high', 'medium', 'low'];
const ALL_STATUSES: Status[] = ['todo', 'in_progress', 'in_review', 'blocked', 'done', 'cancelled'];

/** Opens the create dialog from elsewhere (the command palette). */
export const NEW_TASK_PARAM = 'new';

export function TasksView({ route }: { route: Route }) {
  const view = route.params.view === 'list' ? 'list' : 'board';
  const tasks = useAsync(() => api.tasks(), []);
  const agents = useAsync(() => api.agents(), []);
  const [editing, setEditing] = useState<Task | 'new' | null>(null);
  const [boardError, setBoardError] = useState<ApiError | Error | null>(null);
  const [dragOver, setDragOver] = useState<string | null>(null);
  const [filter, setFilter] = useState('');

  useLive(['tasks'], () => tasks.reload());
  useLive(['agents'], () => agents.reload());

  useEffect(() => {
    if (route.params[NEW_TASK_PARAM]) {
      setEditing('new');
      navigate('tasks', route.id, view === 'list' ? { view } : undefined);
    }
  }, [route.params[NEW_TASK_PARAM]]);

  const shown = useMemo(() => {
    const f = filter.trim().toLowerCase();
    const all = tasks.data ?? [];
    if (!f) return all;
    return all.filter((t) =>
      [t.id, t.title, t.assignee ?? '', t.role ?? '', ...t.labels].some((x) => x.toLowerCase().includes(f)),
    );
  }, [tasks.data, filter]);
  const cols = useMemo(() => groupByColumn(shown), [shown]);

  const setView = (v: 'board' | 'list') => navigate('tasks', route.id, v === 'list' ? { view: 'list' } : undefined);
  const open = (id: string) => navigate('tasks', id, view === 'list' ? { view } : undefined);

  const onDrop = async (e: DragEvent, col: Status) => {
    e.preventDefault();
    setDragOver(null);
    const id = e.dataTransfer?.getData(DRAG_MIME) || e.dataTransfer?.getData('text/plain');
    const task = (tasks.data ?? []).find((t) => t.id === id);
    if (!task) return;
    const p = dropPatch(task, col);
    if (!p) return;
    setBoardError(null);
    try {
      await api.patchTask(task.id, p);
      toast(`${task.id} → ${STATUS_LABEL[col]}`);
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) reportError(err);
      else setBoardError(err as Error);
    }
    tasks.reload();
  };

  const empty = !tasks.loading && !tasks.error && (tasks.data ?? []).length === 0;

  return (
    <div class="tasks-view">
      <div class="toolbar">
        <h1>Tasks</h1>
        <div class="seg" role="group" aria-label="Layout">
          <button type="button" aria-pressed={view === 'board'} onClick={() => setView('board')} data-testid="view-board">
            Board
          </button>
          <button type="button" aria-pressed={view === 'list'} onClick={() => setView('list')} data-testid="view-list">
            List
          </button>
        </div>
        <label class="sr-only" for="task-filter">
          Filter tasks
        </label>
        <input id="task-filter" type="search" placeholder="Filter by id, title, label, assignee" value={filter} onInput={(e) => setFilter((e.target as HTMLInputElement).value)} />
        <span class="spacer" />
        <button type="button" class="primary" onClick={() => setEditing('new')} data-testid="new-task">
          New task
        </button>
      </div>
      <ErrorNote error={tasks.error} />
      {boardError && (
        <div class="error-note" role="alert" data-testid="board-error">
          {boardError instanceof ApiError && <code class="code">{boardError.code}</code>} {boardError.message}
          <button type="button" class="icon" aria-label="Dismiss" onClick={() => setBoardError(null)}>
            ×
          </button>
        </div>
      )}
      {empty ? (
        <Empty title="No tasks yet" testid="tasks-empty">
          <p>
            Create one with <b>New task</b>, from a terminal with <code>tether task add "…"</code>, or let an agent in
            Cursor call <code>task_create</code>. Drag cards between columns to change their status.
          </p>
        </Empty>
      ) : view === 'board' ? (
        <div class="board" data-testid="board">
          {COLUMNS.map((c) => (
            <section
              key={c.id}
              class={`column${dragOver === c.id ? ' over' : ''}`}
              aria-label={c.label}
              data-testid={`column-${c.id}`}
              data-status={c.id}
              onDragOver={(e) => {
                if (e.dataTransfer?.types.includes(DRAG_MIME)) {
                  e.preventDefault();
                  e.dataTransfer.dropEffect = 'move';
                  if (dragOver !== c.id) setDragOver(c.id);
                }
              }}
              onDragLeave={(e) => {
                if (!(e.currentTarget as HTMLElement).contains(e.relatedTarget as Node)) setDragOver(null);
              }}
              onDrop={(e) => onDrop(e, c.id)}
            >
              <header class="column-head">
                <h2>{c.label}</h2>
                <span class="count">{cols[c.id].length}</span>
              </header>
              <div class="cards">
                {cols[c.id].map((t) => (
                  <TaskCard key={t.id} t={t} open={open} active={t.id === route.id} />
                ))}
              </div>
            </section>
          ))}
        </div>
      ) : (
        <TaskTable tasks={[...shown].sort((a, b) => taskNum(a.id) - taskNum(b.id))} open={open} activeId={route.id} />
      )}
      {route.id && (
        <TaskDetailPane
          id={route.id}
          agents={agents.data ?? []}
          allTasks={tasks.data ?? []}
          onClose={() => navigate('tasks', undefined, view === 'list' ? { view } : undefined)}
          onEdit={(t) => setEditing(t)}
          onChanged={tasks.reload}
        />
      )}
      <TaskDialog
        task={editing}
        allTasks={tasks.data ?? []}
        onClose={() => setEditing(null)}
        onSaved={(t) => {
          setEditing(null);
          tasks.reload();
          open(t.id);
        }}
      />
    </div>
  );
}

function TaskCard({ t, open, active }: { t: Task; open: (id: string) => void; active: boolean }) {
  return (
    <article
      class={`card prio-${t.priority}${t.status === 'cancelled' ? ' cancelled' : ''}${active ? ' active' : ''}`}
      draggable
      data-testid="task-card"
      data-id={t.id}
      data-status={t.status}
      onDragStart={(e) => {
        e.dataTransfer!.setData(DRAG_MIME, t.id);
        e.dataTransfer!.setData('text/plain', t.id);
        e.dataTransfer!.effectAllowed = 'move';
      }}
    >
      <button type="button" class="card-open" onClick={() => open(t.id)} aria-label={`Open ${t.id}: ${t.title}`}>
        <span class="card-id">{t.id}</span>
        <span class="card-title">{t.title}</span>
      </button>
      {(t.status === 'todo' || t.status === 'blocked') && (
        <button
          type="button"
          class="icon card-run"
          title="Run with Cursor agent"
          aria-label={`Run ${t.id} with Cursor agent`}
          onClick={() => navigate('runs', undefined, { new: '1', task: t.id })}
          data-testid="card-run"
        >
          ▶
        </button>
      )}
      <div class="card-meta">
        <span class={`prio prio-${t.priority}`}>{t.priority}</span>
        {t.status === 'cancelled' && <span class="badge">cancelled</span>}
        {t.assignee && <span class="assignee" title="assignee">@{t.assignee}</span>}
        {t.role && <span class="muted">{t.role}</span>}
        {t.blocked_by.length > 0 && (
          <span class="waiting" title={`waiting on ${t.blocked_by.join(', ')}`}>
            waits on {t.blocked_by.join(', ')}
          </span>
        )}
        {t.lease_expired && <span class="badge warn">lease expired</span>}
      </div>
      {t.labels.length > 0 && (
        <div class="card-labels">
          {t.labels.map((l) => (
            <span class="tag-mini" key={l}>
              {l}
            </span>
          ))}
        </div>
      )}
    </article>
  );
}

function TaskTable({ tasks, open, activeId }: { tasks: Task[]; open: (id: string) => void; activeId?: string }) {
  return (
    <div class="table-wrap">
      <table class="table" data-testid="task-table">
        <thead>
          <tr>
            <th>Id</th>
            <th>Title</th>
            <th>Status</th>
            <th>Priority</th>
            <th>Assignee</th>
            <th>Labels</th>
            <th>Updated</th>
          </tr>
        </thead>
        <tbody>
          {tasks.map((t) => (
            <tr key={t.id} class={t.id === activeId ? 'active' : ''} data-testid="task-row" data-id={t.id}>
              <td>
                <button type="button" class="link" onClick={() => open(t.id)}>
                  {t.id}
                </button>
              </td>
              <td>{t.title}</td>
              <td>
                <span class={`status st-${t.status}`}>{STATUS_LABEL[t.status]}</span>
              </td>
              <td>
                <span class={`prio prio-${t.priority}`}>{t.priority}</span>
              </td>
              <td>{t.assignee ?? <span class="muted">—</span>}</td>
              <td>{t.labels.join(', ')}</td>
              <td class="muted">{ago(t.updated_at)}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function describeEvent(e: TaskEvent): string {
  const d = (e.detail ?? {}) as Record<string, unknown>;
  switch (e.kind) {
    case 'created':
      return `created it`;
    case 'claimed':
      return d.lease_until ? `claimed it (lease until ${dateTime(String(d.lease_until))})` : 'claimed it';
    case 'assigned':
      return d.assignee ? `assigned it to ${d.assignee}` : 'unassigned it';
    case 'released':
      return 'released it';
    case 'lease_expired':
      return `found ${d.holder}'s lease expired`;
    case 'comment':
    case 'handoff':
      return String(d.text ?? '');
    default:
      if ('from' in d && 'to' in d) return `${e.kind}: ${d.from} → ${d.to}${d.summary ? ` (${d.summary})` : ''}`;
      return `${e.kind}${Object.keys(d).length ? `: ${JSON.stringify(d)}` : ''}`;
  }
}

function TaskDetailPane(props: {
  id: string;
  agents: Agent[];
  allTasks: Task[];
  onClose: () => void;
  onEdit: (t: Task) => void;
  onChanged: () => void;
}) {
  const { id } = props;
  const detail = useAsync(() => api.task(id), [id]);
  const [comment, setComment] = useState('');
  const [handoff, setHandoff] = useState(false);
  const [person, setPerson] = useState('');
  const [err, setErr] = useState<Error | null>(null);
  useLive(['tasks'], () => detail.reload());
  useEffect(() => setErr(null), [id]);

  const act = async (f: () => Promise<unknown>, ok?: string) => {
    setErr(null);
    try {
      await f();
      if (ok) toast(ok);
      detail.reload();
      props.onChanged();
      return true;
    } catch (e) {
      if (e instanceof ApiError && e.status === 401) reportError(e);
      else setErr(e as Error);
      return false;
    }
  };
  const patch = (p: TaskPatch, ok?: string) => act(() => api.patchTask(id, p), ok);

  const t: TaskDetail | undefined = detail.data;
  return (
    <aside class="task-detail" aria-label={`Task ${id}`} data-testid="task-detail" data-id={id}>
      <header class="detail-head">
        <h2>
          <span class="card-id">{id}</span> {t?.title}
        </h2>
        <button type="button" class="link small" onClick={() => navigate('runs', undefined, { new: '1', task: id })} data-testid="task-run">
          Run with Cursor agent
        </button>
        <button type="button" class="icon" aria-label="Close task" onClick={props.onClose} data-testid="task-detail-close">
          ×
        </button>
      </header>
      <ErrorNote error={detail.error} />
      <ErrorNote error={err} testid="task-error" />
      {t && (
        <div class="detail-body">
          <div class="kv">
            <label>
              Status
              <select value={t.status} onChange={(e) => patch({ status: (e.target as HTMLSelectElement).value as Status })} data-testid="task-status">
                {ALL_STATUSES.map((s) => (
                  <option key={s} value={s}>
                    {STATUS_LABEL[s]}
                  </option>
                ))}
              </select>
            </label>
            <div>
              <span class="k">Priority</span> <span class={`prio prio-${t.priority}`}>{t.priority}</span>
            </div>
            <div>
              <span class="k">Assignee</span> {t.assignee ?? '—'}
              {t.lease_until && <span class="muted small"> (lease {t.lease_expired ? 'expired' : `until ${dateTime(t.lease_until)}`})</span>}
            </div>
            {t.role && (
              <div>
                <span class="k">Role</span> {t.role}
              </div>
            )}
            {t.project && (
              <div>
                <span class="k">Project</span> <span class="small">{t.project}</span>
              </div>
            )}
            {t.labels.length > 0 && (
              <div>
                <span class="k">Labels</span> {t.labels.join(', ')}
              </div>
            )}
            <TaskBudget id={id} t={t} onSaved={() => detail.reload()} />
            {t.depends_on.length > 0 && (
              <div>
                <span class="k">Depends on</span>{' '}
                {t.depends_on.map((d) => (
                  <button key={d} type="button" class="link" onClick={() => navigate('tasks', d)}>
                    {d}
                    {t.blocked_by.includes(d) ? ' (open)' : ''}
                  </button>
                ))}
              </div>
            )}
            <div class="muted small">
              created by {t.created_by} {ago(t.created_at)} · updated {ago(t.updated_at)}
            </div>
          </div>
          <div class="actions wrap">
            <button type="button" onClick={() => props.onEdit(t)} data-testid="task-edit">
              Edit
            </button>
            <button type="button" onClick={() => act(() => api.claimTask(id), `Claimed ${id}`)} data-testid="task-claim">
              Claim
            </button>
            {t.assignee && (
              <button type="button" onClick={() => patch({ release: true }, `Released ${id}`)} data-testid="task-release">
                Release
              </button>
            )}
            {t.status !== 'done' && (
              <button type="button" onClick={() => patch({ status: 'done' }, `${id} done`)} data-testid="task-done">
                Mark done
              </button>
            )}
          </div>
          <form
            class="assign"
            onSubmit={(e) => {
              e.preventDefault();
              if (person.trim()) patch({ assignee: person.trim() }, `Assigned to ${person.trim()}`).then((ok) => ok && setPerson(''));
            }}
          >
            <label>
              Assign to agent
              <select
                value=""
                onChange={(e) => {
                  const v = (e.target as HTMLSelectElement).value;
                  if (v === '__unassign__') patch({ assignee: '' }, 'Unassigned');
                  else if (v) patch({ assignee: v }, `Assigned to ${v}`);
                }}
                data-testid="task-assign-agent"
              >
                <option value="">Choose…</option>
                {props.agents
                  .filter((a) => a.status !== 'ended')
                  .map((a) => (
                    <option key={a.id} value={a.name}>
                      {a.name} ({a.status}
                      {a.role ? `, ${a.role}` : ''})
                    </option>
                  ))}
                {t.assignee && <option value={'__unassign__'}>Unassign</option>}
              </select>
            </label>
            <label>
              or a person
              <input type="text" value={person} placeholder="name" onInput={(e) => setPerson((e.target as HTMLInputElement).value)} data-testid="task-assign-person" />
            </label>
            <button type="submit">Assign</button>
          </form>
          {t.description && <SafeHtml class="md desc" html={renderMarkdown(t.description)} />}
          {t.acceptance.length > 0 && (
            <>
              <h3>Acceptance</h3>
              <ul class="acceptance">
                {t.acceptance.map((a, i) => (
                  <li key={i}>{a}</li>
                ))}
              </ul>
            </>
          )}
          {t.summary && (
            <>
              <h3>Summary</h3>
              <p>{t.summary}</p>
            </>
          )}
          <h3>Notes</h3>
          {t.notes.length === 0 && <p class="muted small">No comments or handoff notes yet.</p>}
          <ul class="notes" data-testid="task-notes">
            {t.notes.map((n, i) => (
              <li key={i} class={n.kind}>
                <div class="muted small">
                  {n.kind === 'handoff' ? 'Handoff' : 'Comment'} by <b>{n.actor}</b> · {ago(n.at)}
                </div>
                <div class="note-text">{describeEvent(n)}</div>
              </li>
            ))}
          </ul>
          <form
            class="comment"
            onSubmit={(e) => {
              e.preventDefault();
              if (!comment.trim()) return;
              patch({ comment: comment.trim(), handoff: handoff || undefined }, handoff ? 'Handoff note added' : 'Comment added').then((ok) => {
                if (ok) {
                  setComment('');
                  setHandoff(false);
                }
              });
            }}
          >
            <label class="sr-only" for="task-comment">
              Comment
            </label>
            <textarea id="task-comment" rows={3} placeholder="Add a comment…" value={comment} onInput={(e) => setComment((e.target as HTMLTextAreaElement).value)} data-testid="task-comment" />
            <div class="actions">
              <label class="check">
                <input type="checkbox" checked={handoff} onChange={(e) => setHandoff((e.target as HTMLInputElement).checked)} data-testid="task-handoff" />
                Handoff note (for the next agent)
              </label>
              <button type="submit" data-testid="task-comment-submit">
                Add
              </button>
            </div>
          </form>
          <h3>History</h3>
          <ol class="history" data-testid="task-history">
            {t.history.map((h, i) => (
              <li key={i}>
                <span class="muted small">{dateTime(h.at)}</span> <b>{h.actor}</b> {describeEvent(h)}
              </li>
            ))}
          </ol>
        </div>
      )}
    </aside>
  );
}

function TaskDialog(props: { task: Task | 'new' | null; allTasks: Task[]; onClose: () => void; onSaved: (t: Task) => void }) {
  const t = props.task === 'new' ? null : props.task;
  const [title, setTitle] = useState('');
  const [description, setDescription] = useState('');
  const [priority, setPriority] = useState<Priority>('medium');
  const [role, setRole] = useState('');
  const [labels, setLabels] = useState('');
  const [deps, setDeps] = useState('');
  const [acceptance, setAcceptance] = useState('');
  const [err, setErr] = useState<Error | null>(null);
  const [busy, setBusy] = useState(false);

  useEffect(() => {
    setErr(null);
    setTitle(t?.title ?? '');
    setDescription(t?.description ?? '');
    setPriority((t?.priority ?? 'medium') as Priority);
    setRole(t?.role ?? '');
    setLabels(t?.labels.join(', ') ?? '');
    setDeps(t?.depends_on.join(', ') ?? '');
    setAcceptance(t?.acceptance.join('\n') ?? '');
  }, [props.task]);

  const submit = async (e: Event) => {
    e.preventDefault();
    if (!title.trim()) {
      setErr(new Error('A task needs a title.'));
      return;
    }
    setBusy(true);
    setErr(null);
    const L = splitList(labels);
    const D = splitList(deps, /[,\s]+/).map((d) => (/^\d+$/.test(d) ? `T-${d}` : d.toUpperCase()));
    const A = splitList(acceptance, /\n/);
    try {
      let saved: Task;
      if (!t) {
        const nt: NewTask = { title: title.trim(), priority };
        if (description.trim()) nt.description = description;
        if (role.trim()) nt.role = role.trim();
        if (L.length) nt.labels = L;
        if (D.length) nt.depends_on = D;
        if (A.length) nt.acceptance = A;
        saved = await api.createTask(nt);
        toast(`Created ${saved.id}`);
      } else {
        const p: TaskPatch = {};
        if (title.trim() !== t.title) p.title = title.trim();
        if (description !== t.description) p.description = description;
        if (priority !== t.priority) p.priority = priority;
        if (role.trim() !== (t.role ?? '')) p.role = role.trim();
        const addL = L.filter((x) => !t.labels.includes(x));
        const remL = t.labels.filter((x) => !L.includes(x));
        if (addL.length) p.add_labels = addL;
        if (remL.length) p.remove_labels = remL;
        const addD = D.filter((x) => !t.depends_on.includes(x));
        const remD = t.depends_on.filter((x) => !D.includes(x));
        if (addD.length) p.add_depends_on = addD;
        if (remD.length) p.remove_depends_on = remD;
        if (A.join('\n') !== t.acceptance.join('\n')) p.acceptance = A;
        saved = Object.keys(p).length ? await api.patchTask(t.id, p) : t;
        toast(`Saved ${saved.id}`);
      }
      props.onSaved(saved);
    } catch (e2) {
      if (e2 instanceof ApiError && e2.status === 401) reportError(e2);
      setErr(e2 as Error);
    } finally {
      setBusy(false);
    }
  };

  const others = props.allTasks.filter((x) => x.id !== t?.id).slice(0, 200);
  return (
    <Dialog open={props.task !== null} title={t ? `Edit ${t.id}` : 'New task'} onClose={props.onClose} testid="task-dialog" wide>
      <form class="form" onSubmit={submit}>
        <label>
          Title
          <input type="text" value={title} onInput={(e) => setTitle((e.target as HTMLInputElement).value)} required data-testid="task-title" autoFocus />
        </label>
        <label>
          Description (Markdown)
          <textarea rows={5} value={description} onInput={(e) => setDescription((e.target as HTMLTextAreaElement).value)} data-testid="task-description" />
        </label>
        <div class="form-row">
          <label>
            Priority
            <select value={priority} onChange={(e) => setPriority((e.target as HTMLSelectElement).value as Priority)} data-testid="task-priority">
              {PRIORITIES.map((p) => (
                <option key={p} value={p}>
                  {p}
                </option>
              ))}
            </select>
          </label>
          <label>
            Role
            <input type="text" value={role} placeholder="dev, reviewer…" onInput={(e) => setRole((e.target as HTMLInputElement).value)} data-testid="task-role" />
          </label>
        </div>
        <label>
          Labels (comma-separated)
          <input type="text" value={labels} onInput={(e) => setLabels((e.target as HTMLInputElement).value)} data-testid="task-labels" />
        </label>
        <label>
          Depends on (task ids, comma-separated)
          <input type="text" value={deps} list="task-ids" placeholder="T-1, T-2" onInput={(e) => setDeps((e.target as HTMLInputElement).value)} data-testid="task-deps" />
          <datalist id="task-ids">
            {others.map((o) => (
              <option key={o.id} value={o.id}>
                {o.title}
              </option>
            ))}
          </datalist>
        </label>
        <label>
          Acceptance criteria (one per line)
          <textarea rows={3} value={acceptance} onInput={(e) => setAcceptance((e.target as HTMLTextAreaElement).value)} data-testid="task-acceptance" />
        </label>
        <ErrorNote error={err} testid="task-dialog-error" />
        <div class="actions">
          <button type="button" onClick={props.onClose}>
            Cancel
          </button>
          <button type="submit" class="primary" disabled={busy} data-testid="task-save">
            {t ? 'Save' : 'Create task'}
          </button>
        </div>
      </form>
    </Dialog>
  );
}

/** A task's budget over all its runs, what they spent (tokens), and a field to change it. */
function TaskBudget({ id, t, onSaved }: { id: string; t: TaskDetail; onSaved: () => void }) {
  const [editing, setEditing] = useState(false);
  const [value, setValue] = useState(t.budget ?? '');
  const share = budgetShare(t.budget, t.spent_tokens ?? null);
  const save = (e: Event) => {
    e.preventDefault();
    api.setTaskBudget(id, value.trim() || null).then(
      (r) => (setEditing(false), toast(r.budget ? `${id}'s budget is ${r.budget}` : `${id} has no budget`), onSaved()),
      (err) => reportError(err, 'Budget not saved'),
    );
  };
  return (
    <div data-testid="task-budget">
      <span class="k">Budget</span> {t.budget ?? '—'}
      {share !== null && <BudgetBar share={share} testid="task-budget-bar" />}
      <span class="muted small">
        {' '}
        {t.spent_tokens !== undefined && t.spent_tokens !== null ? `${t.spent_tokens.toLocaleString()} tokens spent by its runs` : 'no tokens reported by its runs'}
      </span>{' '}
      {editing ? (
        <form class="inline" onSubmit={save}>
          <input type="text" value={value} placeholder="500k or $5; empty clears" onInput={(e) => setValue((e.target as HTMLInputElement).value)} data-testid="task-budget-input" />
          <button type="submit">Save</button>
        </form>
      ) : (
        <button type="button" class="link" onClick={() => setEditing(true)} data-testid="task-budget-edit">
          {t.budget ? 'change' : 'set'}
        </button>
      )}
    </div>
  );
}

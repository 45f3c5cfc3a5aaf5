// Agent runs of the Cursor CLI: the list, a form to start one (prompt or task, workspace limited
// to the allowed roots, model, mode, role, time limit, permissions), and one run's live stream
// rendered like a chat (tool calls folded, commands and edits readable), with cancel, follow-up
// and links to its task and its Cursor chat. #/runs/R-3 opens a run; #/runs?new=1&task=T-3 opens
// the form for a task (the board's "Run with Cursor agent").

import { useEffect, useMemo, useRef, useState } from 'preact/hooks';

import { api } from '../api';
import { Dialog, Empty, ErrorNote, SafeHtml } from '../components';
import { followRun } from '../events';
import { RunChanges } from './changes';
import { navigate, reportError, toast, useAsync, useLive, useSettled, useTicker } from '../hooks';
import { renderMarkdown } from '../markdown';
import type { Route } from '../router';
import type { NewRun, Run, RunMode, RunOptions, StoredEvent, Task } from '../types';
import { ago, dateTime, shortPath } from '../util';
import { BudgetBar, budgetShare } from '../budget';

/** Where a run works: its folder, or a cloud run's repository. */
export function runPlace(r: Run): string {
  if (r.cloud) return `☁ ${r.cloud.repo.replace(/^https:\/\//, '')}`;
  return shortPath(r.workspace);
}

const TERMINAL = ['succeeded', 'failed', 'timed_out', 'cancelled', 'lost', 'over_budget'];

export function isTerminal(status: string): boolean {
  return TERMINAL.includes(status);
}

/** Permission presets the form offers, in Cursor's token syntax. */
export const PRESETS: { id: string; label: string; tokens: string[] }[] = [
  { id: 'write', label: 'Edit files', tokens: ['Write(**)'] },
  { id: 'shell', label: 'Run commands', tokens: ['Shell(*)'] },
  { id: 'web', label: 'Fetch web pages', tokens: ['WebFetch(*)'] },
];

/** The permissions a form asks for: the presets ticked plus the tokens typed (one per line). */
export function permissionsFrom(ticked: string[], extraAllow: string, extraDeny: string) {
  const lines = (s: string) => s.split(/[\n,]/).map((x) => x.trim()).filter(Boolean);
  const allow = [...PRESETS.filter((p) => ticked.includes(p.id)).flatMap((p) => p.tokens), ...lines(extraAllow)];
  return { allow: [...new Set(allow)], deny: [...new Set(lines(extraDeny))] };
}

/** One tool call, started and completed, as the reader shows it. */
export interface ToolView {
  kind: 'tool';
  call_id: string;
  tool: string;
  what: string;
  outcome: string | null;
  args: unknown;
  result: unknown;
}
export type Item =
  | { kind: 'text'; role: 'user' | 'assistant'; text: string }
  | { kind: 'thinking'; text: string }
  | ToolView
  | { kind: 'line'; tone: 'status' | 'stderr' | 'raw' | 'notice' | 'result'; text: string };

/** Folds a run's events into what a person reads: assistant deltas joined, a tool call's start
 * and end in one item, thinking in one fold per stretch. */
export function foldEvents(events: StoredEvent[]): Item[] {
  const out: Item[] = [];
  const calls = new Map<string, ToolView>();
  for (const e of events) {
    const last = out[out.length - 1];
    switch (e.kind) {
      case 'user':
        out.push({ kind: 'text', role: 'user', text: e.text });
        break;
      case 'assistant':
        if (e.partial && last?.kind === 'text' && last.role === 'assistant') last.text += e.text;
        else out.push({ kind: 'text', role: 'assistant', text: e.text });
        break;
      case 'thinking':
        if (last?.kind === 'thinking') last.text += e.text ?? '';
        else if (!e.done) out.push({ kind: 'thinking', text: e.text ?? '' });
        break;
      case 'tool_call': {
        const known = calls.get(e.call_id);
        const what = e.command ?? e.path ?? '';
        if (known) {
          known.outcome = e.outcome ?? known.outcome;
          known.result = e.result;
          if (!known.what && what) known.what = what;
        } else {
          const v: ToolView = { kind: 'tool', call_id: e.call_id, tool: e.tool, what, outcome: e.outcome, args: e.args, result: e.result };
          calls.set(e.call_id, v);
          out.push(v);
        }
        break;
      }
      case 'result':
        out.push({ kind: 'line', tone: 'result', text: e.is_error ? 'The agent reported an error.' : `Done${e.duration_ms != null ? ` in ${(e.duration_ms / 1000).toFixed(1)} s` : ''}.` });
        break;
      case 'init':
        // Cursor's cloud agent ids are `bc-<uuid>`; the CLI's chats are bare uuids.
        const what = e.session_id.startsWith('bc-') ? 'Cursor Cloud agent' : 'Cursor chat';
        out.push({ kind: 'line', tone: 'status', text: `${what} ${e.session_id}${e.model ? ` · ${e.model}` : ''}` });
        break;
      case 'status':
        out.push({ kind: 'line', tone: 'status', text: `${e.status}${e.message ? `: ${e.message}` : ''}` });
        break;
      case 'stderr':
        out.push({ kind: 'line', tone: 'stderr', text: e.text });
        break;
      case 'raw':
        out.push({ kind: 'line', tone: 'raw', text: e.text });
        break;
      case 'notice':
        out.push({ kind: 'line', tone: 'notice', text: e.text });
        break;
    }
  }
  return out;
}

export function RunsView({ route }: { route: Route }) {
  const runs = useAsync(() => api.runs({ limit: 300 }), []);
  useLive(['runs'], () => runs.reload());
  useTicker(20_000);
  const [formOpen, setFormOpen] = useState(route.params.new === '1');
  useEffect(() => setFormOpen(route.params.new === '1'), [route.params.new]);
  const closeForm = () => navigate('runs', route.id);
  const list = runs.data ?? [];
  return (
    <div class="split runs" data-testid="runs">
      <section class="pane list-pane">
        <div class="filters">
          <div class="filter-row">
            <b>Runs</b>
            <span class="spacer" />
            <button type="button" class="primary" onClick={() => navigate('runs', route.id, { new: '1' })} data-testid="run-new">
              New run
            </button>
          </div>
          <div class="list-meta">
            {list.filter((r) => r.status === 'running').length} running · {list.filter((r) => r.status === 'queued').length} queued
          </div>
        </div>
        <ErrorNote error={runs.error} />
        <div class="vlist">
          {runs.data && list.length === 0 && (
            <Empty title="No runs yet" testid="runs-empty">
              <p>Start the Cursor CLI agent on a prompt or a task with <b>New run</b>, or from a task’s card on the board.</p>
            </Empty>
          )}
          {list.map((r) => (
            <button
              key={r.id}
              type="button"
              class={`row run-row ${route.id === r.id ? 'open' : ''}`}
              onClick={() => navigate('runs', r.id)}
              data-testid="run-row"
              data-id={r.id}
              data-status={r.status}
            >
              <span class="row-title">
                <span class={`run-status st-${r.status}`}>{r.status.replace('_', ' ')}</span>
                <span class="title-text">{r.prompt.split('\n')[0]}</span>
                <span class="row-time">{ago(r.started_at ?? r.created_at)}</span>
              </span>
              <span class="row-sub">
                {r.id} · {runPlace(r)}
                {r.task ? ` · ${r.task}` : ''}
                {r.model ? ` · ${r.model}` : ''}
              </span>
            </button>
          ))}
        </div>
      </section>
      <section class="pane reader-pane">
        {route.id ? <RunDetailPane key={route.id} id={route.id} /> : <Empty title="Pick a run">Its events appear here live.</Empty>}
      </section>
      <RunForm open={formOpen} taskId={route.params.task} onClose={closeForm} onStarted={(r) => navigate('runs', r.id)} />
    </div>
  );
}

/** Events a run view keeps in memory while following a live run; older ones are paged in on demand. */
const KEEP_EVENTS = 5000;
/** Items of a run's log in the page in the first frame of its open. */
const FIRST_ITEMS = 30;

function RunDetailPane({ id }: { id: string }) {
  const [run, setRun] = useState<Run | null>(null);
  const [events, setEvents] = useState<StoredEvent[]>([]);
  const [loadingEarlier, setLoadingEarlier] = useState(false);
  const [err, setErr] = useState<Error | null>(null);
  const [followup, setFollowup] = useState('');
  const [tab, setTab] = useState<'log' | 'changes'>(() => (location.hash.includes('tab=changes') ? 'changes' : 'log'));
  const bottom = useRef<HTMLDivElement>(null);
  const reload = () => api.run(id, 0).then((d) => setRun(d), setErr);
  useEffect(() => {
    let stop: (() => void) | null = null;
    let cancelled = false;
    api.run(id).then(
      (d) => {
        if (cancelled) return;
        setRun(d);
        setEvents(d.events);
        const last = d.events.length ? d.events[d.events.length - 1].seq : 0;
        stop = followRun(id, last, {
          events: (evs) =>
            setEvents((cur) => {
              const next = [...cur, ...(evs as StoredEvent[]).filter((e) => !cur.length || e.seq > cur[cur.length - 1].seq)];
              return next.length > KEEP_EVENTS ? next.slice(next.length - KEEP_EVENTS) : next;
            }),
          status: () => reload(),
        });
      },
      (e) => setErr(e),
    );
    return () => {
      cancelled = true;
      stop?.();
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [id]);
  // The log's last items are put in the page at once, the rest of it a frame later: rendering
  // its 500 events was most of a run's open, and the view shows its end.
  const settled = useSettled(!!run, [id]);
  useEffect(() => {
    bottom.current?.scrollIntoView({ block: 'end' });
  }, [events.length, settled]);
  const items = useMemo(() => foldEvents(events), [events]);
  const from = settled ? 0 : Math.max(0, items.length - FIRST_ITEMS);
  if (err) return <ErrorNote error={err} />;
  if (!run) return <div class="reader loading">Loading…</div>;
  const live = !isTerminal(run.status);
  const cancel = () => api.cancelRun(run.id).then((r) => (setRun(r), toast(`${r.id}: stopping`)), (e) => reportError(e, 'Cancel failed'));
  const approve = () => api.approveRun(run.id).then((r) => (setRun(r), toast(`${r.id}: approved`)), (e) => reportError(e, 'Approval failed'));
  const firstSeq = events.length ? events[0].seq : 0;
  const earlier = firstSeq > 1 ? firstSeq - 1 : 0;
  const loadEarlier = () => {
    setLoadingEarlier(true);
    api.run(run.id, 500, firstSeq).then(
      (d) => {
        setEvents((cur) => [...d.events.filter((e) => !cur.length || e.seq < cur[0].seq), ...cur]);
        setLoadingEarlier(false);
      },
      (e) => (setLoadingEarlier(false), reportError(e, 'Could not load earlier events')),
    );
  };
  const sendFollowup = (e: Event) => {
    e.preventDefault();
    if (!followup.trim()) return;
    api.followupRun(run.id, followup).then(
      (r) => {
        setFollowup('');
        navigate('runs', r.id);
      },
      (e2) => reportError(e2, 'Follow-up not started'),
    );
  };
  return (
    <div class="reader" data-testid="run-detail" data-id={run.id} data-status={run.status}>
      <div class="reader-head">
        <div class="reader-title-row">
          <span class={`run-status st-${run.status}`} data-testid="run-status">
            {run.status.replace('_', ' ')}
          </span>
          <h2>{run.id}</h2>
          <span class="spacer" />
          {run.held && run.held !== 'daily' && (
            <button type="button" class="primary" onClick={approve} data-testid="run-approve">
              Approve
            </button>
          )}
          {live && (
            <button type="button" class="danger" onClick={cancel} disabled={run.cancel_requested} data-testid="run-cancel">
              {run.cancel_requested ? 'Stopping…' : 'Cancel'}
            </button>
          )}
        </div>
        <div class="meta-line muted small">
          <span title={run.cloud?.repo ?? run.workspace ?? ''} data-testid="run-place">
            {runPlace(run)}
          </span>{' '}
          · {run.mode}
          {run.model ? ` · ${run.model}` : ''}
          {run.role ? ` · role ${run.role}` : ''} · started {dateTime(run.started_at ?? run.created_at)} by {run.requested_by}
          {run.origin && (
            <span data-testid="run-machine">
              {' '}
              · {run.machine ? `on ${run.machine}` : run.on ? `for ${run.on}` : run.labels?.length ? `for a runner with ${run.labels.join(', ')}` : 'for any runner'}
              {run.origin !== (run.machine ?? run.on) ? ` (queued on ${run.origin})` : ''}
            </span>
          )}
        </div>
        <RunSpend run={run} />
        <div class="meta-line small run-links">
          {run.task && (
            <button type="button" class="link" onClick={() => navigate('tasks', run.task!)} data-testid="run-task">
              task {run.task}
            </button>
          )}
          {run.chat_id && (
            <button type="button" class="link" onClick={() => navigate('sessions', run.chat_id!)} data-testid="run-chat">
              {run.cloud ? 'Cloud agent chat' : 'Cursor chat'} {run.chat_id.slice(0, run.cloud ? 11 : 8)}
            </button>
          )}
          {run.cloud?.agent_url && (
            <a href={run.cloud.agent_url} target="_blank" rel="noreferrer" data-testid="run-agent-url">
              at Cursor
            </a>
          )}
          {run.cloud?.pushed_branch && <span class="muted" data-testid="run-branch">branch {run.cloud.pushed_branch}</span>}
          {run.cloud?.pr_url && (
            <a href={run.cloud.pr_url} target="_blank" rel="noreferrer" data-testid="run-pr">
              pull request
            </a>
          )}
          {run.cloud?.raw_status && <span class="muted">Cursor: {run.cloud.raw_status}</span>}
          {run.parent && (
            <button type="button" class="link" onClick={() => navigate('runs', run.parent!)}>
              follows up {run.parent}
            </button>
          )}
          {run.permissions.allow.length > 0 && <span class="muted">allows {run.permissions.allow.join(', ')}</span>}
        </div>
        {run.error && <div class="error-note" data-testid="run-error">{run.error}</div>}
        {run.warning && <div class="note-warn" data-testid="run-warning">{run.warning}</div>}
        {run.held && (
          <div class="note-warn" data-testid="run-held" data-held={run.held}>
            {run.held === 'budget'
              ? 'Waiting for your approval: the run before it went over its budget. Approve it to let that chain go on, or cancel it.'
              : run.held === 'daily'
                ? "Waiting for today's budget: it goes tomorrow, or when you raise usage.daily_budget in Settings."
                : 'Waiting for your approval: signals from outside this machine would wake this chat with write or shell permissions. Approve it, or cancel it.'}
          </div>
        )}
        {run.log_dropped && (
          <div class="note-warn" data-testid="run-log-dropped">
            The log keeps the first part of the output: {run.log_dropped.lines.toLocaleString()} later lines (
            {(run.log_dropped.bytes / 1048576).toFixed(1)} MiB) were counted, not kept (Settings → runs.max_log_mb).
          </div>
        )}
      </div>
      {run.worktree && (
        <div class="run-tabs" role="tablist">
          <button type="button" role="tab" class={tab === 'log' ? 'on' : ''} onClick={() => setTab('log')} data-testid="tab-log">
            Chat
          </button>
          <button type="button" role="tab" class={tab === 'changes' ? 'on' : ''} onClick={() => setTab('changes')} data-testid="tab-changes">
            Changes
            {run.changes ? ` (${run.changes.files})` : ''}
          </button>
        </div>
      )}
      {tab === 'changes' && run.worktree ? (
        <RunChanges run={run} onRun={(r) => setRun((cur) => (cur ? { ...cur, ...r } : cur))} />
      ) : (
      <div class="messages run-events" data-testid="run-events">
        {earlier > 0 && (
          <button type="button" class="link small" onClick={loadEarlier} disabled={loadingEarlier} data-testid="run-earlier">
            {loadingEarlier ? 'Loading…' : `Show earlier events (${earlier.toLocaleString()} before these)`}
          </button>
        )}
        {items.slice(from).map((it, i) => (
          <RunItem key={from + i} it={it} />
        ))}
        <div ref={bottom} />
      </div>
      )}
      {!live && run.chat_id && tab === 'log' && (
        <form class="reply followup" onSubmit={sendFollowup}>
          <input type="text" value={followup} placeholder="Follow up in the same chat…" onInput={(e) => setFollowup((e.target as HTMLInputElement).value)} data-testid="run-followup" />
          <button type="submit" class="primary" disabled={!followup.trim()} data-testid="run-followup-send">
            Follow up
          </button>
        </form>
      )}
    </div>
  );
}

function RunItem({ it }: { it: Item }) {
  switch (it.kind) {
    case 'text':
      return <RunText role={it.role} text={it.text} />;
    case 'thinking':
      return (
        <details class="msg">
          <summary>thinking</summary>
          <pre>{it.text || '…'}</pre>
        </details>
      );
    case 'tool':
      return <ToolItem t={it} />;
    case 'line':
      return <div class={`run-line tone-${it.tone}`}>{it.text}</div>;
  }
}

/** A message of the run's chat. A live run's log is drawn again at each event: the messages
 * already there keep their HTML. */
function RunText({ role, text }: { role: string; text: string }) {
  const html = useMemo(() => renderMarkdown(text), [text]);
  return (
    <div class={`msg ${role}`} data-testid={`run-${role}`}>
      <div class="msg-head muted">
        <span class="role">{role === 'user' ? 'prompt' : 'agent'}</span>
      </div>
      <SafeHtml class="md" html={html} />
    </div>
  );
}

/** A tool call folded to one line; open it for the command's output or the edit's diff. */
function ToolItem({ t }: { t: ToolView }) {
  const ok = t.outcome === 'success';
  const detail = toolDetail(t);
  return (
    <details class={`msg tool ${t.outcome ?? 'pending'}`} data-testid="run-tool" data-tool={t.tool}>
      <summary>
        <span class={ok ? 'ok' : t.outcome ? 'bad' : 'muted'}>{ok ? '✓' : t.outcome ? '✗' : '…'}</span> <b>{t.tool}</b> <code>{t.what}</code>
        {t.outcome && !ok && <span class="muted"> ({t.outcome})</span>}
      </summary>
      {detail}
    </details>
  );
}

function toolDetail(t: ToolView) {
  const a = (t.args ?? {}) as Record<string, unknown>;
  const r = (t.result ?? {}) as Record<string, Record<string, unknown>>;
  const success = r.success ?? {};
  const rejected = r.rejected;
  if (t.tool === 'edit') {
    const sr = (a.strReplace ?? {}) as { oldText?: string; newText?: string };
    if (sr.oldText !== undefined || sr.newText !== undefined) {
      const lines = [...(sr.oldText ?? '').split('\n').map((l) => `- ${l}`), ...(sr.newText ?? '').split('\n').map((l) => `+ ${l}`)];
      return <pre class="diff">{lines.join('\n')}</pre>;
    }
  }
  if (t.tool === 'shell') {
    if (rejected) return <p class="muted small">Rejected: {String((rejected as Record<string, unknown>).reason ?? 'not allowed')}. Allow it with a Shell(…) permission.</p>;
    const out = [success.stdout, success.stderr].filter((x) => typeof x === 'string' && x).join('\n');
    return <pre>{`$ ${t.what}\n${out}${success.exitCode !== undefined ? `\n(exit ${String(success.exitCode)})` : ''}`}</pre>;
  }
  return <pre>{JSON.stringify({ args: t.args, result: t.result }, null, 2)}</pre>;
}

function RunForm(props: { open: boolean; taskId?: string; onClose: () => void; onStarted: (r: Run) => void }) {
  const opts = useAsync<RunOptions | undefined>(() => (props.open ? api.runOptions() : Promise.resolve(undefined)), [props.open]);
  const tasks = useAsync<Task[]>(() => (props.open ? api.tasks({ status: ['todo', 'in_progress', 'blocked'] }) : Promise.resolve([])), [props.open]);
  const [prompt, setPrompt] = useState('');
  const [task, setTask] = useState(props.taskId ?? '');
  const [workspace, setWorkspace] = useState('');
  const [model, setModel] = useState('');
  const [mode, setMode] = useState<RunMode>('agent');
  const [role, setRole] = useState('');
  const [minutes, setMinutes] = useState('');
  const [budget, setBudget] = useState('');
  const [ticked, setTicked] = useState<string[]>([]);
  const [allow, setAllow] = useState('');
  const [deny, setDeny] = useState('');
  const [complete, setComplete] = useState(false);
  const [where, setWhere] = useState<'local' | 'cloud'>('local');
  const [repo, setRepo] = useState('');
  const [gitRef, setGitRef] = useState('');
  const [autoPr, setAutoPr] = useState(false);
  const [busy, setBusy] = useState(false);
  const [err, setErr] = useState<Error | null>(null);
  useEffect(() => setTask(props.taskId ?? ''), [props.taskId, props.open]);
  const chosenTask = (tasks.data ?? []).find((t) => t.id === task);
  useEffect(() => {
    if (chosenTask?.project) setWorkspace(chosenTask.project);
    else if (!workspace && opts.data?.roots.length) setWorkspace(opts.data.roots[0]);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [chosenTask?.id, opts.data]);
  const cli = opts.data?.cursor_cli;
  const cloud = where === 'cloud';
  const submit = (e: Event) => {
    e.preventDefault();
    const common: NewRun = {
      prompt: prompt.trim() || undefined,
      task: task || undefined,
      model: model.trim() || undefined,
      role: role || undefined,
      timeout_secs: minutes ? Math.round(Number(minutes) * 60) : undefined,
      complete: task ? complete : false,
      budget: budget.trim() || undefined,
    };
    const r: NewRun = cloud
      ? {
          ...common,
          where: 'cloud',
          mode: mode === 'plan' ? 'plan' : 'agent',
          repo: repo.trim() || undefined,
          // Without a repository the daemon takes the workspace's git origin.
          workspace: repo.trim() ? undefined : workspace || undefined,
          ref: gitRef.trim() || undefined,
          auto_pr: autoPr,
        }
      : { ...common, workspace: workspace || undefined, mode, permissions: permissionsFrom(ticked, allow, deny) };
    setBusy(true);
    setErr(null);
    api
      .startRun(r)
      .then(
        (run) => {
          toast(`${run.id} queued`);
          setPrompt('');
          props.onStarted(run);
        },
        (e2) => setErr(e2),
      )
      .finally(() => setBusy(false));
  };
  return (
    <Dialog open={props.open} title="New agent run" onClose={props.onClose} testid="run-form" wide>
      <form class="form" onSubmit={submit}>
        <div class="where" role="radiogroup" aria-label="Where the agent works">
          <label class={!cloud ? 'on' : ''}>
            <input type="radio" name="run-where" checked={!cloud} onChange={() => setWhere('local')} data-testid="run-where-local" />
            This machine <span class="muted small">(Cursor CLI, in a folder)</span>
          </label>
          <label class={cloud ? 'on' : ''}>
            <input type="radio" name="run-where" checked={cloud} onChange={() => setWhere('cloud')} data-testid="run-where-cloud" />
            Cursor Cloud <span class="muted small">(on a GitHub repository)</span>
          </label>
        </div>
        {cloud && opts.data && !opts.data.cloud.key && (
          <div class="error-note" data-testid="run-no-key">
            No Cursor API key: run <code>tether cloud login</code> (a key from cursor.com/dashboard → Integrations).
          </div>
        )}
        {!cloud && cli && !cli.found && (
          <div class="error-note" data-testid="run-no-cli">
            The Cursor CLI was not found: {cli.hint}
          </div>
        )}
        <label>
          Task (optional)
          <select value={task} onChange={(e) => setTask((e.target as HTMLSelectElement).value)} data-testid="run-task-select">
            <option value="">— none —</option>
            {(tasks.data ?? []).map((t) => (
              <option key={t.id} value={t.id}>
                {t.id} {t.title}
              </option>
            ))}
          </select>
        </label>
        <label>
          Prompt {task ? '(added to the task)' : ''}
          <textarea rows={4} value={prompt} onInput={(e) => setPrompt((e.target as HTMLTextAreaElement).value)} data-testid="run-prompt" placeholder="What should the agent do?" />
        </label>
        {cloud && (
          <div class="form-row">
            <label>
              Repository
              <input type="text" value={repo} placeholder="https://github.com/org/repo (default: the workspace's origin)" onInput={(e) => setRepo((e.target as HTMLInputElement).value)} data-testid="run-repo" />
            </label>
            <label>
              Start from
              <input type="text" value={gitRef} placeholder="default branch" onInput={(e) => setGitRef((e.target as HTMLInputElement).value)} data-testid="run-ref" />
            </label>
          </div>
        )}
        {cloud && (
          <label class="check">
            <input type="checkbox" checked={autoPr} onChange={(e) => setAutoPr((e.target as HTMLInputElement).checked)} data-testid="run-auto-pr" /> Open a pull request
            when done
          </label>
        )}
        <div class="form-row">
          <label hidden={cloud && !!repo.trim()}>
            {cloud ? 'Repository of folder' : 'Workspace'}
            <select value={workspace} onChange={(e) => setWorkspace((e.target as HTMLSelectElement).value)} data-testid="run-workspace">
              {(opts.data?.roots ?? []).map((r) => (
                <option key={r} value={r}>
                  {shortPath(r)}
                </option>
              ))}
              {workspace && !(opts.data?.roots ?? []).includes(workspace) && <option value={workspace}>{shortPath(workspace)}</option>}
            </select>
          </label>
          <label>
            Model
            <input type="text" value={model} placeholder="default" onInput={(e) => setModel((e.target as HTMLInputElement).value)} data-testid="run-model" />
          </label>
        </div>
        <div class="form-row">
          <label>
            Mode
            <select value={mode} onChange={(e) => setMode((e.target as HTMLSelectElement).value as RunMode)} data-testid="run-mode">
              <option value="agent">agent</option>
              <option value="plan">plan (no changes)</option>
              {!cloud && <option value="ask">ask (no changes)</option>}
            </select>
          </label>
          <label>
            Role
            <select value={role} onChange={(e) => setRole((e.target as HTMLSelectElement).value)} data-testid="run-role">
              <option value="">— none —</option>
              {(opts.data?.roles ?? []).map((r) => (
                <option key={r.name} value={r.name} title={r.description}>
                  {r.name}
                </option>
              ))}
            </select>
          </label>
          <label>
            Time limit (minutes)
            <input type="text" inputMode="numeric" value={minutes} placeholder={String((cloud ? opts.data?.cloud.defaults.timeout_minutes : opts.data?.defaults.timeout_minutes) ?? 10)} onInput={(e) => setMinutes((e.target as HTMLInputElement).value)} data-testid="run-timeout" />
          </label>
          <label title="The run stops when it spends more: tokens (200k) or estimated dollars ($2, needs a priced model)">
            Budget
            <input type="text" value={budget} placeholder="e.g. 200k or $2" onInput={(e) => setBudget((e.target as HTMLInputElement).value)} data-testid="run-budget" />
          </label>
        </div>
        <fieldset class="perms" hidden={cloud}>
          <legend>Permissions (without any, the agent can only read)</legend>
          {PRESETS.map((p) => (
            <label class="check" key={p.id}>
              <input
                type="checkbox"
                checked={ticked.includes(p.id)}
                disabled={mode !== 'agent'}
                onChange={(e) => setTicked((cur) => ((e.target as HTMLInputElement).checked ? [...cur, p.id] : cur.filter((x) => x !== p.id)))}
                data-testid={`run-perm-${p.id}`}
              />
              {p.label} <code>{p.tokens.join(' ')}</code>
            </label>
          ))}
          <div class="form-row">
            <label>
              Also allow
              <input type="text" value={allow} placeholder="Shell(cargo), Read(src/**)" onInput={(e) => setAllow((e.target as HTMLInputElement).value)} data-testid="run-allow" />
            </label>
            <label>
              Deny
              <input type="text" value={deny} placeholder="Shell(rm)" onInput={(e) => setDeny((e.target as HTMLInputElement).value)} data-testid="run-deny" />
            </label>
          </div>
        </fieldset>
        {task && (
          <label class="check">
            <input type="checkbox" checked={complete} onChange={(e) => setComplete((e.target as HTMLInputElement).checked)} /> Mark the task done when the run succeeds
            (else it goes to review)
          </label>
        )}
        <ErrorNote error={err} testid="run-form-error" />
        <div class="actions">
          <button type="button" onClick={props.onClose}>
            Cancel
          </button>
          <button type="submit" class="primary" disabled={busy || (!prompt.trim() && !task)} data-testid="run-start">
            Start run
          </button>
        </div>
      </form>
    </Dialog>
  );
}

/** What a run spent: its tokens (and where the figures came from), Cursor's cost when it gave
 * one, and its budget with a bar where the two compare. */
function RunSpend({ run }: { run: Run }) {
  const u = run.usage;
  const tokens = u ? u.input_tokens + u.output_tokens + u.cache_read_tokens + u.cache_write_tokens : null;
  if (tokens === null && !run.budget) return null;
  const share = budgetShare(run.budget, tokens, run.cost_usd);
  const from = run.usage_source === 'turns' ? ' so far' : run.usage_source === 'cloud' ? ' (Cursor Cloud)' : '';
  return (
    <div class="meta-line muted small" data-testid="run-spend">
      {u && tokens !== null ? (
        <span title={`${u.input_tokens} in, ${u.output_tokens} out, ${u.cache_read_tokens} cache read, ${u.cache_write_tokens} cache write`}>
          {tokens.toLocaleString()} tokens{from}
        </span>
      ) : (
        <span>no tokens reported yet</span>
      )}
      {run.cost_usd !== undefined && run.cost_usd !== null && <span> · ${run.cost_usd.toFixed(2)} (Cursor's figure)</span>}
      {run.budget && (
        <span>
          {' '}
          · budget {run.budget}
          {share !== null && <BudgetBar share={share} testid="run-budget-bar" />}
        </span>
      )}
    </div>
  );
}

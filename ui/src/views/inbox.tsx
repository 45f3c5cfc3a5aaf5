// Signals: what agents sent the person (reply in place), a composer to any agent or role, and
// every open obligation with its wake telemetry (attempts, last path and result, age). Filters by
// agent and trace live in the URL (#/inbox?agent=ana&trace=…); #/inbox/S-4 opens one signal.

import { useEffect, useMemo, useState } from 'preact/hooks';

import { api } from '../api';
import { Empty, ErrorNote, SafeHtml } from '../components';
import { navigate, reportError, toast, useAsync, useLive, useTicker } from '../hooks';
import { renderMarkdown } from '../markdown';
import type { Route } from '../router';
import type { Agent, Signal, SignalType } from '../types';
import { ago, dateTime } from '../util';

/** Types a person can send (system types are Tether's own). */
export const SENDABLE: SignalType[] = ['question', 'review_requested', 'task_assigned', 'status_update', 'acknowledgment'];

/** The person's unread signals, kept fresh by the live stream (for the nav badge). */
export function useUnread(enabled: boolean): number {
  const [n, setN] = useState(0);
  const load = () => {
    if (!enabled) return;
    api.signals({ to: 'human', limit: 500 }).then((l) => setN(unreadCount(l)), () => {});
  };
  useEffect(load, [enabled]);
  useLive(['signals'], load);
  return n;
}

export function unreadCount(list: Signal[]): number {
  return list.filter((s) => s.deliveries.some((d) => d.recipient === 'human' && !d.drained_at)).length;
}

/** Open obligations across every recipient, oldest first: what waits for an answer and how hard
 * Tether tried to get it read. */
export function obligationRows(list: Signal[], now = Date.now()) {
  const rows = list.flatMap((s) =>
    s.deliveries
      .filter((d) => d.obligation === 'open')
      .map((d) => ({ signal: s, delivery: d, ageMs: now - Date.parse(s.created_at) })),
  );
  return rows.sort((a, b) => b.ageMs - a.ageMs);
}

export function InboxView({ route }: { route: Route }) {
  const agent = route.params.agent ?? '';
  const trace = route.params.trace ?? '';
  const mine = useAsync(() => api.signals({ to: 'human', agent: agent || undefined, trace: trace || undefined, limit: 200 }), [agent, trace]);
  const open = useAsync(() => api.signals({ open: true, agent: agent || undefined, trace: trace || undefined, limit: 500 }), [agent, trace]);
  const agents = useAsync(() => api.agents(), []);
  useLive(['signals'], () => {
    mine.reload();
    open.reload();
  });
  useLive(['agents'], () => agents.reload());
  useTicker(30_000);

  const setFilter = (k: 'agent' | 'trace', v: string) => navigate('inbox', route.id, { ...route.params, [k]: v });
  const unread = unreadCount(mine.data ?? []);
  const markRead = () =>
    api.drainSignals().then(
      () => mine.reload(),
      (e) => reportError(e, 'Marking read failed'),
    );

  return (
    <div class="page inbox" data-testid="inbox">
      <div class="toolbar">
        <h1>Inbox</h1>
        <span class="muted small">Signals between agents and you. You are <code>human</code>.</span>
        <span class="spacer" />
        <label class="inline small">
          Agent
          <select value={agent} onChange={(e) => setFilter('agent', (e.target as HTMLSelectElement).value)} data-testid="inbox-agent">
            <option value="">all</option>
            {(agents.data ?? []).filter((a) => a.kind !== 'cli').map((a) => (
              <option key={a.id} value={a.name}>
                {a.name}
              </option>
            ))}
          </select>
        </label>
        {trace && (
          <span class="chip" data-testid="inbox-trace">
            trace {trace.slice(0, 8)}
            <button type="button" class="chip-x" aria-label="Clear the trace filter" onClick={() => setFilter('trace', '')}>
              ×
            </button>
          </span>
        )}
      </div>
      <ErrorNote error={mine.error ?? open.error} />
      <HeldRuns />
      <Compose agents={agents.data ?? []} onSent={() => open.reload()} />

      <section class="inbox-section">
        <div class="section-head">
          <h2>For you</h2>
          {unread > 0 && <span class="count-badge">{unread} unread</span>}
          <span class="spacer" />
          <button type="button" onClick={markRead} disabled={unread === 0} data-testid="inbox-mark-read">
            Mark all read
          </button>
        </div>
        {mine.data && mine.data.length === 0 ? (
          <Empty title="Nothing for you yet" testid="inbox-empty">
            <p>When an agent asks you something (a question or a review) or reports to you, it shows here.</p>
          </Empty>
        ) : (
          <ul class="signal-list" data-testid="inbox-list">
            {(mine.data ?? []).map((s) => (
              <SignalCard key={s.id} s={s} open={route.id === s.id} onTrace={(t) => setFilter('trace', t)} onChanged={() => mine.reload()} />
            ))}
          </ul>
        )}
      </section>

      <section class="inbox-section">
        <div class="section-head">
          <h2>Open obligations</h2>
          <span class="muted small">Signals still waiting for a reply or a read, with every attempt to wake their recipient.</span>
        </div>
        <Obligations list={open.data ?? []} onTrace={(t) => setFilter('trace', t)} />
      </section>
    </div>
  );
}

/** Runs waiting for the person: wakes that signals from outside this machine caused, with write
 * or shell permissions. Shown only when there are any. */
function HeldRuns() {
  const queued = useAsync(() => api.runs({ status: ['queued'], limit: 200 }), []);
  useLive(['runs'], () => queued.reload());
  const held = (queued.data ?? []).filter((r) => r.held);
  if (!held.length) return null;
  const act = (p: Promise<unknown>, what: string) => p.then(() => (queued.reload(), toast(what)), (e) => reportError(e, 'Failed'));
  return (
    <section class="inbox-section" data-testid="inbox-held">
      <div class="section-head">
        <h2>Waiting for your approval</h2>
        <span class="muted small">Signals from outside this machine would wake these chats with write or shell permissions.</span>
      </div>
      <ul class="signal-list">
        {held.map((r) => (
          <li key={r.id} class="signal-card" data-testid="held-run" data-id={r.id}>
            <div class="meta-line small">
              <button type="button" class="link" onClick={() => navigate('runs', r.id)}>
                {r.id}
              </button>{' '}
              · resumes chat {r.resume_chat?.slice(0, 8)} in {r.workspace} · allows {r.permissions.allow.join(', ')}
            </div>
            <pre class="held-prompt">{r.prompt.slice(0, 600)}</pre>
            <div class="actions">
              <button type="button" class="primary" onClick={() => act(api.approveRun(r.id), `${r.id} approved`)} data-testid="held-approve">
                Approve
              </button>
              <button type="button" class="danger" onClick={() => act(api.cancelRun(r.id), `${r.id} cancelled`)} data-testid="held-deny">
                Cancel it
              </button>
            </div>
          </li>
        ))}
      </ul>
    </section>
  );
}

function Compose({ agents, onSent }: { agents: Agent[]; onSent: () => void }) {
  const [to, setTo] = useState('');
  const [type, setType] = useState<SignalType>('question');
  const [body, setBody] = useState('');
  const [task, setTask] = useState('');
  const [busy, setBusy] = useState(false);
  const targets = useMemo(() => {
    const live = agents.filter((a) => a.kind !== 'cli' && a.status !== 'ended');
    const roles = [...new Set(live.map((a) => a.role).filter((r): r is string => !!r))].sort();
    return { names: live.map((a) => a.name), roles };
  }, [agents]);
  const submit = (e: Event) => {
    e.preventDefault();
    if (!to.trim() || !body.trim()) return;
    setBusy(true);
    api
      .sendSignal({ to: to.trim(), type, body, task: task.trim() || undefined })
      .then(
        (s) => {
          toast(`Sent ${s.id} to ${s.deliveries.map((d) => d.recipient).join(', ')}`);
          setBody('');
          setTask('');
          onSent();
        },
        (err) => reportError(err, 'Not sent'),
      )
      .finally(() => setBusy(false));
  };
  return (
    <form class="compose" onSubmit={submit} data-testid="compose">
      <div class="form-row">
        <label>
          To
          <input type="text" list="signal-targets" value={to} placeholder="agent, role or human" onInput={(e) => setTo((e.target as HTMLInputElement).value)} data-testid="compose-to" />
          <datalist id="signal-targets">
            {targets.names.map((n) => (
              <option key={n} value={n} />
            ))}
            {targets.roles.map((r) => (
              <option key={`role:${r}`} value={`role:${r}`} label={`every live ${r}`} />
            ))}
          </datalist>
        </label>
        <label>
          Type
          <select value={type} onChange={(e) => setType((e.target as HTMLSelectElement).value as SignalType)} data-testid="compose-type">
            {SENDABLE.map((t) => (
              <option key={t} value={t}>
                {t.replace('_', ' ')}
              </option>
            ))}
          </select>
        </label>
        <label>
          Task
          <input type="text" value={task} placeholder="T-3 (optional)" size={10} onInput={(e) => setTask((e.target as HTMLInputElement).value)} data-testid="compose-task" />
        </label>
      </div>
      <textarea rows={2} value={body} placeholder="Message (Markdown)" onInput={(e) => setBody((e.target as HTMLTextAreaElement).value)} data-testid="compose-body" />
      <div class="form-row">
        <span class="muted small">A question, review request or task assignment stays open until the recipient replies.</span>
        <span class="spacer" />
        <button type="submit" class="primary" disabled={busy || !to.trim() || !body.trim()} data-testid="compose-send">
          Send
        </button>
      </div>
    </form>
  );
}

function SignalCard({ s, open, onTrace, onChanged }: { s: Signal; open: boolean; onTrace: (t: string) => void; onChanged: () => void }) {
  const mine = s.deliveries.find((d) => d.recipient === 'human');
  const unread = mine && !mine.drained_at;
  const waiting = mine?.obligation === 'open' && s.reply_required;
  const [reply, setReply] = useState('');
  const [busy, setBusy] = useState(false);
  const send = (e: Event) => {
    e.preventDefault();
    if (!reply.trim()) return;
    setBusy(true);
    api
      .replySignal(s.id, reply)
      .then(
        (r) => {
          toast(`Replied (${r.id}) to ${r.to}`);
          setReply('');
          onChanged();
        },
        (err) => reportError(err, 'Reply not sent'),
      )
      .finally(() => setBusy(false));
  };
  return (
    <li class={`signal ${unread ? 'unread' : ''} ${open ? 'open' : ''}`} data-testid="signal" data-id={s.id} data-type={s.type}>
      <div class="signal-head">
        <span class={`sig-type t-${s.type}`}>{s.type.replace('_', ' ')}</span>
        <b>{s.from}</b>
        {s.task && (
          <button type="button" class="link" onClick={() => navigate('tasks', s.task!)}>
            {s.task}
          </button>
        )}
        <span class="muted small" title={dateTime(s.created_at)}>
          {ago(s.created_at)}
        </span>
        <span class="spacer" />
        {waiting && <span class="badge warn">waiting for you</span>}
        {s.answered_by && <span class="badge">answered {s.answered_by}</span>}
        <button type="button" class="link small" onClick={() => onTrace(s.trace_id)} title="Show the whole conversation">
          {s.id}
        </button>
      </div>
      <SafeHtml class="md" html={renderMarkdown(s.body)} />
      {waiting && (
        <form class="reply" onSubmit={send}>
          <input type="text" value={reply} placeholder={`Reply to ${s.from}…`} onInput={(e) => setReply((e.target as HTMLInputElement).value)} data-testid="reply-body" />
          <button type="submit" class="primary" disabled={busy || !reply.trim()} data-testid="reply-send">
            Reply
          </button>
        </form>
      )}
    </li>
  );
}

function Obligations({ list, onTrace }: { list: Signal[]; onTrace: (t: string) => void }) {
  const rows = obligationRows(list);
  if (rows.length === 0) return <p class="muted small" data-testid="obligations-empty">No open obligations.</p>;
  return (
    <table class="table" data-testid="obligations">
      <thead>
        <tr>
          <th>Signal</th>
          <th>Type</th>
          <th>From → to</th>
          <th>Age</th>
          <th class="num">Attempts</th>
          <th>Last path</th>
          <th>Last result</th>
          <th>Read</th>
        </tr>
      </thead>
      <tbody>
        {rows.map(({ signal: s, delivery: d, ageMs }) => (
          <tr key={`${s.id}-${d.recipient}`} data-testid="obligation-row" data-id={s.id} data-recipient={d.recipient}>
            <td>
              <button type="button" class="link" onClick={() => onTrace(s.trace_id)} title={s.body}>
                {s.id}
              </button>
            </td>
            <td>{s.type.replace('_', ' ')}</td>
            <td>
              {s.from} → <b>{d.recipient}</b>
            </td>
            <td class="muted" title={dateTime(s.created_at)}>
              {Math.max(0, Math.round(ageMs / 60_000))} min
            </td>
            <td class="num">{d.wake_attempt_count}</td>
            <td>{d.last_wake_path ?? <span class="muted">—</span>}</td>
            <td>
              {d.last_wake_result ? <span class={`wake-${d.last_wake_result}`}>{d.last_wake_result.replace('_', ' ')}</span> : <span class="muted">—</span>}
            </td>
            <td class="muted">{d.drained_at ? ago(d.drained_at) : 'unread'}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

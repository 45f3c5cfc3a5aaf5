// The Code view: a file of a project with each line's origin in the gutter (`GET /api/blame`) —
// the chat that wrote it (one colour per chat; hover for its title, model and date; click to open
// it at the turn that made the edit), `mixed` (an AI line a person changed since), `human`, or
// nothing where no record says (unknown). With no file open: a path to open, and the repositories
// Tether traces with whether records are written into them (`PUT /api/trace/repos`).

import { useEffect, useMemo, useRef, useState } from 'preact/hooks';

import { api } from '../api';
import { Empty, ErrorNote } from '../components';
import { navigate, reportError, toast, useAsync } from '../hooks';
import type { Route } from '../router';
import type { BlameResult, CursorTracking, EditOrigin, LineOrigin, TracedRepo } from '../types';
import { dateTime, shortPath } from '../util';

const CHAT_COLORS = ['#4f6bed', '#2e9e6b', '#d9822b', '#b04fd1', '#d14f6b', '#1f9bb5', '#8d6e2f', '#6b7d1f'];

/** Each edit's colour: one per chat (edits of one chat share it), in the order they appear. */
export function chatColors(edits: EditOrigin[]): Map<number, string> {
  const byChat = new Map<string, string>();
  const out = new Map<number, string>();
  for (const e of edits) {
    const key = e.conversation_id ?? e.run_id ?? `edit-${e.id}`;
    if (!byChat.has(key)) byChat.set(key, CHAT_COLORS[byChat.size % CHAT_COLORS.length]);
    out.set(e.id, byChat.get(key)!);
  }
  return out;
}

/** What hovering a line's gutter says. */
export function originTitle(l: LineOrigin, e: EditOrigin | undefined): string {
  if (l.origin === 'human') return 'Written by a person (changed after Tether began tracing, no AI edit behind it)';
  if (l.origin === 'unknown') return 'Unknown: older than tracing, put back by a revert, or no record';
  if (!e) return l.origin;
  const who = e.kind === 'tab' ? 'Cursor Tab' : e.kind === 'run' ? `Tether run ${e.run_id ?? ''}` : 'Cursor agent';
  const what = l.origin === 'mixed' ? 'AI-written, edited by a person since' : 'AI-written';
  return `${what} — ${e.title ?? 'chat not indexed'} · ${who}${e.model ? ` · ${e.model}` : ''} · ${dateTime(e.at)}`;
}

export function CodeView({ route }: { route: Route }) {
  const path = route.params.path ?? '';
  const line = Number(route.params.line) || undefined;
  const [input, setInput] = useState(path);
  useEffect(() => setInput(path), [path]);
  const blame = useAsync<BlameResult | undefined>(() => (path ? api.blame(path) : Promise.resolve(undefined)), [path]);
  return (
    <div class="page code-view" data-testid="code">
      <div class="toolbar">
        <h1>Code</h1>
        <form
          class="code-open"
          onSubmit={(e) => {
            e.preventDefault();
            if (input.trim()) navigate('code', undefined, { path: input.trim() });
          }}
        >
          <input
            type="text"
            value={input}
            placeholder="/path/to/a/file in a project"
            aria-label="File"
            onInput={(e) => setInput((e.target as HTMLInputElement).value)}
            data-testid="code-path"
          />
          <button type="submit" data-testid="code-open">
            Open
          </button>
        </form>
      </div>
      <ErrorNote error={blame.error} testid="code-error" />
      {!path && <Repos />}
      {blame.data && <FileOrigins b={blame.data} line={line} />}
    </div>
  );
}

function FileOrigins({ b, line }: { b: BlameResult; line?: number }) {
  const colors = useMemo(() => chatColors(b.edits), [b]);
  const edits = useMemo(() => new Map(b.edits.map((e) => [e.id, e])), [b]);
  const body = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!line) return;
    const el = body.current?.querySelector(`[data-line="${line}"]`);
    if (el) {
      el.scrollIntoView({ block: 'center' });
      el.classList.add('hit');
    }
  }, [b, line]);
  const open = (e: EditOrigin | undefined) => {
    if (!e) return;
    if (e.session) navigate('sessions', e.session, e.turn_seq != null ? { seq: String(e.turn_seq) } : undefined);
    else if (e.run_id) navigate('runs', e.run_id);
    else toast('That chat is not in Tether’s index (yet)');
  };
  const c = b.counts;
  const total = c.ai + c.mixed + c.human + c.unknown;
  return (
    <>
      <section class="panel code-head" data-testid="code-summary">
        <div>
          <strong title={b.file}>{b.path}</strong>
          {b.repo && <span class="muted small"> in {shortPath(b.repo)}</span>}
        </div>
        <div class="muted small">
          {c.ai} AI · {c.mixed} mixed · {c.human} by a person · {c.unknown} unknown of {total} lines —{' '}
          {b.traced_since ? `traced since ${dateTime(b.traced_since)}` : 'no edits recorded in this repository'}
        </div>
        {b.edits.length > 0 && (
          <ul class="code-legend" data-testid="code-legend">
            {b.edits.map((e) => (
              <li key={e.id}>
                <span class="swatch" style={{ background: colors.get(e.id) }} />
                <button type="button" class="link" onClick={() => open(e)} data-testid="code-legend-chat">
                  {e.title ?? (e.run_id ? `run ${e.run_id}` : 'chat not indexed')}
                </button>
                <span class="muted small">
                  {' '}
                  {e.kind === 'tab' ? 'Tab' : e.kind === 'run' ? 'run' : 'agent'}
                  {e.model ? ` · ${e.model}` : ''} · {dateTime(e.at)}
                  {e.path !== b.path ? ` · written in ${e.path}` : ''}
                </span>
              </li>
            ))}
          </ul>
        )}
        {b.cursor_tracking && <CursorTrackingNote t={b.cursor_tracking} />}
      </section>
      <div class="code-lines" ref={body} data-testid="code-lines">
        {b.lines.map((l) => {
          const e = l.edit != null ? edits.get(l.edit) : undefined;
          const color = e ? colors.get(e.id) : undefined;
          return (
            <div class={`code-line origin-${l.origin}`} key={l.line} data-line={l.line} data-origin={l.origin}>
              <button
                type="button"
                class="gutter"
                style={color ? { borderLeftColor: color } : undefined}
                title={originTitle(l, e)}
                onClick={() => open(e)}
                disabled={!e}
                aria-label={`Line ${l.line}: ${originTitle(l, e)}`}
              >
                {l.origin === 'unknown' ? '' : l.origin === 'human' ? 'you' : l.origin}
              </button>
              <span class="ln">{l.line}</span>
              <code>{l.text || ' '}</code>
            </div>
          );
        })}
      </div>
    </>
  );
}

function Repos() {
  const repos = useAsync(() => api.traceRepos(), []);
  const set = async (r: TracedRepo, store: string) => {
    try {
      await api.setTracePublish({ repo: r.repo, store: store || null });
      toast(store ? `Records of new commits go into ${shortPath(r.repo)} (${store})` : `Nothing more is written into ${shortPath(r.repo)}`);
      repos.reload();
    } catch (e) {
      reportError(e, 'Trace records');
    }
  };
  return (
    <section class="panel" data-testid="code-repos">
      <h2>Traced repositories</h2>
      <ErrorNote error={repos.error} />
      {repos.data && repos.data.length === 0 && (
        <Empty title="No edits recorded yet" testid="code-none">
          <p>
            Tether records which chat wrote which lines once its Cursor hooks are installed (Settings → Connect Cursor, or <code>tether init</code>), and from its own runs. Open a
            chat to see the files it changed.
          </p>
        </Empty>
      )}
      {(repos.data ?? []).map((r) => (
        <div class="repo-row" key={r.repo} data-testid="code-repo">
          <span title={r.repo}>{shortPath(r.repo)}</span>
          <span class="muted small">since {dateTime(new Date(r.since_ms).toISOString())}</span>
          <label class="inline small">
            Records in the repository
            <select value={r.publish ?? ''} onChange={(e) => set(r, (e.target as HTMLSelectElement).value)} data-testid="code-publish">
              <option value="">off (private)</option>
              <option value="notes">git notes</option>
              <option value="files">.agent-trace/ files</option>
            </select>
          </label>
        </div>
      ))}
    </section>
  );
}

/** Insights: lines agents wrote, by repository and model — only where edits were recorded, and
 * said so (chats from before the hooks, or without them, are not in it). */
export function WrittenSection({ since }: { since: string }) {
  const rows = useAsync(() => api.traceWritten(since), [since]);
  const data = rows.data ?? [];
  if (data.length === 0) return null;
  const total = data.reduce((n, r) => n + r.lines, 0);
  const by = new Map<string, { lines: number; edits: number; models: Map<string, number> }>();
  for (const r of data) {
    const key = r.repo ?? 'outside any repository';
    const g = by.get(key) ?? { lines: 0, edits: 0, models: new Map() };
    g.lines += r.lines;
    g.edits += r.edits;
    const m = `${r.model ?? 'model unknown'}${r.kind === 'tab' ? ' (Tab)' : r.kind === 'run' ? ' (runs)' : ''}`;
    g.models.set(m, (g.models.get(m) ?? 0) + r.lines);
    by.set(key, g);
  }
  return (
    <section class="panel" data-testid="insights-written">
      <h2>AI-written lines</h2>
      <p class="muted small">
        {total.toLocaleString()} lines written by Cursor’s agent, Tab and Tether’s runs, as recorded by Tether’s hooks and runs — only where they were recorded, not every chat.
      </p>
      <table class="usage-table">
        <thead>
          <tr>
            <th>Project</th>
            <th>Lines</th>
            <th>Edits</th>
            <th>By model</th>
          </tr>
        </thead>
        <tbody>
          {[...by.entries()].map(([repo, g]) => (
            <tr key={repo}>
              <td title={repo}>{shortPath(repo)}</td>
              <td>{g.lines.toLocaleString()}</td>
              <td>{g.edits}</td>
              <td class="small">
                {[...g.models.entries()]
                  .sort((a, b) => b[1] - a[1])
                  .map(([m, n]) => `${m}: ${n.toLocaleString()}`)
                  .join(' · ')}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

/** Cursor's own AI-code tracking of the file: the chats it names and its commit scores, shown
 * beside the lines — it names files, not lines, so it never decides a line's origin. */
function CursorTrackingNote({ t }: { t: CursorTracking }) {
  const n = (v: number | null) => (v == null ? '?' : String(v));
  return (
    <div class="muted small" data-testid="code-cursor-tracking">
      <div title={t.covers}>
        Cursor’s AI-code tracking{t.since ? ` (since ${dateTime(t.since)})` : ''}
        {t.skipped ? ` — not read: ${t.skipped}` : ': files, not lines; it never decides a line’s origin'}
      </div>
      {t.chats.map((c) => (
        <div key={`${c.conversation_id}/${c.source}/${c.model ?? ''}`} data-testid="code-cursor-tracking-chat">
          {c.session ? (
            <button type="button" class="link" onClick={() => navigate('sessions', c.session as string)}>
              {c.title ?? 'chat'}
            </button>
          ) : c.conversation_id ? (
            `chat ${c.conversation_id.slice(0, 8)} (not indexed)`
          ) : (
            'no chat'
          )}
          {` · ${c.source}${c.model ? ` · ${c.model}` : ''} · ${c.chunks} chunk${c.chunks === 1 ? '' : 's'}`}
          {c.last_at ? ` · ${dateTime(c.last_at)}` : ''}
        </div>
      ))}
      {t.commits.map((s) => (
        <div key={s.commit + (s.branch ?? '')}>
          commit <code>{s.commit.slice(0, 12)}</code>: {n(s.lines_added)} lines added — {n(s.agent_lines_added)} agent ·{' '}
          {n(s.tab_lines_added)} Tab · {n(s.human_lines_added)} person
        </div>
      ))}
    </div>
  );
}

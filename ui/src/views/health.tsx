import { useEffect, useState } from 'preact/hooks';

import { api } from '../api';
import type { StatusReport } from '../gen/server';
import { confirmDialog, CopyButton, Dialog, Empty, ErrorNote } from '../components';
import { reportError, toast, useAsync, useLive, useTicker } from '../hooks';
import type { CloudCheck, Doctor, IndexEvent, InitResult, TeamStatus } from '../types';
import { ago, bytes, duration } from '../util';

export function mcpUrl(status: Pick<StatusReport, 'url'> | undefined): string {
  if (!status?.url) return '';
  return status.url.replace(/\/+$/, '').endsWith('/mcp') ? status.url : `${status.url.replace(/\/+$/, '')}/mcp`;
}

export function HealthView() {
  const status = useAsync(() => api.status(), []);
  const doctor = useAsync(() => api.doctor(), []);
  const worktrees = useAsync(() => api.worktrees(), []);
  const [progress, setProgress] = useState<IndexEvent | null>(null);
  const [initOpen, setInitOpen] = useState(false);
  const [pluginOpen, setPluginOpen] = useState(false);
  useTicker(5000);
  useLive(['index'], (d) => {
    const ev = d as IndexEvent;
    setProgress(ev);
    if (ev.state === 'idle') {
      status.reload();
      doctor.reload();
    }
  });
  useLive(['hello'], () => status.reload());

  const s = status.data;
  const indexing = progress ? progress.state === 'indexing' : s?.index.state === 'indexing';
  const pct = progress?.total ? Math.min(100, Math.round(((progress.done ?? 0) / progress.total) * 100)) : undefined;

  const reindex = async () => {
    try {
      await api.reindex();
      setProgress({ state: 'indexing' });
      toast('Re-index started');
    } catch (e) {
      reportError(e, 'Re-index');
    }
  };
  const rotate = async () => {
    const ok = await confirmDialog(
      'Rotate the MCP token?',
      'Every MCP client that uses the old token stops working until it gets the new one. Run `tether init` again (or update the token in Cursor’s mcp.json) and re-enable the tether server in Cursor’s Settings → MCP.',
      'Rotate token',
    );
    if (!ok) return;
    try {
      await api.rotateToken();
      toast('Token rotated. Run `tether init` again so Cursor gets the new one.');
    } catch (e) {
      reportError(e, 'Rotate token');
    }
  };

  return (
    <div class="page">
      <div class="toolbar">
        <h1>Health</h1>
        <span class="spacer" />
        <button type="button" onClick={reindex} disabled={indexing} data-testid="reindex">
          {indexing ? 'Indexing…' : 'Re-index'}
        </button>
        <button type="button" onClick={() => setInitOpen(true)} data-testid="init-open">
          Set up a project…
        </button>
        <button type="button" onClick={() => setPluginOpen(true)} data-testid="plugin-open">
          Cursor 3 plugin…
        </button>
        <button type="button" class="danger" onClick={rotate} data-testid="rotate-token">
          Rotate token
        </button>
      </div>
      <ErrorNote error={status.error ?? doctor.error} />
      {s && (
        <div class="cards-grid">
          <section class="panel" data-testid="health-daemon">
            <h2>Daemon</h2>
            <dl class="dl">
              <dt>Version</dt>
              <dd data-testid="health-version">{s.version}</dd>
              <dt>Uptime</dt>
              <dd>{duration(s.uptime_s)}</dd>
              <dt>MCP URL</dt>
              <dd>
                <code data-testid="mcp-url">{mcpUrl(s)}</code> <CopyButton text={mcpUrl(s)} testid="copy-mcp-url" />
              </dd>
              <dt>Indexing</dt>
              <dd>{s.paused ? 'paused' : 'watching Cursor’s files'}</dd>
            </dl>
          </section>
          <section class="panel" data-testid="health-index">
            <h2>Index</h2>
            <dl class="dl">
              <dt>State</dt>
              <dd data-testid="index-state">{indexing ? 'indexing' : 'idle'}</dd>
              <dt>Chats</dt>
              <dd>{(progress?.sessions ?? s.index.sessions).toLocaleString()}</dd>
              <dt>Messages</dt>
              <dd>{(progress?.messages ?? s.index.messages).toLocaleString()}</dd>
              {doctor.data && (
                <>
                  <dt>Size</dt>
                  <dd>{bytes(doctor.data.index_bytes)}</dd>
                  <dt>MCP token</dt>
                  <dd data-testid="token-store">
                    {TOKEN_STORE[doctor.data.token_store]}
                    {doctor.data.token_store === 'fallback' && (
                      <span class="danger-text">
                        {' '}
                        — no OS keyring was reachable; `tether token store keyring` moves it once one runs
                      </span>
                    )}
                  </dd>
                  <dt>Cursor CLI</dt>
                  <dd data-testid="cursor-cli" title={doctor.data.cursor_cli?.path ?? ''}>
                    {doctor.data.cursor_cli?.found ? (
                      `${doctor.data.cursor_cli.version ?? 'found'} (${doctor.data.cursor_cli.from})`
                    ) : (
                      <span class="danger-text">not found — {doctor.data.cursor_cli?.hint}</span>
                    )}
                  </dd>
                </>
              )}
            </dl>
            {indexing && (
              <div class="progress" data-testid="index-progress">
                <progress max={100} value={pct} aria-label="Indexing progress" />
                <span class="small muted">
                  {pct !== undefined ? `${progress?.done} / ${progress?.total} (${pct}%)` : 'starting…'}
                  {progress?.eta_ms != null && progress.done !== progress.total && `, about ${duration(Math.ceil(progress.eta_ms / 1000))} left`}
                </span>
              </div>
            )}
          </section>
          {worktrees.data && (
            <section class="panel" data-testid="health-worktrees">
              <h2>Run worktrees</h2>
              <dl class="dl">
                <dt>Worktrees</dt>
                <dd data-testid="worktrees-count">{worktrees.data.count}</dd>
                <dt>Disk use</dt>
                <dd>{bytes(worktrees.data.bytes)}</dd>
              </dl>
              {worktrees.data.worktrees.slice(0, 8).map((u) => (
                <div class="small" key={u.id}>
                  <a href={`#/runs/${u.runs[u.runs.length - 1] ?? ''}`}>{u.runs.join(', ')}</a> <code>{u.branch}</code>{' '}
                  <span class="muted">{u.active ? 'running' : u.last_ended_at ? `ended ${ago(u.last_ended_at)}` : ''}</span>
                </div>
              ))}
              <p class="small muted">Removed when discarded or merged, and by the reaper past runs.worktree_retention_days.</p>
            </section>
          )}
          <section class="panel" data-testid="health-mcp">
            <h2>MCP sessions</h2>
            {s.moved_from && (
              <p class="notice" data-testid="moved-port">
                Tether moved from port {s.moved_from.port} {ago(s.moved_from.at)}. Cursor windows set up with the old URL lost
                their connection: run <code>tether init</code> again (Set up a project…) and turn the tether server off and on in
                Cursor’s MCP settings.
              </p>
            )}
            {s.mcp_sessions.length === 0 ? (
              <p class="muted small">No MCP client connected. Run <code>tether init</code> and enable the tether server in Cursor.</p>
            ) : (
              <ul class="plain">
                {s.mcp_sessions.map((m) => (
                  <li key={m.id}>
                    <code>{m.id.slice(0, 12)}</code> · {m.streams} stream{m.streams === 1 ? '' : 's'} · active {ago(m.last_activity)}
                  </li>
                ))}
              </ul>
            )}
          </section>
        </div>
      )}
      <TeamPanel />
      <CloudPanel />
      {doctor.data && <StoresPanel doctor={doctor.data} />}
      {doctor.data && <TrackingPanel doctor={doctor.data} />}
      <section class="panel" data-testid="health-sources">
        <h2>Sources</h2>
        {doctor.data && doctor.data.sources.length === 0 ? (
          <Empty title="No Cursor data found">
            <p>
              Tether looked in {[...doctor.data.cursor_user_dirs, ...doctor.data.cursor_homes].map((l) => l.path).join(', ') || 'the usual places'}.
              See <b>Settings</b> for the locations, or run <code>tether doctor</code>.
            </p>
          </Empty>
        ) : (
          <table class="table">
            <thead>
              <tr>
                <th>Status</th>
                <th>Kind</th>
                <th>Path</th>
                <th class="num">Chats</th>
                <th class="num">Messages</th>
                <th>Reasons</th>
              </tr>
            </thead>
            <tbody>
              {(doctor.data?.sources ?? []).map((src) => (
                <tr key={src.path + src.kind} data-testid="source-row" data-status={src.status}>
                  <td>
                    <span class={`status st-${src.status}`}>{src.status}</span>
                  </td>
                  <td class="muted">{src.kind}</td>
                  <td class="path" title={src.path}>
                    {src.path}
                  </td>
                  <td class="num">{src.sessions}</td>
                  <td class="num">{src.messages}</td>
                  <td class="small">
                    {src.error && <div class="danger-text">{src.error}</div>}
                    {Object.entries(src.reasons).map(([r, n]) => (
                      <div key={r}>
                        {r} × {n}
                      </div>
                    ))}
                    {Object.entries(src.notes).map(([r, n]) => (
                      <div key={r} class="muted">
                        {r} × {n}
                      </div>
                    ))}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </section>
      <InitDialog open={initOpen} onClose={() => setInitOpen(false)} />
      <PluginDialog open={pluginOpen} onClose={() => setPluginOpen(false)} />
    </div>
  );
}

/** One kind of store (`doctor`'s found / skipped per kind): files found, what the index read
 * from them, the files read only in part with why, and the files passed over with why. */
export type StoreKindRow = {
  kind: string;
  found: number;
  chats: number;
  messages: number;
  incomplete: number;
  /** What made files of this kind incomplete, counted over them (reasons and errors). */
  problems: [string, number][];
  /** Files passed over, by reason, with their paths. */
  skipped: { reason: string; paths: string[] }[];
};

/** The kinds `doctor` reports, found ones first in its order, then kinds only skipped or read. */
export function storeKindRows(d: Pick<Doctor, 'found' | 'skipped' | 'sources'>): StoreKindRow[] {
  const rows = new Map<string, StoreKindRow>();
  const problems = new Map<string, Map<string, number>>();
  const row = (kind: string): StoreKindRow => {
    let r = rows.get(kind);
    if (!r) {
      r = { kind, found: 0, chats: 0, messages: 0, incomplete: 0, problems: [], skipped: [] };
      rows.set(kind, r);
    }
    return r;
  };
  for (const f of d.found) Object.assign(row(f.kind), { found: f.files, chats: f.sessions, messages: f.messages });
  for (const src of d.sources) {
    // A missing source is gone from disk (not found now); a complete one has nothing to say.
    if (src.status === 'missing' || src.status === 'complete') continue;
    row(src.kind).incomplete += 1;
    const p = problems.get(src.kind) ?? new Map<string, number>();
    problems.set(src.kind, p);
    for (const [reason, n] of Object.entries(src.reasons)) p.set(reason, (p.get(reason) ?? 0) + (n ?? 0));
    if (src.error) p.set(src.error, (p.get(src.error) ?? 0) + 1);
  }
  for (const [kind, p] of problems) row(kind).problems = [...p].sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  for (const sk of d.skipped) {
    const r = row(sk.kind);
    const group = r.skipped.find((g) => g.reason === sk.reason);
    if (group) group.paths.push(sk.path);
    else r.skipped.push({ reason: sk.reason, paths: [sk.path] });
  }
  return [...rows.values()];
}

const KIND_LABEL: Record<string, string> = {
  workspace: 'Cursor workspaces',
  global: 'Cursor global store',
  cli_store: 'cursor-agent / ACP stores',
  cli_meta: 'cursor-agent meta.json only',
  transcript: 'Agent transcripts',
  sdk_agent: 'SDK / Agents Window',
  cloud: 'Cloud agents',
  claude_code: 'Claude Code',
  codex: 'Codex CLI',
  gemini: 'Gemini CLI',
};

/** Per kind of store: found / read / skipped, with why (what `tether doctor` prints). */
export function StoresPanel({ doctor }: { doctor: Pick<Doctor, 'found' | 'skipped' | 'sources'> }) {
  const rows = storeKindRows(doctor);
  if (rows.length === 0) return null;
  return (
    <section class="panel" data-testid="health-stores">
      <h2>Stores found</h2>
      <table class="table">
        <thead>
          <tr>
            <th>Kind</th>
            <th class="num">Found</th>
            <th class="num">Chats read</th>
            <th class="num">Messages</th>
            <th class="num">Incomplete</th>
            <th class="num">Skipped</th>
            <th>Why</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => {
            const skipped = r.skipped.reduce((n, g) => n + g.paths.length, 0);
            return (
              <tr key={r.kind} data-testid="store-kind-row" data-kind={r.kind}>
                <td>
                  {KIND_LABEL[r.kind] ?? r.kind} <code class="muted small">{r.kind}</code>
                </td>
                <td class="num">{r.found}</td>
                <td class="num">{r.chats}</td>
                <td class="num">{r.messages}</td>
                <td class={`num${r.incomplete ? ' st-partial' : ''}`}>{r.incomplete}</td>
                <td class="num">{skipped}</td>
                <td class="small">
                  {r.problems.map(([why, n]) => (
                    <div key={why}>
                      {why} × {n}
                    </div>
                  ))}
                  {r.skipped.map((g) => (
                    <div key={g.reason} class="muted" title={g.paths.slice(0, 20).join('\n')} data-testid="store-skipped">
                      skipped: {g.reason} × {g.paths.length}
                    </div>
                  ))}
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
    </section>
  );
}

/** Cursor's own AI-code tracking database: code origin's source for edits made before Tether's
 * hooks. Shown where Cursor keeps one (read or not, and why). */
export function TrackingPanel({ doctor }: { doctor: Pick<Doctor, 'cursor_tracking'> }) {
  const dbs = (doctor.cursor_tracking ?? []).filter((c) => c.status !== 'missing');
  if (dbs.length === 0) return null;
  return (
    <section class="panel" data-testid="health-cursor-tracking">
      <h2>Cursor’s AI-code tracking</h2>
      <ul class="plain">
        {dbs.map((c) => {
          const v = c.coverage;
          return (
            <li key={c.path} data-status={c.status}>
              <code class="small">{c.path}</code>{' '}
              {v
                ? `${v.ai_chunks} AI chunks in ${v.files} files from ${v.chats} chats, ${v.commits} commits scored` +
                  (v.since_ms != null ? `, since ${new Date(v.since_ms).toLocaleDateString()}` : '')
                : `not read: ${c.reason ?? 'unknown'}`}
            </li>
          );
        })}
      </ul>
      <p class="muted small">{dbs[0].covers}.</p>
    </section>
  );
}

function InitDialog({ open, onClose }: { open: boolean; onClose: () => void }) {
  const [path, setPath] = useState('');
  const [plan, setPlan] = useState<{ path: string; r: InitResult } | null>(null);
  const [done, setDone] = useState<InitResult | null>(null);
  const [err, setErr] = useState<Error | null>(null);
  const [busy, setBusy] = useState(false);
  const close = () => {
    setPlan(null);
    setDone(null);
    setErr(null);
    onClose();
  };
  const run = async (dry: boolean) => {
    setBusy(true);
    setErr(null);
    try {
      const r = await api.init(path.trim(), dry);
      if (dry) setPlan({ path: path.trim(), r });
      else {
        setDone(r);
        setPlan(null);
        toast(`Set up ${path.trim()}`);
      }
    } catch (e) {
      setErr(e as Error);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog open={open} title="Set up a project for Cursor (tether init)" onClose={close} testid="init-dialog" wide>
      <form
        class="form"
        onSubmit={(e) => {
          e.preventDefault();
          if (path.trim()) run(true);
        }}
      >
        <label>
          Project folder (absolute path)
          <input
            type="text"
            value={path}
            placeholder="/home/you/code/project"
            onInput={(e) => {
              setPath((e.target as HTMLInputElement).value);
              setPlan(null);
              setDone(null);
            }}
            data-testid="init-path"
          />
        </label>
        <p class="muted small">
          Adds the tether MCP server and hooks to ~/.cursor, and the rule and /tether-* commands to the project’s .cursor folder.
          You see the changes first.
        </p>
        <ErrorNote error={err} testid="init-error" />
        {!plan && !done && (
          <div class="actions">
            <button type="button" onClick={close}>
              Cancel
            </button>
            <button type="submit" class="primary" disabled={busy || !path.trim()} data-testid="init-dry-run">
              Show changes
            </button>
          </div>
        )}
      </form>
      {plan && (
        <div data-testid="init-plan">
          {plan.r.changed.length === 0 ? (
            <p>Nothing to change: this project is set up already.</p>
          ) : (
            <>
              <p>These files change:</p>
              <ul class="plain">
                {plan.r.changed.map((c) => (
                  <li key={c}>
                    <code>{c}</code>
                  </li>
                ))}
              </ul>
            </>
          )}
          {plan.r.skipped.length > 0 && (
            <ul class="plain muted small">
              {plan.r.skipped.map((s) => (
                <li key={s}>skipped: {s}</li>
              ))}
            </ul>
          )}
          <div class="actions">
            <button type="button" onClick={close}>
              Cancel
            </button>
            <button type="button" class="primary" disabled={busy || plan.r.changed.length === 0} onClick={() => run(false)} data-testid="init-apply">
              Apply
            </button>
          </div>
          {plan.r.diff && <Diff text={plan.r.diff} />}
        </div>
      )}
      {done && (
        <div data-testid="init-done">
          <p>
            Done: {done.changed.length} file{done.changed.length === 1 ? '' : 's'} written. Enable the <b>tether</b> server in Cursor’s Settings → MCP.
          </p>
          <div class="actions">
            <button type="button" class="primary" onClick={close}>
              Close
            </button>
          </div>
        </div>
      )}
    </Dialog>
  );
}

/** `tether init --plugin` / `uninit --plugin`: Tether as a Cursor 3 local plugin, changes shown first. */
function PluginDialog({ open, onClose }: { open: boolean; onClose: () => void }) {
  const [plan, setPlan] = useState<{ remove: boolean; r: InitResult } | null>(null);
  const [done, setDone] = useState<string | null>(null);
  const [err, setErr] = useState<Error | null>(null);
  const [busy, setBusy] = useState(false);
  const close = () => {
    setPlan(null);
    setDone(null);
    setErr(null);
    onClose();
  };
  const run = async (remove: boolean, dry: boolean) => {
    setBusy(true);
    setErr(null);
    try {
      const r = await api.initPlugin(dry, remove);
      if (dry) setPlan({ remove, r });
      else {
        setPlan(null);
        setDone(
          remove
            ? `Removed ${r.changed.length} file${r.changed.length === 1 ? '' : 's'}. Restart Cursor to unload the plugin.`
            : `Wrote ${r.changed.length} file${r.changed.length === 1 ? '' : 's'}. Restart Cursor to load the plugin; it reads the token from TETHER_TOKEN in Cursor’s environment.`,
        );
      }
    } catch (e) {
      setErr(e as Error);
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog open={open} title="Tether as a Cursor 3 plugin (tether init --plugin)" onClose={close} testid="plugin-dialog" wide>
      <p class="muted small">
        Cursor 3.9 and later load plugins from ~/.cursor/plugins/local. This writes Tether’s there (MCP server with the token taken from
        TETHER_TOKEN, hooks, rule, skill and /tether-* commands) and nothing else of Cursor’s. Older Cursor: use Set up a project…
      </p>
      <ErrorNote error={err} testid="plugin-error" />
      {!plan && !done && (
        <div class="actions">
          <button type="button" onClick={close}>
            Cancel
          </button>
          <button type="button" disabled={busy} onClick={() => run(true, true)} data-testid="plugin-remove-dry-run">
            Remove…
          </button>
          <button type="button" class="primary" disabled={busy} onClick={() => run(false, true)} data-testid="plugin-dry-run">
            Show changes
          </button>
        </div>
      )}
      {plan && (
        <div data-testid="plugin-plan">
          {plan.r.changed.length === 0 ? (
            <p>Nothing to change: the plugin is {plan.remove ? 'not installed' : 'installed and current'}.</p>
          ) : (
            <ul class="plain">
              {plan.r.changed.map((c) => (
                <li key={c}>
                  <code>{c}</code>
                </li>
              ))}
            </ul>
          )}
          {plan.r.skipped.length > 0 && (
            <ul class="plain muted small">
              {plan.r.skipped.map((s) => (
                <li key={s}>note: {s}</li>
              ))}
            </ul>
          )}
          <div class="actions">
            <button type="button" onClick={close}>
              Cancel
            </button>
            <button
              type="button"
              class={plan.remove ? 'danger' : 'primary'}
              disabled={busy || plan.r.changed.length === 0}
              onClick={() => run(plan.remove, false)}
              data-testid="plugin-apply"
            >
              {plan.remove ? 'Remove' : 'Install'}
            </button>
          </div>
          {plan.r.diff && <Diff text={plan.r.diff} />}
        </div>
      )}
      {done && (
        <div data-testid="plugin-done">
          <p>{done}</p>
          <div class="actions">
            <button type="button" class="primary" onClick={close}>
              Close
            </button>
          </div>
        </div>
      )}
    </Dialog>
  );
}

/** A unified diff with added / removed lines coloured (text only, never HTML). */
function Diff({ text }: { text: string }) {
  return (
    <pre class="diff" data-testid="init-diff">
      {text.split('\n').map((l, i) => (
        <span key={i} class={l.startsWith('+++') || l.startsWith('---') ? 'd-file' : l.startsWith('+') ? 'd-add' : l.startsWith('-') ? 'd-del' : l.startsWith('@@') ? 'd-hunk' : ''}>
          {l}
          {'\n'}
        </span>
      ))}
    </pre>
  );
}

/** Cursor Cloud's environment test, on demand (it asks Cursor whether the key is valid). */
/** Where the board is: this machine's own, or a team's PostgreSQL (and how it answers). */
function TeamPanel() {
  const [team, setTeam] = useState<TeamStatus | null>(null);
  const [form, setForm] = useState({ url: '', machine: '', password: '' });
  // A client certificate and its key, read from the files picked (PEM text, sent once, kept in
  // the OS keyring by the daemon).
  const [cert, setCert] = useState({ cert: '', key: '' });
  const [busy, setBusy] = useState(false);
  const load = () => api.team().then(setTeam, () => {});
  useEffect(() => {
    load();
    const i = setInterval(load, 10_000);
    return () => clearInterval(i);
  }, []);
  const join = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    try {
      setTeam(
        await api.teamJoin({
          url: form.url,
          machine: form.machine || undefined,
          password: form.password || undefined,
          client_cert: cert.cert || undefined,
          client_key: (cert.cert && cert.key) || undefined,
        }),
      );
      setForm({ ...form, password: '' });
      setCert({ cert: '', key: '' });
      toast('Joined the team: the board is on the team database now');
    } catch (err) {
      reportError(err, 'Join the team');
    } finally {
      setBusy(false);
    }
  };
  const leave = async () => {
    const ok = await confirmDialog(
      'Leave the team?',
      'The board goes back to this machine’s own, as it was before joining. Nothing is copied either way; the team keeps what it has.',
      'Leave',
    );
    if (!ok) return;
    try {
      setTeam(await api.teamLeave());
    } catch (err) {
      reportError(err, 'Leave the team');
    }
  };
  const importLocal = async () => {
    setBusy(true);
    try {
      const r = await api.teamImportLocal();
      toast(`Copied to the team: ${r.created.length} new, ${r.updated.length} refreshed, ${r.unchanged.length} unchanged`);
    } catch (err) {
      reportError(err, 'Copy tasks to the team');
    } finally {
      setBusy(false);
    }
  };
  if (!team) return null;
  if (!team.joined) {
    return (
      <section class="panel" data-testid="health-team">
        <h2>Team</h2>
        <p class="muted small">
          The board (tasks, agents, signals, runs) is this machine’s own. Join a team’s PostgreSQL to share it with other machines;
          chat history stays here.
        </p>
        <form class="form" onSubmit={join}>
          <label>
            Team database
            <input
              required
              placeholder="postgres://USER@HOST:PORT/DB"
              value={form.url}
              onInput={(e) => setForm({ ...form, url: e.currentTarget.value })}
              data-testid="team-url"
            />
          </label>
          <div class="form-row">
            <label>
              This machine’s name
              <input
                placeholder="default: the host name"
                value={form.machine}
                onInput={(e) => setForm({ ...form, machine: e.currentTarget.value })}
                data-testid="team-machine-name"
              />
            </label>
            <label>
              Password (kept in the OS keyring)
              <input
                type="password"
                placeholder="else PGPASSWORD or ~/.pgpass"
                value={form.password}
                onInput={(e) => setForm({ ...form, password: e.currentTarget.value })}
                data-testid="team-password"
              />
            </label>
          </div>
          <details>
            <summary class="small">Client certificate (for a server that asks for one)</summary>
            <div class="form-row">
              <label>
                Certificate (PEM)
                <input
                  type="file"
                  accept=".crt,.pem,.cer"
                  onChange={async (e) => setCert({ ...cert, cert: (await e.currentTarget.files?.[0]?.text()) ?? '' })}
                  data-testid="team-client-cert"
                />
              </label>
              <label>
                Private key (PEM), unless in the certificate’s file
                <input
                  type="file"
                  accept=".key,.pem"
                  onChange={async (e) => setCert({ ...cert, key: (await e.currentTarget.files?.[0]?.text()) ?? '' })}
                  data-testid="team-client-key"
                />
              </label>
            </div>
            <p class="muted small">Kept with the password in the OS keyring; the files may go afterwards.</p>
          </details>
          <div class="actions">
            <button type="submit" class="primary" disabled={busy || !form.url.trim()} data-testid="team-join">
              {busy ? 'Joining…' : 'Join the team'}
            </button>
          </div>
        </form>
      </section>
    );
  }
  return (
    <section class="panel" data-testid="health-team">
      <h2>Team</h2>
      {!team.reachable && (
        <p class="notice danger-text" data-testid="team-unreachable">
          Team database unreachable: {team.error}. The board waits for it; local history keeps working.
        </p>
      )}
      <dl class="dl">
        <dt>Database</dt>
        <dd>
          <code>{team.database}</code>
        </dd>
        <dt>This machine</dt>
        <dd data-testid="team-machine">{team.machine}</dd>
        <dt>Latency</dt>
        <dd>{team.reachable && team.latency_ms != null ? `${team.latency_ms} ms` : '—'}</dd>
        <dt>Teammates' runs here</dt>
        <dd data-testid="team-runner-policy">
          {team.runner
            ? `taken as a runner: from ${team.runner_policy.people.join(', ') || 'nobody'}, up to ${team.runner_policy.max_permissions} permissions, ${team.runner_policy.repos.length ? `in ${team.runner_policy.repos.join(', ')}` : 'in any repository'}`
            : 'not a runner: a teammate’s run that would write or run commands here waits for your approval (Inbox)'}
        </dd>
      </dl>
      {team.machines.length > 0 && (
        <table class="table small" data-testid="team-machines">
          <thead>
            <tr>
              <th>Machine</th>
              <th>Person</th>
              <th>Host</th>
              <th>Runner</th>
              <th>Last seen</th>
            </tr>
          </thead>
          <tbody>
            {team.machines.map((m) => (
              <tr key={m.name}>
                <td>{m.name === team.machine ? <b>{m.name}</b> : m.name}</td>
                <td>{m.person || '—'}</td>
                <td>{m.host}</td>
                <td>{m.runner ? (m.labels.length ? m.labels.join(', ') : 'yes') : '—'}</td>
                <td>{m.seen_ago_ms < 60_000 ? `${Math.round(m.seen_ago_ms / 1000)} s ago` : `${Math.round(m.seen_ago_ms / 60_000)} min ago`}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <div class="actions">
        <button type="button" onClick={importLocal} disabled={busy} data-testid="team-import-local" title="Copies this machine’s own tasks to the team’s board; again refreshes them, never duplicates">
          Copy this machine’s tasks to the team
        </button>
        <button type="button" class="danger" onClick={leave} data-testid="team-leave">
          Leave the team
        </button>
      </div>
    </section>
  );
}

function CloudPanel() {
  const [checks, setChecks] = useState<CloudCheck[] | null>(null);
  const [busy, setBusy] = useState(false);
  const run = () => {
    setBusy(true);
    api
      .cloudDoctor()
      .then((r) => setChecks(r.checks), reportError)
      .finally(() => setBusy(false));
  };
  return (
    <section class="panel" data-testid="health-cloud">
      <h2>Cursor Cloud</h2>
      <p class="muted small">
        Cloud runs launch Cursor Cloud agents on GitHub repositories. Set up with <code>tether cloud login</code>; a public URL
        (<code>tether cloud webhook</code>) adds webhooks and lets agents call back.
      </p>
      <button type="button" onClick={run} disabled={busy} data-testid="cloud-check">
        {busy ? 'Checking…' : checks ? 'Check again' : 'Check the setup'}
      </button>
      {checks && (
        <ul class="plain cloud-checks">
          {checks.map((c) => (
            <li key={c.name} data-testid="cloud-check-row" data-name={c.name} data-status={c.status}>
              <span class={`check-mark ${c.status}`}>{c.status === 'ok' ? '✓' : c.status === 'warn' ? '!' : '✗'}</span> <b>{c.name.replace('_', ' ')}</b>{' '}
              {c.detail}
              {c.fix && <div class="muted small">→ {c.fix}</div>}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

const TOKEN_STORE: Record<string, string> = {
  keyring: 'OS keyring',
  file: '0600 file in the data dir',
  fallback: '0600 file in the data dir',
  env: 'TETHER_TOKEN environment variable',
};

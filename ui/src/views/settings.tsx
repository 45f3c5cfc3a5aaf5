import { useEffect, useState } from 'preact/hooks';

import { api } from '../api';
import { ErrorNote } from '../components';
import { toast, useAsync, useLive } from '../hooks';
import type { AgentSettings, AgentStatus, Location, Settings, SettingsPatch, SettingsView as View } from '../types';
import { followPort, isTauri } from '../util';

function Locations({ title, list, testid }: { title: string; list: Location[]; testid: string }) {
  return (
    <div data-testid={testid}>
      <h3>{title}</h3>
      {list.length === 0 ? (
        <p class="muted small">none detected</p>
      ) : (
        <ul class="plain">
          {list.map((l) => (
            <li key={l.path}>
              <code>{l.path}</code>{' '}
              <span class={`status ${l.exists ? 'st-complete' : 'st-missing'}`}>{l.exists ? 'found' : 'missing'}</span>
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

const LABELS: Record<string, string> = {
  cursor_user_dir: 'Cursor User folder',
  cursor_home: 'Cursor home',
  port: 'Port',
  notifications: 'Notifications',
  launch_at_login: 'Launch at login',
  keyring_only: 'Keyring only',
};

/** The form's text fields, as typed; an empty field means "detect" / "default". */
interface Draft {
  cursor_user_dir: string;
  cursor_home: string;
  port: string;
}

const draftOf = (v: View): Draft => ({
  cursor_user_dir: v.settings.cursor_user_dir ?? '',
  cursor_home: v.settings.cursor_home ?? '',
  port: v.settings.port == null ? '' : String(v.settings.port),
});

/** What to send for the text fields: only what changed, with "" as null (back to the default). */
export function draftPatch(saved: Draft, draft: Draft): SettingsPatch | string {
  const patch: SettingsPatch = {};
  if (draft.cursor_user_dir.trim() !== saved.cursor_user_dir) patch.cursor_user_dir = draft.cursor_user_dir.trim() || null;
  if (draft.cursor_home.trim() !== saved.cursor_home) patch.cursor_home = draft.cursor_home.trim() || null;
  if (draft.port.trim() !== saved.port) {
    const t = draft.port.trim();
    if (t && !/^\d+$/.test(t)) return `Port: “${t}” is not a number`;
    patch.port = t ? Number(t) : null;
  }
  return patch;
}

function Overridden({ view, field }: { view: View; field: keyof Settings }) {
  const by = view.overridden[field];
  if (!by) return null;
  return (
    <p class="muted small" data-testid={`overridden-${field}`}>
      Overridden by <code>{by}</code> while this daemon runs.
    </p>
  );
}

const DEFAULT_PORT = 47821;

/** The other agents a setting turns on or off, by their settings key and chat `source`. */
const AGENTS: { key: keyof AgentSettings; agent: string; label: string }[] = [
  { key: 'claude_code', agent: 'claude-code', label: 'Claude Code' },
  { key: 'codex', agent: 'codex', label: 'Codex CLI' },
  { key: 'gemini', agent: 'gemini', label: 'Gemini CLI' },
];

/** What doctor found of an agent, in a line: files, chats read, what was passed over and why. */
export function agentFound(a: AgentStatus): string {
  const parts = [`${a.files} file${a.files === 1 ? '' : 's'}, ${a.chats} chat${a.chats === 1 ? '' : 's'}`];
  const problems = Object.entries(a.problems).map(([k, n]) => `${k} × ${n}`);
  if (a.incomplete > 0) parts.push(`${a.incomplete} read in part (${problems.join(', ')})`);
  if (a.skipped.length > 0) parts.push(`${a.skipped.length} passed over (${[...new Set(a.skipped.map((s) => s.reason))].join('; ')})`);
  return parts.join(' · ');
}

export function SettingsView() {
  const doctor = useAsync(() => api.doctor(), []);
  const view = useAsync(() => api.settings(), []);
  useLive(['settings'], (data) => {
    const failed = (data as { error?: string } | null)?.error;
    if (failed) setErr(new Error(`The saved settings could not be applied: ${failed}`));
    view.reload();
  });
  const desktop = isTauri();
  const d = doctor.data;
  const v = view.data;
  const [draft, setDraft] = useState<Draft | null>(null);
  const [busy, setBusy] = useState(false);
  const [err, setErr] = useState<unknown>(null);
  // The checkboxes show what was clicked at once, while it is saved.
  const [pending, setPending] = useState<SettingsPatch>({});
  useEffect(() => {
    if (v) setDraft(draftOf(v));
    setPending({});
  }, [v]);

  const save = async (patch: SettingsPatch) => {
    setPending((p) => ({ ...p, ...patch }));
    setBusy(true);
    setErr(null);
    try {
      const next = await api.patchSettings(patch);
      if (patch.port !== undefined && next.restart_needed.includes('port')) {
        // The daemon moves to the new port at once; this page follows it there.
        const port = next.settings.port ?? DEFAULT_PORT;
        toast(`Saved. Moving to port ${port}…`);
        if (await followPort(port)) return;
        setErr(new Error(`Tether did not move to port ${port}; see its log.`));
      } else {
        toast('Saved.');
      }
      view.reload();
    } catch (e) {
      setErr(e);
      setPending({});
    } finally {
      setBusy(false);
    }
  };
  const field = (key: keyof Draft, label: string, placeholder: string, type = 'text') =>
    draft && (
      <label>
        {label}
        <input
          type={type}
          value={draft[key]}
          placeholder={placeholder}
          onInput={(e) => setDraft({ ...draft, [key]: (e.target as HTMLInputElement).value })}
          data-testid={`setting-${key.replace(/_/g, '-')}`}
        />
      </label>
    );
  const toggle = (key: 'notifications' | 'launch_at_login' | 'keyring_only', fallback: boolean, testid: string, label: string) => (
    <label class="check">
      <input
        type="checkbox"
        checked={pending[key] ?? v?.settings[key] ?? fallback}
        disabled={!v || busy}
        onChange={(e) => save({ [key]: (e.target as HTMLInputElement).checked })}
        data-testid={testid}
      />{' '}
      {label}
    </label>
  );
  const dirty = v && draft && JSON.stringify(draftOf(v)) !== JSON.stringify(draft);

  return (
    <div class="page">
      <div class="toolbar">
        <h1>Settings</h1>
      </div>
      <ErrorNote error={doctor.error ?? view.error} />
      {v && v.restart_needed.length > 0 && (
        <p class="notice" data-testid="restart-needed">
          Saved, not in use yet: {v.restart_needed.map((k) => LABELS[k] ?? k).join(', ')}. Tether applies saved settings at
          once; if this stays, the log says why, and they apply when Tether next starts
          {desktop ? ' (tray menu → Restart Tether)' : ' (stop and run tether serve again)'}.
        </p>
      )}
      <form
        class="form"
        onSubmit={(e) => {
          e.preventDefault();
          if (!v || !draft) return;
          const p = draftPatch(draftOf(v), draft);
          if (typeof p === 'string') setErr(new Error(p));
          else save(p);
        }}
      >
        <section class="panel" data-testid="settings-cursor">
          <h2>Cursor data</h2>
          {d && (
            <>
              <Locations title="Cursor User folders (IDE chats)" list={d.cursor_user_dirs} testid="cursor-user-dirs" />
              <Locations title="Cursor homes (CLI chats and transcripts)" list={d.cursor_homes} testid="cursor-homes" />
              {d.discovery_notes.length > 0 && (
                <ul class="plain muted small">
                  {d.discovery_notes.map((n) => (
                    <li key={n}>{n}</li>
                  ))}
                </ul>
              )}
            </>
          )}
          {field('cursor_user_dir', 'Use another Cursor User folder', 'detected (leave empty)')}
          {v && <Overridden view={v} field="cursor_user_dir" />}
          {field('cursor_home', 'Use another Cursor home (~/.cursor)', 'detected (leave empty)')}
          {v && <Overridden view={v} field="cursor_home" />}
          {d && <p class="muted small">Tether’s own data: <code>{d.data_dir}</code></p>}
        </section>
        <section class="panel" data-testid="settings-server">
          <h2>Server</h2>
          <dl class="dl">
            <dt>Listening on</dt>
            <dd data-testid="settings-port">{v ? String(v.port) : '—'}</dd>
          </dl>
          {field('port', 'Port', '47821 (leave empty for the default)', 'text')}
          {v && <Overridden view={v} field="port" />}
          <p class="muted small">
            Loopback only. Tether moves at once and this page follows; run <code>tether init</code> again so Cursor
            learns the new URL.
          </p>
        </section>
        <ErrorNote error={err} testid="settings-error" />
        <div class="actions">
          <button type="submit" class="primary" disabled={busy || !dirty} data-testid="settings-save">
            Save
          </button>
        </div>
      </form>
      <section class="panel" data-testid="settings-desktop">
        <h2>Desktop</h2>
        {toggle('notifications', true, 'setting-notifications', 'Notifications for things that need attention')}
        {toggle('launch_at_login', false, 'setting-autostart', 'Launch the desktop app at login')}
        {!desktop && (
          <p class="muted small" data-testid="desktop-only-note">
            The desktop app applies these; this browser only saves them.
          </p>
        )}
      </section>
      <section class="panel" data-testid="settings-agents">
        <h2>Other agents</h2>
        <p class="muted small">
          Their chats are read (never written) beside Cursor’s: listed, searched, in MCP and in usage. Turned off, an
          agent’s folders are not looked at and its chats leave the index.
        </p>
        {AGENTS.map(({ key, agent, label }) => {
          const a = d?.agents.find((x) => x.agent === agent);
          return (
            <div key={agent} data-testid={`agent-${agent}`}>
              <label class="check">
                <input
                  type="checkbox"
                  checked={pending.agents?.[key] ?? v?.settings.agents[key] ?? true}
                  disabled={!v || busy}
                  onChange={(e) =>
                    save({ agents: { [key]: (e.target as HTMLInputElement).checked } } as unknown as SettingsPatch)
                  }
                  data-testid={`setting-agent-${agent}`}
                />{' '}
                Read {label}’s chats
              </label>
              {a && a.enabled && (
                <p class="muted small">
                  {a.folders.map((f) => `${f.path}${f.exists ? '' : ' (not found)'}`).join(', ')}
                  {a.files > 0 && ` · ${agentFound(a)}`}
                </p>
              )}
            </div>
          );
        })}
      </section>
      {v && <Budgets settings={v.settings} onSaved={() => view.reload()} />}
      <section class="panel" data-testid="settings-security">
        <h2>Security</h2>
        {toggle(
          'keyring_only',
          false,
          'setting-keyring-only',
          'Keep the MCP token only in the OS keyring: with none reachable, refuse to start instead of using a 0600 file',
        )}
        <p class="muted small">Applies when Tether next starts.</p>
      </section>
    </div>
  );
}

/** Budgets for all runs: each run's (unless it sets its own) and the day's. Role budgets, the
 * cache-read rule and price overrides are `tether settings set usage.…`. */
function Budgets({ settings, onSaved }: { settings: Settings; onSaved: () => void }) {
  const [run, setRun] = useState(settings.usage.run_budget ?? '');
  const [daily, setDaily] = useState(settings.usage.daily_budget ?? '');
  const [err, setErr] = useState<unknown>(null);
  useEffect(() => {
    setRun(settings.usage.run_budget ?? '');
    setDaily(settings.usage.daily_budget ?? '');
  }, [settings.usage.run_budget, settings.usage.daily_budget]);
  const save = (e: Event) => {
    e.preventDefault();
    setErr(null);
    // The server takes the usage settings field by field.
    const patch = { usage: { run_budget: run.trim() || null, daily_budget: daily.trim() || null } } as unknown as SettingsPatch;
    api.patchSettings(patch).then(
      () => (toast('Budgets saved'), onSaved()),
      (e2) => setErr(e2),
    );
  };
  const roles = Object.entries(settings.usage.role_budgets);
  return (
    <form class="panel form" onSubmit={save} data-testid="settings-budgets">
      <h2>Budgets</h2>
      <label>
        Each run may spend (unless it sets its own)
        <input type="text" value={run} placeholder="no limit (e.g. 200k or $2)" onInput={(e) => setRun((e.target as HTMLInputElement).value)} data-testid="setting-run-budget" />
      </label>
      <label>
        All runs may spend in a day
        <input type="text" value={daily} placeholder="no limit (e.g. 2M or $10)" onInput={(e) => setDaily((e.target as HTMLInputElement).value)} data-testid="setting-daily-budget" />
      </label>
      {roles.length > 0 && (
        <p class="muted small">
          Per role and day: {roles.map(([r, b]) => `${r} ${b}`).join(', ')} (<code>tether settings set usage.role_budgets.ROLE …</code>).
        </p>
      )}
      <p class="muted small">
        Tokens (all of them{settings.usage.count_cache_reads ? ', cache reads included' : ', without cache reads'}) or estimated dollars. A run that goes over
        stops; once today's budget is spent, new runs wait until tomorrow.
      </p>
      <ErrorNote error={err} testid="budgets-error" />
      <div class="actions">
        <button type="submit" data-testid="budgets-save">
          Save budgets
        </button>
      </div>
    </form>
  );
}

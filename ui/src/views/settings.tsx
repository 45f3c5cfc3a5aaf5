import { api } from '../api';
import { ErrorNote } from '../components';
import { useAsync } from '../hooks';
import type { Location } from '../types';
import { isTauri } from '../util';

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

export function portOf(url: string | undefined): string {
  if (!url) return '';
  try {
    return new URL(url).port || '80';
  } catch {
    return '';
  }
}

export function SettingsView() {
  const doctor = useAsync(() => api.doctor(), []);
  const status = useAsync(() => api.status(), []);
  const desktop = isTauri();
  const d = doctor.data;
  return (
    <div class="page">
      <div class="toolbar">
        <h1>Settings</h1>
      </div>
      <ErrorNote error={doctor.error ?? status.error} />
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
            <p class="muted small">
              To use other folders, start the daemon with <code>TETHER_CURSOR_DIR</code> / <code>TETHER_CURSOR_HOME</code> (or
              <code> --cursor-dir</code>). Tether’s own data: <code>{d.data_dir}</code>
            </p>
          </>
        )}
      </section>
      <section class="panel" data-testid="settings-server">
        <h2>Server</h2>
        <dl class="dl">
          <dt>Port</dt>
          <dd data-testid="settings-port">{portOf(status.data?.url) || '—'}</dd>
          <dt>Address</dt>
          <dd>
            <code>{status.data?.url ?? '—'}</code> (loopback only)
          </dd>
        </dl>
        <p class="muted small">
          Change it with <code>tether serve --port N</code> or <code>TETHER_PORT</code>, then run <code>tether init</code> again.
        </p>
      </section>
      <section class="panel" data-testid="settings-desktop">
        <h2>Desktop</h2>
        <label class="check">
          <input type="checkbox" disabled={!desktop} data-testid="setting-notifications" /> Notifications for things that need attention
        </label>
        <label class="check">
          <input type="checkbox" disabled={!desktop} data-testid="setting-autostart" /> Launch at login
        </label>
        {!desktop && (
          <p class="muted small" data-testid="desktop-only-note">
            These are available in the desktop app.
          </p>
        )}
      </section>
    </div>
  );
}

import { useEffect, useState } from 'preact/hooks';
import type { JSX } from 'preact';

import { api, ApiError } from './api';
import type { StatusReport } from './gen/server';
import { ConfirmHost, Empty, ErrorNote, Toasts } from './components';
import { live, type ConnState } from './events';
import { authLost, navigate, useRoute, useSignal } from './hooks';
import { Icon } from './icons';
import { Palette } from './palette';
import type { View } from './router';
import { followPort } from './util';
import { AgentsView } from './views/agents';
import { CodeView } from './views/code';
import { HealthView } from './views/health';
import { InboxView, useUnread } from './views/inbox';
import { RunsView } from './views/runs';
import { searchInputId, SessionsView } from './views/sessions';
import { SettingsView } from './views/settings';
import { TagsView } from './views/tags';
import { TasksView } from './views/tasks';

const NAV: { view: View; label: string }[] = [
  { view: 'sessions', label: 'Sessions' },
  { view: 'tasks', label: 'Tasks' },
  { view: 'runs', label: 'Runs' },
  { view: 'inbox', label: 'Inbox' },
  { view: 'insights', label: 'Insights' },
  { view: 'code', label: 'Code' },
  { view: 'tags', label: 'Tags' },
  { view: 'agents', label: 'Agents' },
  { view: 'health', label: 'Health' },
  { view: 'settings', label: 'Settings' },
];

/** Focuses an element that a navigation is about to render: tries for a few frames, since the view
 * may mount after the next paint. */
function focusWhenRendered(id: string, frames = 30) {
  const el = document.getElementById(id) as HTMLInputElement | null;
  if (el) el.focus();
  else if (frames > 0) requestAnimationFrame(() => focusWhenRendered(id, frames - 1));
}

export function App() {
  const route = useRoute();
  const lost = useSignal(authLost);
  const [boot, setBoot] = useState<{ status?: StatusReport; error?: ApiError }>({});
  const [palette, setPalette] = useState(false);
  const [conn, setConn] = useState<ConnState>(live.state);
  const unread = useUnread(!!boot.status && !lost);

  useEffect(() => {
    api.status().then(
      (status) => {
        setBoot({ status });
        live.start();
      },
      (error: ApiError) => {
        if (error.status === 401) authLost.set(true);
        setBoot({ error });
      },
    );
    // A saved port moved the daemon: every open page follows it.
    const offMove = live.on('settings', (d) => {
      const to = (d as { moving_to?: number } | null)?.moving_to;
      if (to) void followPort(to);
    });
    const off = live.onState((s) => {
      setConn(s);
      // The stream failed: if the daemon restarted, the login cookie is gone; say so.
      if (s === 'error') api.status().catch((e: ApiError) => e.status === 401 && authLost.set(true));
    });
    return () => {
      off();
      offMove();
      live.stop();
    };
  }, []);

  useEffect(() => {
    if (lost) live.stop();
  }, [lost]);

  useEffect(() => {
    const onKey = (e: KeyboardEvent) => {
      if ((e.ctrlKey || e.metaKey) && e.key.toLowerCase() === 'k') {
        e.preventDefault();
        setPalette((p) => !p);
        return;
      }
      const t = e.target as HTMLElement | null;
      const typing = t && (t.tagName === 'INPUT' || t.tagName === 'TEXTAREA' || t.tagName === 'SELECT' || t.isContentEditable);
      if (e.key === '/' && !typing && !e.ctrlKey && !e.metaKey && !e.altKey) {
        e.preventDefault();
        if (route.view !== 'sessions') navigate('sessions');
        focusWhenRendered(searchInputId);
      }
    };
    addEventListener('keydown', onKey);
    return () => removeEventListener('keydown', onKey);
  }, [route.view]);

  if (lost) {
    return (
      <main class="center" data-testid="login-needed">
        <Empty title="Log in to Tether" testid="login-needed-box">
          <p>
            Run <code>tether open</code> in a terminal to get a login link for this browser (it works once, for 60 seconds).
          </p>
          <p class="muted small">The daemon must be running (<code>tether serve</code>).</p>
        </Empty>
      </main>
    );
  }
  if (boot.error && boot.error.status === 0) {
    return (
      <main class="center" data-testid="daemon-down">
        <Empty title="Tether’s daemon is not answering">
          <p>
            Start it with <code>tether serve</code> (or <code>scripts/run</code>), then reload this page.
          </p>
          <p class="muted small">{boot.error.message}</p>
        </Empty>
      </main>
    );
  }

  return (
    <div class="app">
      <nav class="nav" aria-label="Views">
        <div class="brand">
          <span class="logo">
            <Icon name="logo" size={20} />
          </span>
          Tether
        </div>
        <ul>
          {NAV.map((n) => (
            <li key={n.view}>
              <a href={`#/${n.view}`} class={route.view === n.view ? 'current' : ''} aria-current={route.view === n.view ? 'page' : undefined} data-testid={`nav-${n.view}`}>
                <span class="nav-icon">
                  <Icon name={n.view} />
                </span>
                {n.label}
                {n.view === 'inbox' && unread > 0 && (
                  <span class="badge" data-testid="inbox-unread" title={`${unread} unread`}>
                    {unread}
                  </span>
                )}
              </a>
            </li>
          ))}
        </ul>
        <div class="nav-foot">
          <button type="button" class="palette-hint" onClick={() => setPalette(true)} data-testid="open-palette">
            Commands <kbd>Ctrl</kbd>+<kbd>K</kbd>
          </button>
          <div class={`conn conn-${conn}`} data-testid="conn" data-state={conn} title="Live updates">
            <span class="dot" aria-hidden="true" /> {conn === 'open' ? 'live' : conn === 'connecting' ? 'connecting…' : 'reconnecting…'}
          </div>
          {boot.status && <div class="muted small">v{boot.status.version}</div>}
        </div>
      </nav>
      <main class="main" data-testid={`view-${route.view}`}>
        {route.view === 'sessions' && <SessionsView route={route} />}
        {route.view === 'tasks' && <TasksView route={route} />}
        {route.view === 'runs' && <RunsView route={route} />}
        {route.view === 'inbox' && <InboxView route={route} />}
        {route.view === 'code' && <CodeView route={route} />}
        {route.view === 'tags' && <TagsView />}
        {route.view === 'agents' && <AgentsView />}
        {route.view === 'insights' && <LazyInsights />}
        {route.view === 'health' && <HealthView />}
        {route.view === 'settings' && <SettingsView />}
      </main>
      <Palette open={palette} onClose={() => setPalette(false)} />
      <ConfirmHost />
      <Toasts />
    </div>
  );
}

/** The Insights view and its chart library load only when it is opened (a chunk of their own). */
function LazyInsights() {
  const [View, setView] = useState<null | (() => JSX.Element)>(null);
  const [err, setErr] = useState<unknown>(null);
  useEffect(() => {
    import('./views/insights').then((m) => setView(() => m.InsightsView), setErr);
  }, []);
  if (err) return <ErrorNote error={err} />;
  return View ? <View /> : <div class="page muted">Loading…</div>;
}

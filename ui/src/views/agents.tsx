import { useEffect, useState } from 'preact/hooks';

import { api } from '../api';
import { Empty, ErrorNote } from '../components';
import { navigate, toast, useAsync, useLive, useTicker } from '../hooks';
import { ago, shortPath } from '../util';

export function AgentsView() {
  const agents = useAsync(() => api.agents(), []);
  useLive(['agents', 'tasks', 'signals'], () => agents.reload());
  useTicker(15_000);
  const [err, setErr] = useState<unknown>(null);
  // The box shows the user's choice at once; a list reload in flight must not flip it back.
  const [wanted, setWanted] = useState<Record<string, boolean>>({});
  useEffect(() => {
    setWanted((w) => {
      const left = Object.fromEntries(
        Object.entries(w).filter(([id, on]) => agents.data?.find((a) => a.id === id)?.wake_by_resume !== on),
      );
      return Object.keys(left).length === Object.keys(w).length ? w : left;
    });
  }, [agents.data]);
  const toggleWake = async (id: string, on: boolean) => {
    setErr(null);
    setWanted((w) => ({ ...w, [id]: on }));
    try {
      await api.setWakeByResume(id, on);
      toast(on ? 'Woken by a follow-up run when signals wait.' : 'No longer woken by a follow-up run.');
    } catch (e) {
      setErr(e);
      setWanted(({ [id]: _, ...rest }) => rest);
    }
    agents.reload();
  };
  const list = [...(agents.data ?? [])].sort(
    (a, b) => rank(a.status) - rank(b.status) || b.last_seen.localeCompare(a.last_seen),
  );
  return (
    <div class="page">
      <div class="toolbar">
        <h1>Agents</h1>
        <span class="muted small">Cursor chats and other clients that joined the board (session_start), Tether's runs, and people at the CLI.</span>
      </div>
      <ErrorNote error={agents.error ?? err} />
      {agents.data && list.length === 0 ? (
        <Empty title="No agents yet" testid="agents-empty">
          <p>
            Run <code>tether init</code> in a project and enable the <b>tether</b> MCP server in Cursor. A chat appears
            here once it calls <code>session_start</code> or claims a task.
          </p>
        </Empty>
      ) : (
        <table class="table" data-testid="agents-table">
          <thead>
            <tr>
              <th>Name</th>
              <th>Status</th>
              <th>Kind</th>
              <th>Role</th>
              <th>Project</th>
              <th>Last seen</th>
              <th title="How signals reach it: full = a live stream or Cursor's hooks; resume = a chat Tether ran, woken by a follow-up run; degraded = only a notice on its next tool call">Surface</th>
              <th title="For chats Tether ran: start a follow-up run when signals wait for it (runs.resume_wakes_per_hour at most)">Wake by resume</th>
              <th title="Signals to it still waiting for a reply or a read">Unanswered</th>
              <th>Holds</th>
            </tr>
          </thead>
          <tbody>
            {list.map((a) => (
              <tr key={a.id} data-testid="agent-row" data-name={a.name}>
                <td>
                  <b>{a.name}</b>
                </td>
                <td>
                  <span class={`dot st-${a.status}`} aria-hidden="true" /> {a.status}
                </td>
                <td class="muted">{a.kind}</td>
                <td>{a.role ?? <span class="muted">—</span>}</td>
                <td title={a.project ?? ''}>{shortPath(a.project) || <span class="muted">—</span>}</td>
                <td class="muted">{ago(a.last_seen)}</td>
                <td data-testid="agent-surface">{a.surface ? <span class={`surface-${a.surface}`}>{a.surface}</span> : <span class="muted">—</span>}</td>
                <td>
                  {a.kind === 'run' ? (
                    <input
                      type="checkbox"
                      checked={wanted[a.id] ?? a.wake_by_resume}
                      aria-label={`Wake ${a.name} by a follow-up run`}
                      data-testid="agent-wake"
                      onChange={(e) => toggleWake(a.id, (e.target as HTMLInputElement).checked)}
                    />
                  ) : (
                    <span class="muted">—</span>
                  )}
                </td>
                <td data-testid="agent-obligations">
                  {a.open_obligations > 0 ? (
                    <button type="button" class="link" onClick={() => navigate('inbox', undefined, { agent: a.name })}>
                      {a.open_obligations}
                    </button>
                  ) : (
                    <span class="muted">0</span>
                  )}
                </td>
                <td>
                  {a.tasks.length === 0 ? (
                    <span class="muted">—</span>
                  ) : (
                    a.tasks.map((t) => (
                      <button key={t} type="button" class="link" onClick={() => navigate('tasks', t)}>
                        {t}
                      </button>
                    ))
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}

function rank(s: string): number {
  return s === 'working' ? 0 : s === 'idle' ? 1 : 2;
}

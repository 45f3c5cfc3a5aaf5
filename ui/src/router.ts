// The URL hash mirrors the view and what is open in it: #/sessions, #/sessions/<id>,
// #/tasks, #/tasks/T-3, #/tasks?view=list, #/runs, #/runs/R-2, #/runs?new=1&task=T-3, #/inbox, #/inbox/S-4, #/inbox?agent=ana&trace=…, #/tags,
// #/insights, #/agents, #/health, #/settings, #/code?path=/abs/file&line=12 (a file's lines and who wrote them). #/sessions?project=&source=&tag=&model=&day=&week= narrows the list.

export const VIEWS = ['sessions', 'tasks', 'runs', 'inbox', 'insights', 'code', 'tags', 'agents', 'health', 'settings'] as const;
export type View = (typeof VIEWS)[number];

export interface Route {
  view: View;
  /** The open chat or task, if any. */
  id?: string;
  params: Record<string, string>;
}

export function parseHash(hash: string): Route {
  const h = hash.replace(/^#\/?/, '');
  const [path, qs = ''] = h.split('?', 2);
  const [first, ...rest] = path.split('/');
  const view = (VIEWS as readonly string[]).includes(first) ? (first as View) : 'sessions';
  let id: string | undefined;
  if (view === first && rest.length) {
    try {
      id = decodeURIComponent(rest.join('/')) || undefined;
    } catch {
      id = undefined;
    }
  }
  const params: Record<string, string> = {};
  new URLSearchParams(qs).forEach((v, k) => (params[k] = v));
  return { view, id, params };
}

export function formatHash(r: { view: View; id?: string; params?: Record<string, string> }): string {
  let s = `#/${r.view}`;
  if (r.id) s += `/${encodeURIComponent(r.id)}`;
  const q = new URLSearchParams(Object.entries(r.params ?? {}).filter(([, v]) => v !== '' && v != null));
  const qs = q.toString();
  return qs ? `${s}?${qs}` : s;
}

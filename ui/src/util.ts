// Small formatting helpers.

export function ago(iso: string | null | undefined, now = Date.now()): string {
  if (!iso) return '—';
  const t = Date.parse(iso);
  if (Number.isNaN(t)) return iso;
  const s = Math.round((now - t) / 1000);
  if (s < 0) return 'just now';
  if (s < 45) return `${s}s ago`;
  if (s < 90 * 60) return `${Math.round(s / 60)}m ago`;
  if (s < 36 * 3600) return `${Math.round(s / 3600)}h ago`;
  if (s < 45 * 86400) return `${Math.round(s / 86400)}d ago`;
  return new Date(t).toISOString().slice(0, 10);
}

// One formatter for every date shown: `Date.toLocaleString` with options builds a new
// `Intl.DateTimeFormat` at each call (~0.3 ms in Chromium: ~30 ms of a long chat's open).
let dateTimeFormat: Intl.DateTimeFormat | undefined;

export function dateTime(iso: string | null | undefined): string {
  if (!iso) return '—';
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  dateTimeFormat ??= new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' });
  return dateTimeFormat.format(d);
}

export function duration(seconds: number): string {
  const s = Math.max(0, Math.floor(seconds));
  const d = Math.floor(s / 86400);
  const h = Math.floor((s % 86400) / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (d) return `${d}d ${h}h`;
  if (h) return `${h}h ${m}m`;
  if (m) return `${m}m ${s % 60}s`;
  return `${s}s`;
}

export function bytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let v = n;
  let i = -1;
  do {
    v /= 1024;
    i++;
  } while (v >= 1024 && i < units.length - 1);
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[i]}`;
}

/** "a, b ,c" → ["a","b","c"] (empty parts dropped, duplicates removed). */
export function splitList(s: string, sep: RegExp = /[,\n]/): string[] {
  return [...new Set(s.split(sep).map((x) => x.trim()).filter(Boolean))];
}

export function shortPath(p: string | null | undefined): string {
  if (!p) return '';
  const parts = p.replace(/\/+$/, '').split('/');
  return parts.length > 2 ? `…/${parts.slice(-2).join('/')}` : p;
}

export function isTauri(w: Window | undefined = globalThis.window): boolean {
  return !!w && '__TAURI_INTERNALS__' in w;
}

/**
 * Cursor's `cursor://file/<path>` link, which opens a folder or file in Cursor (the VS Code URL
 * handler). Windows paths become `/C:/…`.
 */
export function cursorOpenLink(path: string): string {
  let p = path.replace(/\\/g, '/');
  if (!p.startsWith('/')) p = `/${p}`;
  return `cursor://file${encodeURI(p).replace(/[?#]/g, encodeURIComponent)}`;
}

/** The agent a chat's `source` names, as a badge says it. */
const SOURCE_LABELS: Record<string, string> = {
  ide: 'IDE',
  cli: 'CLI',
  cloud: 'Cloud',
  'claude-code': 'Claude Code',
  codex: 'Codex',
  gemini: 'Gemini',
};

export function sourceLabel(source: string): string {
  return SOURCE_LABELS[source] ?? source;
}

/** Which agent a chat is of, for prose: Cursor (IDE, CLI, Cloud) or another agent. */
export function agentName(source: string): string {
  return ['ide', 'cli', 'cloud'].includes(source) || !(source in SOURCE_LABELS) ? 'Cursor' : sourceLabel(source);
}

/** The list's source filter: every chat, Cursor's by where they ran, or another agent's. */
export const SOURCE_FILTERS: { value: string; label: string }[] = [
  { value: '', label: 'All agents' },
  { value: 'ide', label: 'Cursor IDE' },
  { value: 'cli', label: 'Cursor CLI' },
  { value: 'cloud', label: 'Cursor Cloud' },
  { value: 'claude-code', label: 'Claude Code' },
  { value: 'codex', label: 'Codex' },
  { value: 'gemini', label: 'Gemini CLI' },
];

/** Cursor keeps prompt deeplinks under 8,000 characters. */
const DEEPLINK_MAX = 8000;

/**
 * A Cursor prompt deeplink that starts a new chat to continue an earlier one: Cursor opens with
 * the prompt filled in and the person confirms it (deeplinks never run by themselves). Cursor has
 * no link that reopens a given past chat, so the new chat reads the old one through Tether.
 */
export function cursorContinueLink(id: string, title: string, source = 'ide'): string {
  const short = title.length > 120 ? `${title.slice(0, 119)}…` : title;
  const text =
    `Continue the work of my earlier ${agentName(source)} chat “${short}” (Tether session ${id}). ` +
    `Read it with the tether MCP tool session_read (id ${id}), summarise where it stopped and what is left, then carry on.`;
  const url = `cursor://anysphere.cursor-deeplink/prompt?text=${encodeURIComponent(text)}`;
  return url.length <= DEEPLINK_MAX ? url : `cursor://anysphere.cursor-deeplink/prompt?text=${encodeURIComponent(text.slice(0, 2000))}`;
}

let moving: { port: number; done: Promise<boolean> } | null = null;

/**
 * Waits (up to 10 s) for the daemon to answer on `port`, then loads this page from there. The
 * save that moved it and the daemon's "moving" event both ask: they share one navigation, as a
 * second `location.assign` would abort the first.
 */
export function followPort(port: number): Promise<boolean> {
  if (moving?.port === port) return moving.done;
  const done = follow(port);
  moving = { port, done };
  void done.then((ok) => {
    if (!ok && moving?.done === done) moving = null;
  });
  return done;
}

async function follow(port: number): Promise<boolean> {
  const target = new URL(location.href);
  if (target.port === String(port)) return true;
  target.port = String(port);
  for (let i = 0; i < 50; i++) {
    try {
      // Another origin: an opaque answer says it listens. Cookies ignore the port: the login carries over.
      await fetch(new URL('/api/status', target), { mode: 'no-cors', cache: 'no-store' });
      location.assign(target.href);
      return true;
    } catch {
      await new Promise((r) => setTimeout(r, 200));
    }
  }
  return false;
}

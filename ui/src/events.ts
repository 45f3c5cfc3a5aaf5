// Live updates from `GET /api/events` (Server-Sent Events: hello, sessions, tasks, agents, signals,
// runs, index, settings, usage, budget), and one run's event stream (`followRun`).
// With the cookie (browser) this is a plain EventSource; when a bearer token is configured (the
// desktop shell) the stream is read with fetch, since EventSource cannot send headers. Either
// way it reconnects with a growing delay (1 s … 15 s) after an error.

import { apiConfig, apiUrl, authHeaders } from './api';

export type EventName = 'hello' | 'sessions' | 'tasks' | 'agents' | 'signals' | 'runs' | 'index' | 'settings' | 'usage' | 'budget';
export const EVENT_NAMES: EventName[] = ['hello', 'sessions', 'tasks', 'agents', 'signals', 'runs', 'index', 'settings', 'usage', 'budget'];

export type ConnState = 'connecting' | 'open' | 'error';
type Listener = (data: unknown) => void;

export interface SseMessage {
  event: string;
  data: string;
}

/** Incremental SSE parser: feed text chunks, get whole messages (comments ignored). */
export class SseParser {
  private buf = '';
  private event = '';
  private data: string[] = [];

  feed(chunk: string): SseMessage[] {
    this.buf += chunk;
    const out: SseMessage[] = [];
    let nl: number;
    while ((nl = this.buf.search(/\r\n|\r|\n/)) >= 0) {
      const line = this.buf.slice(0, nl);
      const sepLen = this.buf.startsWith('\r\n', nl) ? 2 : 1;
      this.buf = this.buf.slice(nl + sepLen);
      if (line === '') {
        if (this.data.length) out.push({ event: this.event || 'message', data: this.data.join('\n') });
        this.event = '';
        this.data = [];
        continue;
      }
      if (line.startsWith(':')) continue;
      const i = line.indexOf(':');
      const field = i < 0 ? line : line.slice(0, i);
      let value = i < 0 ? '' : line.slice(i + 1);
      if (value.startsWith(' ')) value = value.slice(1);
      if (field === 'event') this.event = value;
      else if (field === 'data') this.data.push(value);
    }
    return out;
  }
}

export class LiveEvents {
  private listeners = new Map<string, Set<Listener>>();
  private stateListeners = new Set<(s: ConnState) => void>();
  private es: EventSource | null = null;
  private abort: AbortController | null = null;
  private retry = 0;
  private timer: ReturnType<typeof setTimeout> | null = null;
  private stopped = true;
  private hellos = 0;
  state: ConnState = 'connecting';

  on(name: EventName, fn: Listener): () => void {
    let set = this.listeners.get(name);
    if (!set) this.listeners.set(name, (set = new Set()));
    set.add(fn);
    return () => set!.delete(fn);
  }

  onState(fn: (s: ConnState) => void): () => void {
    this.stateListeners.add(fn);
    return () => this.stateListeners.delete(fn);
  }

  private setState(s: ConnState) {
    this.state = s;
    for (const fn of this.stateListeners) fn(s);
  }

  emit(name: string, raw: string) {
    let data: unknown = raw;
    try {
      data = raw ? JSON.parse(raw) : {};
    } catch {
      // not JSON: pass the text
    }
    this.dispatch(name, data);
    if (name === 'hello') {
      this.retry = 0;
      this.setState('open');
      // Back after a disconnect: events may have been missed, so everyone refetches.
      if (++this.hellos > 1) for (const n of ['sessions', 'tasks', 'agents']) this.dispatch(n, {});
    }
  }

  private dispatch(name: string, data: unknown) {
    for (const fn of this.listeners.get(name) ?? []) {
      try {
        fn(data);
      } catch (e) {
        console.error(`event ${name} listener failed`, e);
      }
    }
  }

  start() {
    if (!this.stopped) return;
    this.stopped = false;
    this.connect();
  }

  stop() {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.es?.close();
    this.es = null;
    this.abort?.abort();
    this.abort = null;
  }

  private scheduleReconnect() {
    if (this.stopped) return;
    this.setState('error');
    const delay = Math.min(15_000, 1000 * 2 ** this.retry);
    this.retry = Math.min(this.retry + 1, 4);
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => this.connect(), delay);
  }

  private connect() {
    if (this.stopped) return;
    this.setState('connecting');
    if (apiConfig().token?.()) this.connectFetch();
    else this.connectEventSource();
  }

  private connectEventSource() {
    const es = new EventSource(apiUrl('/api/events'), { withCredentials: apiConfig().base !== '' });
    this.es = es;
    for (const name of EVENT_NAMES) es.addEventListener(name, (e) => this.emit(name, (e as MessageEvent).data));
    es.onopen = () => {
      this.retry = 0;
      this.setState('open');
    };
    es.onerror = () => {
      // The browser retries by itself while the connection is merely interrupted; a refused or
      // failed response closes it for good, so we start over.
      if (es.readyState === EventSource.CLOSED) {
        es.close();
        if (this.es === es) this.es = null;
        this.scheduleReconnect();
      } else {
        this.setState('connecting');
      }
    };
  }

  private async connectFetch() {
    const ctrl = new AbortController();
    this.abort = ctrl;
    try {
      const res = await apiConfig().fetch(apiUrl('/api/events'), {
        headers: { Accept: 'text/event-stream', ...authHeaders() },
        credentials: 'same-origin',
        signal: ctrl.signal,
      });
      if (!res.ok || !res.body) throw new Error(`events: HTTP ${res.status}`);
      this.setState('open');
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      const parser = new SseParser();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        for (const m of parser.feed(value)) this.emit(m.event, m.data);
      }
    } catch {
      if (ctrl.signal.aborted) return;
    }
    if (this.abort === ctrl) this.abort = null;
    this.scheduleReconnect();
  }
}

export const live = new LiveEvents();

/**
 * Follows one run's events (`GET /api/runs/{id}/events`): stored ones after `after`, then live,
 * until the run ends or `stop()` is called. Read with fetch so the desktop shell's bearer token
 * works too; reconnects from the last event seen if the stream breaks while the run goes on.
 */
export function followRun(
  id: string,
  after: number,
  on: { events: (evs: unknown[]) => void; status: (status: string) => void },
): () => void {
  const ctrl = new AbortController();
  let last = after;
  let ended = false;
  const go = async (attempt: number) => {
    try {
      const res = await apiConfig().fetch(apiUrl(`/api/runs/${encodeURIComponent(id)}/events`, { after: last }), {
        headers: { Accept: 'text/event-stream', ...authHeaders() },
        credentials: 'same-origin',
        signal: ctrl.signal,
      });
      if (!res.ok || !res.body) throw new Error(`run events: HTTP ${res.status}`);
      const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
      const parser = new SseParser();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) break;
        for (const m of parser.feed(value)) {
          const data = JSON.parse(m.data) as unknown;
          if (m.event === 'event' || m.event === 'events') {
            const evs = (Array.isArray(data) ? data : [data]) as { seq: number }[];
            if (evs.length) last = Math.max(last, evs[evs.length - 1].seq);
            on.events(evs);
          } else if (m.event === 'status') {
            const st = (data as { status: string }).status;
            on.status(st);
            if (['succeeded', 'failed', 'timed_out', 'cancelled', 'lost', 'over_budget'].includes(st)) ended = true;
          }
        }
      }
    } catch {
      if (ctrl.signal.aborted) return;
    }
    if (!ended && !ctrl.signal.aborted) setTimeout(() => go(attempt + 1), Math.min(5000, 500 * 2 ** attempt));
  };
  go(0);
  return () => ctrl.abort();
}

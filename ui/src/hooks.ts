import { useCallback, useEffect, useRef, useState } from 'preact/hooks';

import { ApiError } from './api';
import { live, type EventName } from './events';
import { formatHash, parseHash, type Route, type View } from './router';
import { signal, type Fn } from './signal';

/** App-wide signals: "the daemon said 401" and toasts. */
export const authLost = signal(false);

export interface Toast {
  id: number;
  kind: 'info' | 'error';
  text: string;
}
export const toasts = signal<Toast[]>([]);
let toastSeq = 0;
export function toast(text: string, kind: Toast['kind'] = 'info', ms = kind === 'error' ? 8000 : 3500) {
  const t = { id: ++toastSeq, kind, text };
  toasts.set([...toasts.get(), t]);
  setTimeout(() => toasts.set(toasts.get().filter((x) => x.id !== t.id)), ms);
}

export function useSignal<T>(s: { get: () => T; sub: (fn: Fn<T>) => () => void }): T {
  const [v, setV] = useState(s.get());
  useEffect(() => s.sub(setV), [s]);
  return v;
}

/** Reports an error: 401 switches the app to its login screen, anything else is a toast. */
export function reportError(e: unknown, prefix = '') {
  if (e instanceof ApiError && e.status === 401) {
    authLost.set(true);
    return;
  }
  const msg = e instanceof Error ? e.message : String(e);
  toast(prefix ? `${prefix}: ${msg}` : msg, 'error');
}

export interface Async<T> {
  data: T | undefined;
  error: ApiError | Error | undefined;
  loading: boolean;
  reload: () => void;
}

/** Runs `fn` when `deps` change (and on reload()); keeps the last data while reloading. */
export function useAsync<T>(fn: () => Promise<T>, deps: unknown[]): Async<T> {
  const [state, setState] = useState<{ data?: T; error?: Error; loading: boolean }>({ loading: true });
  const [tick, setTick] = useState(0);
  const seq = useRef(0);
  useEffect(() => {
    const my = ++seq.current;
    setState((s) => ({ ...s, loading: true }));
    fn().then(
      (data) => my === seq.current && setState({ data, loading: false }),
      (error: Error) => {
        if (my !== seq.current) return;
        if (error instanceof ApiError && error.status === 401) authLost.set(true);
        setState((s) => ({ data: s.data, error, loading: false }));
      },
    );
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { data: state.data, error: state.error, loading: state.loading, reload };
}

/**
 * False until the frame after `ready` first holds, and again after `deps` change: a long list
 * puts its first rows in the page at once and the rest once that frame has been painted.
 */
export function useSettled(ready: boolean, deps: unknown[]): boolean {
  const [settled, setSettled] = useState(false);
  // eslint-disable-next-line react-hooks/exhaustive-deps
  useEffect(() => setSettled(false), deps);
  useEffect(() => {
    if (!ready || settled) return;
    let t: ReturnType<typeof setTimeout> | undefined;
    const f = requestAnimationFrame(() => (t = setTimeout(() => setSettled(true), 0)));
    return () => (cancelAnimationFrame(f), clearTimeout(t));
  }, [ready, settled]);
  return settled;
}

export function useDebounced<T>(value: T, ms: number): T {
  const [v, setV] = useState(value);
  useEffect(() => {
    const t = setTimeout(() => setV(value), ms);
    return () => clearTimeout(t);
  }, [value, ms]);
  return v;
}

/** Calls `fn` on each live event of these names (the latest fn, without resubscribing). */
export function useLive(names: EventName[], fn: (data: unknown, name: EventName) => void) {
  const ref = useRef(fn);
  ref.current = fn;
  useEffect(() => {
    const offs = names.map((n) => live.on(n, (d) => ref.current(d, n)));
    return () => offs.forEach((o) => o());
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [names.join(',')]);
}

export function useRoute(): Route {
  const [route, setRoute] = useState(() => parseHash(location.hash));
  useEffect(() => {
    const on = () => setRoute(parseHash(location.hash));
    addEventListener('hashchange', on);
    return () => removeEventListener('hashchange', on);
  }, []);
  return route;
}

export function navigate(view: View, id?: string, params?: Record<string, string>) {
  const h = formatHash({ view, id, params });
  if (location.hash !== h) location.hash = h;
}

/** Re-renders every `ms` (for "3m ago" labels). */
export function useTicker(ms: number) {
  const [, setT] = useState(0);
  useEffect(() => {
    const i = setInterval(() => setT((t) => t + 1), ms);
    return () => clearInterval(i);
  }, [ms]);
}

// A long list read a page at a time: the first page shows at once, the others are fetched when
// their rows scroll into view (the chat list at 50,000 chats: loading them all first took most of
// a second before the first row showed). Rows not read yet are `undefined`; the list's length is
// known from the first page.

import { useCallback, useLayoutEffect, useRef, useState } from 'preact/hooks';

import { ApiError } from './api';
import { authLost } from './hooks';

export interface Page<T> {
  items: T[];
  /** Rows in the whole list. */
  total: number;
  /** Anything else the server counts over the whole list (e.g. chats not read yet). */
  pending?: number;
}

/** The page numbers holding rows [start, end), `size` rows a page. */
export function pagesFor(start: number, end: number, size: number): number[] {
  if (end <= start || size <= 0) return [];
  const out: number[] = [];
  for (let p = Math.floor(Math.max(0, start) / size); p * size < end; p++) out.push(p);
  return out;
}

export interface Paged<T> {
  /** The row at `i`, or undefined while its page is not read. */
  get: (i: number) => T | undefined;
  /** Asks for the pages of rows [start, end) (those already read or asked for are skipped). */
  want: (start: number, end: number) => void;
  /** Rows read so far, in order, with their positions. */
  loaded: () => [number, T][];
  total: number;
  pending: number;
  /** True until the first page of the current query has arrived. */
  loading: boolean;
  error: Error | undefined;
  /** Reads the pages already read again (a live change), keeping them shown meanwhile. */
  reload: () => void;
}

interface State<T> {
  /** The query (or reload) the pages belong to. */
  gen: number;
  pages: Map<number, T[]>;
  total: number;
  pending: number;
  loading: boolean;
  error?: Error;
}

/**
 * Pages of `fetch(offset, limit)`, `size` rows each, for the query `deps` describe. A new query
 * keeps the old rows until its first page arrives; answers for an older query are dropped.
 */
export function usePaged<T>(fetch: (offset: number, limit: number) => Promise<Page<T>>, deps: unknown[], size = 200): Paged<T> {
  const [state, setState] = useState<State<T>>({ gen: 0, pages: new Map(), total: 0, pending: 0, loading: true });
  const gen = useRef(0);
  const asked = useRef(new Set<number>());
  // The rows last in view: a new query reads them at once too, wherever the list is scrolled.
  const inView = useRef<[number, number]>([0, 0]);
  const fetchRef = useRef(fetch);
  fetchRef.current = fetch;

  const load = useCallback(
    (page: number, my: number) => {
      fetchRef.current(page * size, size).then(
        (r) => {
          if (my !== gen.current) return;
          setState((s) => {
            // The first answer of a new query replaces the old query's pages, whichever page it is.
            const pages = s.gen === my ? new Map(s.pages) : new Map<number, T[]>();
            pages.set(page, r.items);
            return { gen: my, pages, total: r.total, pending: r.pending ?? 0, loading: false };
          });
        },
        (error: Error) => {
          if (my !== gen.current) return;
          asked.current.delete(page);
          if (error instanceof ApiError && error.status === 401) authLost.set(true);
          setState((s) => ({ ...s, error, loading: false }));
        },
      );
    },
    [size],
  );

  const want = useCallback(
    (start: number, end: number) => {
      inView.current = [start, end];
      for (const p of pagesFor(start, end, size)) {
        if (asked.current.has(p)) continue;
        asked.current.add(p);
        load(p, gen.current);
      }
    },
    [load, size],
  );

  // Before the first paint, not after it (`useEffect`): the first page is asked for a frame
  // sooner (its request left 80–139 ms after a load's start, against 94–166 ms, in Chromium here).
  useLayoutEffect(() => {
    gen.current++;
    asked.current = new Set();
    setState((s) => ({ ...s, loading: true, error: undefined }));
    const [start, end] = inView.current;
    want(0, 1);
    want(start, end);
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, deps);

  const stateRef = useRef(state);
  stateRef.current = state;
  const reload = useCallback(() => {
    const my = ++gen.current;
    const read = [...stateRef.current.pages.keys()];
    asked.current = new Set(read.length ? read : [0]);
    // The pages read so far, again; the first answer replaces the rest (they may have moved).
    Promise.all((read.length ? read : [0]).map((p) => fetchRef.current(p * size, size).then((r) => [p, r] as const))).then(
      (answers) => {
        if (my !== gen.current) return;
        const pages = new Map<number, T[]>();
        for (const [p, r] of answers) pages.set(p, r.items);
        const last = answers[answers.length - 1][1];
        setState({ gen: my, pages, total: last.total, pending: last.pending ?? 0, loading: false });
      },
      (error: Error) => {
        if (my !== gen.current) return;
        setState((s) => ({ ...s, error, loading: false }));
      },
    );
  }, [size]);

  const get = useCallback((i: number) => state.pages.get(Math.floor(i / size))?.[i % size], [state.pages, size]);
  const loaded = useCallback(() => {
    const out: [number, T][] = [];
    for (const p of [...state.pages.keys()].sort((a, b) => a - b)) state.pages.get(p)!.forEach((x, k) => out.push([p * size + k, x]));
    return out;
  }, [state.pages, size]);

  return { get, want, loaded, total: state.total, pending: state.pending, loading: state.loading, error: state.error, reload };
}

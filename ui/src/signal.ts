// A tiny observable value shared between components.
export type Fn<T> = (v: T) => void;

export interface Signal<T> {
  get: () => T;
  set: (v: T) => void;
  sub: (fn: Fn<T>) => () => void;
}

export function signal<T>(initial: T): Signal<T> {
  let value = initial;
  const subs = new Set<Fn<T>>();
  return {
    get: () => value,
    set(v: T) {
      value = v;
      for (const s of [...subs]) s(v);
    },
    sub(fn: Fn<T>) {
      subs.add(fn);
      return () => void subs.delete(fn);
    },
  };
}

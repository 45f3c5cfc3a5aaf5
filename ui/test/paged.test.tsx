// @vitest-environment jsdom
import { render } from 'preact';
import { act } from 'preact/test-utils';
import { afterEach, describe, expect, it } from 'vitest';

import { type Paged, pagesFor, usePaged } from '../src/paged';

describe('pagesFor', () => {
  it('names the pages holding a range of rows', () => {
    expect(pagesFor(0, 10, 200)).toEqual([0]);
    expect(pagesFor(190, 410, 200)).toEqual([0, 1, 2]);
    expect(pagesFor(400, 400, 200)).toEqual([]);
    expect(pagesFor(-5, 3, 200)).toEqual([0]);
  });
});

let root: HTMLDivElement | undefined;
afterEach(() => {
  if (!root) return;
  render(null, root);
  root.remove();
  root = undefined;
});

const flush = () => act(() => new Promise<void>((r) => setTimeout(r, 0)));

describe('usePaged', () => {
  it('reads the first page only, then the pages asked for, once each', async () => {
    const asked: number[] = [];
    const rows = Array.from({ length: 50_000 }, (_, i) => `chat-${i}`);
    let paged!: Paged<string>;
    function Probe({ q }: { q: string }) {
      paged = usePaged(
        (offset, limit) => {
          asked.push(offset);
          return Promise.resolve({ items: rows.slice(offset, offset + limit).map((r) => `${q}:${r}`), total: rows.length });
        },
        [q],
        200,
      );
      return null;
    }
    const el = document.createElement('div');
    root = el;
    document.body.append(el);
    act(() => render(<Probe q="a" />, el));
    await flush();
    expect(asked).toEqual([0]);
    expect(paged.total).toBe(50_000);
    expect(paged.get(0)).toBe('a:chat-0');
    expect(paged.get(30_000)).toBeUndefined();

    act(() => paged.want(29_990, 30_010));
    act(() => paged.want(29_995, 30_005));
    await flush();
    expect(asked).toEqual([0, 29_800, 30_000]);
    expect(paged.get(30_000)).toBe('a:chat-30000');

    // A new query starts over from its first page and the rows still in view; the old one's rows go.
    act(() => render(<Probe q="b" />, el));
    await flush();
    expect(asked.slice(3)).toEqual([0, 29_800, 30_000]);
    expect(paged.get(0)).toBe('b:chat-0');
    expect(paged.get(30_000)).toBe('b:chat-30000');
    expect(paged.get(10_000)).toBeUndefined();
  });
});

// @vitest-environment jsdom
import { render } from 'preact';
import { act } from 'preact/test-utils';
import { afterEach, describe, expect, it } from 'vitest';

import { VirtualList } from '../src/components';

class FakeResizeObserver {
  observe() {}
  disconnect() {}
}
(globalThis as unknown as { ResizeObserver: unknown }).ResizeObserver = FakeResizeObserver;

let root: HTMLDivElement;
afterEach(() => {
  render(null, root);
  root.remove();
});

function mount(count: number) {
  root = document.createElement('div');
  document.body.append(root);
  act(() => {
    render(
      <VirtualList count={count} rowHeight={64} label="rows" testid="vl" renderRow={(i) => <div key={i} class="r" data-i={i} style={{ height: '64px' }} />} />,
      root,
    );
  });
  return root.querySelector('[data-testid=vl]') as HTMLDivElement;
}

describe('VirtualList', () => {
  it('keeps only a window of rows in the DOM for 10 000 items', () => {
    const el = mount(10_000);
    const rows = () => [...root.querySelectorAll('.r')].map((r) => Number((r as HTMLElement).dataset.i));
    // jsdom has no layout: the list assumes a 600 px viewport.
    expect(rows().length).toBeLessThan(30);
    expect(rows()[0]).toBe(0);
    expect((root.querySelector('.vlist-spacer') as HTMLElement).style.height).toBe('640000px');
    act(() => {
      el.scrollTop = 64 * 5000;
      el.dispatchEvent(new Event('scroll'));
    });
    expect(rows().length).toBeLessThan(30);
    expect(rows()).toContain(5000);
    expect(rows()).not.toContain(0);
  });
});

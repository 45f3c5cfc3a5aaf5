import { describe, expect, it } from 'vitest';

import { computeWindow, scrollToRow } from '../src/windowing';

describe('computeWindow', () => {
  it('renders only the visible rows plus overscan', () => {
    const w = computeWindow({ count: 10_000, rowHeight: 64, scrollTop: 0, viewportHeight: 640, overscan: 4 });
    expect(w).toEqual({ start: 0, end: 14, offsetTop: 0, totalHeight: 640_000 });
  });

  it('follows the scroll position', () => {
    const w = computeWindow({ count: 10_000, rowHeight: 64, scrollTop: 64 * 100 + 10, viewportHeight: 640, overscan: 4 });
    expect(w.start).toBe(96);
    // rows 100..110 are (partly) visible: 11 rows, + 4 overscan
    expect(w.end).toBe(115);
    expect(w.offsetTop).toBe(96 * 64);
    expect(w.end - w.start).toBeLessThan(30);
  });

  it('clamps at the end and for scroll positions past it', () => {
    const w = computeWindow({ count: 100, rowHeight: 50, scrollTop: 999_999, viewportHeight: 500, overscan: 2 });
    expect(w.end).toBe(100);
    expect(w.start).toBe(88);
    expect(w.totalHeight).toBe(5000);
  });

  it('handles empty and tiny lists', () => {
    expect(computeWindow({ count: 0, rowHeight: 50, scrollTop: 0, viewportHeight: 500 })).toEqual({ start: 0, end: 0, offsetTop: 0, totalHeight: 0 });
    const w = computeWindow({ count: 3, rowHeight: 50, scrollTop: 0, viewportHeight: 500 });
    expect([w.start, w.end]).toEqual([0, 3]);
    const neg = computeWindow({ count: 50, rowHeight: 50, scrollTop: -100, viewportHeight: 0, overscan: 0 });
    expect([neg.start, neg.end]).toEqual([0, 1]);
  });
});

describe('scrollToRow', () => {
  it('scrolls only as far as needed', () => {
    expect(scrollToRow(0, 50, 100, 200)).toBe(0);
    expect(scrollToRow(3, 50, 100, 200)).toBe(100); // rows 2..5 visible already
    expect(scrollToRow(10, 50, 100, 200)).toBe(350);
  });
});

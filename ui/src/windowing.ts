// Windowing for long lists with a fixed row height: only the rows in view (plus a few above
// and below) are in the DOM; a spacer of the full height keeps the scrollbar honest.

export interface WindowInput {
  count: number;
  rowHeight: number;
  scrollTop: number;
  viewportHeight: number;
  /** Extra rows rendered above and below the visible ones. */
  overscan?: number;
}

export interface WindowRange {
  /** First row index to render. */
  start: number;
  /** One past the last row index to render. */
  end: number;
  /** Pixel offset of row `start` from the top of the list. */
  offsetTop: number;
  /** Height of all rows. */
  totalHeight: number;
}

export function computeWindow({ count, rowHeight, scrollTop, viewportHeight, overscan = 4 }: WindowInput): WindowRange {
  const totalHeight = Math.max(0, count) * rowHeight;
  if (count <= 0 || rowHeight <= 0) return { start: 0, end: 0, offsetTop: 0, totalHeight: Math.max(0, totalHeight) };
  const maxScroll = Math.max(0, totalHeight - Math.max(0, viewportHeight));
  const top = Math.min(Math.max(0, scrollTop), maxScroll);
  const firstVisible = Math.floor(top / rowHeight);
  const visible = Math.ceil((Math.max(0, viewportHeight) + (top % rowHeight)) / rowHeight);
  const start = Math.max(0, firstVisible - overscan);
  const end = Math.min(count, firstVisible + Math.max(1, visible) + overscan);
  return { start, end, offsetTop: start * rowHeight, totalHeight };
}

/** The scrollTop that brings row `index` fully into view (unchanged if it already is). */
export function scrollToRow(index: number, rowHeight: number, scrollTop: number, viewportHeight: number): number {
  const top = index * rowHeight;
  const bottom = top + rowHeight;
  if (top < scrollTop) return top;
  if (bottom > scrollTop + viewportHeight) return Math.max(0, bottom - viewportHeight);
  return scrollTop;
}

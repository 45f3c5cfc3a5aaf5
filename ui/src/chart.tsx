// One Chart.js chart on a canvas (Insights, Usage), rebuilt when its configuration changes; and
// the theme's colours for charts.

import type { ChartConfiguration } from 'chart.js';
import { useEffect, useRef } from 'preact/hooks';

import { Chart } from 'chart.js';

export function cssVar(name: string, fallback: string): string {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim() || fallback;
}

/** One chart on a canvas, rebuilt when its configuration changes. */
export function ChartBox(props: { config: () => ChartConfiguration; deps: unknown[]; testid: string; height?: number }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  useEffect(() => {
    if (!canvas.current) return;
    const chart = new Chart(canvas.current, props.config());
    return () => chart.destroy();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, props.deps);
  return (
    <div class="chart-box" style={{ height: `${props.height ?? 220}px` }}>
      <canvas ref={canvas} data-testid={props.testid} />
    </div>
  );
}


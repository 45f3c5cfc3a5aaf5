// Data shaping for the Insights view: the daemon's aggregates (GET /api/insights) into what the
// charts draw — a calendar of days, weeks stacked by source, models over weeks. Pure functions,
// tested with Vitest; the view only hands their output to Chart.js.

export interface InsightsDay {
  day: string;
  chats: number;
  messages: number;
  ide: number;
  cli: number;
  cloud: number;
}

export interface ModelWeek {
  week: string;
  model: string;
  chats: number;
}

export interface Insights {
  totals: { chats: number; messages: number; projects: number; days_active: number };
  days: InsightsDay[];
  projects: { project: string | null; chats: number; messages: number }[];
  busiest_days: InsightsDay[];
  longest: { id: string; title: string | null; project: string | null; source: string; messages: number }[];
  tags: { tag: string; chats: number }[];
  models: { model: string; chats: number }[];
  models_by_week: ModelWeek[];
  tokens: { runs: number; runs_with_figures: number; input: number; output: number; cache_read: number };
  tasks: { done_per_day: { day: string; count: number }[]; claim_to_done: { count: number; p50_ms: number; p90_ms: number } | null };
  runs: { kind: string; status: string; count: number }[];
}

const DAY_MS = 86_400_000;

/** `YYYY-MM-DD` of a local date. */
export function dayKey(d: Date): string {
  const p = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}`;
}

function parseDay(s: string): Date {
  const [y, m, d] = s.split('-').map(Number);
  return new Date(y, m - 1, d);
}

/** Monday of the week holding `d` (local). */
export function mondayOf(d: Date): Date {
  const m = new Date(d.getFullYear(), d.getMonth(), d.getDate());
  m.setDate(m.getDate() - ((m.getDay() + 6) % 7));
  return m;
}

export interface Cell {
  /** Week column, 0 = the oldest shown. */
  x: number;
  /** Weekday row, 0 = Monday. */
  y: number;
  day: string;
  v: number;
}

/**
 * The calendar heat map: `weeks` columns ending with the week of `end`, one cell per day up to
 * `end` (later days of that week are left out), valued by messages.
 */
export function calendarCells(days: InsightsDay[], end: Date, weeks = 53): Cell[] {
  const by = new Map(days.map((d) => [d.day, d.messages]));
  const first = mondayOf(end);
  first.setDate(first.getDate() - 7 * (weeks - 1));
  const cells: Cell[] = [];
  const last = dayKey(end);
  for (let w = 0; w < weeks; w++) {
    for (let y = 0; y < 7; y++) {
      const d = new Date(first.getFullYear(), first.getMonth(), first.getDate() + w * 7 + y);
      const key = dayKey(d);
      if (key > last) break;
      cells.push({ x: w, y, day: key, v: by.get(key) ?? 0 });
    }
  }
  return cells;
}

/** The day to end the calendar on: today, or the last active day when all activity is older. */
export function calendarEnd(days: InsightsDay[], today: Date): Date {
  const last = days.length ? parseDay(days[days.length - 1].day) : today;
  return last.getTime() < today.getTime() - 365 * DAY_MS ? last : today;
}

export interface WeekBySource {
  week: string;
  ide: number;
  cli: number;
  cloud: number;
}

/** Chats started per week by source, for the last `weeks` weeks up to the week of `end` (empty weeks kept). */
export function weeklyBySource(days: InsightsDay[], end: Date, weeks = 26): WeekBySource[] {
  const out: WeekBySource[] = [];
  const start = mondayOf(end);
  start.setDate(start.getDate() - 7 * (weeks - 1));
  const index = new Map<string, WeekBySource>();
  for (let w = 0; w < weeks; w++) {
    const d = new Date(start.getFullYear(), start.getMonth(), start.getDate() + 7 * w);
    const row = { week: dayKey(d), ide: 0, cli: 0, cloud: 0 };
    out.push(row);
    index.set(row.week, row);
  }
  for (const d of days) {
    const row = index.get(dayKey(mondayOf(parseDay(d.day))));
    if (!row) continue;
    row.ide += d.ide;
    row.cli += d.cli;
    row.cloud += d.cloud;
  }
  return out;
}

export interface Series {
  label: string;
  data: number[];
}

/** Chats per week for the `top` models over all weeks, the rest as "other"; "unknown" kept as its own series. */
export function modelSeries(rows: ModelWeek[], top = 5): { weeks: string[]; series: Series[] } {
  const weeks = [...new Set(rows.map((r) => r.week))].sort();
  const totals = new Map<string, number>();
  for (const r of rows) totals.set(r.model, (totals.get(r.model) ?? 0) + r.chats);
  const kept = [...totals.entries()]
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .slice(0, top)
    .map(([m]) => m);
  const label = (m: string) => (kept.includes(m) ? m : 'other');
  const labels = [...kept, ...(totals.size > kept.length ? ['other'] : [])];
  const series = labels.map((l) => ({ label: l, data: weeks.map(() => 0) }));
  for (const r of rows) {
    const s = series[labels.indexOf(label(r.model))];
    s.data[weeks.indexOf(r.week)] += r.chats;
  }
  return { weeks, series };
}

/** The `since` (epoch ms) of a range choice: 30d, 90d, 1y, or everything. */
export function sinceOf(range: string, now: number): number | undefined {
  const days = { '30d': 30, '90d': 90, '1y': 365 }[range];
  return days ? now - days * DAY_MS : undefined;
}

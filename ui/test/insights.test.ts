import { describe, expect, it } from 'vitest';

import { calendarCells, calendarEnd, dayKey, type InsightsDay, modelSeries, mondayOf, sinceOf, weeklyBySource } from '../src/insights';
import { narrowQuery } from '../src/views/sessions';

const day = (d: string, messages: number, src: Partial<InsightsDay> = {}): InsightsDay => ({
  day: d,
  chats: (src.ide ?? 0) + (src.cli ?? 0) + (src.cloud ?? 0),
  messages,
  ide: 0,
  cli: 0,
  cloud: 0,
  ...src,
});

describe('insights shaping', () => {
  it('lays a year of days out as weeks of Monday-first columns, ending today', () => {
    const end = new Date(2026, 10, 25); // Wednesday 2026-11-25
    const cells = calendarCells([day('2026-11-23', 7), day('2026-11-25', 2), day('2025-01-01', 9)], end);
    const last = cells[cells.length - 1];
    expect(last).toEqual({ x: 52, y: 2, day: '2026-11-25', v: 2 });
    expect(cells.find((c) => c.day === '2026-11-23')).toMatchObject({ x: 52, y: 0, v: 7 });
    expect(cells[0].y).toBe(0);
    expect(cells.length).toBe(52 * 7 + 3);
    expect(cells.some((c) => c.day === '2025-01-01')).toBe(false);
  });

  it('shows old activity rather than an empty year', () => {
    const today = new Date(2026, 10, 25);
    expect(dayKey(calendarEnd([day('2023-03-01', 1)], today))).toBe('2023-03-01');
    expect(dayKey(calendarEnd([day('2026-10-01', 1)], today))).toBe('2026-11-25');
  });

  it('stacks chats per week by source and keeps empty weeks', () => {
    const w = weeklyBySource([day('2026-11-23', 1, { ide: 2 }), day('2026-11-24', 1, { cli: 1, cloud: 1 }), day('2026-11-10', 1, { ide: 1 })], new Date(2026, 10, 25), 4);
    expect(w.map((x) => x.week)).toEqual(['2026-11-02', '2026-11-09', '2026-11-16', '2026-11-23']);
    expect(w[3]).toEqual({ week: '2026-11-23', ide: 2, cli: 1, cloud: 1 });
    expect(w[1].ide).toBe(1);
    expect(w[2]).toEqual({ week: '2026-11-16', ide: 0, cli: 0, cloud: 0 });
  });

  it('keeps the top models, folds the rest into other, and says unknown', () => {
    const rows = [
      { week: '2026-11-02', model: 'a', chats: 5 },
      { week: '2026-11-02', model: 'unknown', chats: 3 },
      { week: '2026-11-09', model: 'b', chats: 1 },
      { week: '2026-11-09', model: 'c', chats: 1 },
    ];
    const { weeks, series } = modelSeries(rows, 2);
    expect(weeks).toEqual(['2026-11-02', '2026-11-09']);
    expect(series.map((s) => s.label)).toEqual(['a', 'unknown', 'other']);
    expect(series[2].data).toEqual([0, 2]);
  });

  it('ranges and weeks count in local days', () => {
    expect(sinceOf('30d', 100 * 86_400_000)).toBe(70 * 86_400_000);
    expect(sinceOf('all', 1)).toBeUndefined();
    expect(dayKey(mondayOf(new Date(2026, 10, 29)))).toBe('2026-11-23');
  });

  it('the list narrowed from Insights asks the server for local days and weeks (Monday first), and the model', () => {
    const at = new Date(2026, 10, 24, 15).getTime();
    const day = narrowQuery({ day: '2026-11-24', week: '', model: '' });
    expect(day).toEqual({ since: new Date(2026, 10, 24).getTime(), until: new Date(2026, 10, 25).getTime() });
    expect(at >= day.since! && at < day.until!).toBe(true);
    const week = narrowQuery({ day: '', week: '2026-11-23', model: 'unknown' });
    expect(week).toEqual({ since: new Date(2026, 10, 23).getTime(), until: new Date(2026, 10, 30).getTime(), model: 'unknown' });
    expect(narrowQuery({ day: '', week: '', model: '' })).toEqual({});
  });
});

import { describe, expect, it } from 'vitest';

import { budgetShare, parseBudget } from '../src/budget';
import type { UsageReport, UsageRow } from '../src/types';
import { costText, dailySeries, figureText, rowTokens, tokensText } from '../src/views/usage';

const row = (source: string, keys: string[], tokens: number | null, extra: Partial<UsageRow> = {}): UsageRow => ({
  source,
  keys,
  items: 1,
  with_tokens: 1,
  input: tokens,
  output: 0,
  cache_read: 0,
  cache_write: 0,
  tokens,
  cost_estimated: false,
  unpriced_tokens: 0,
  matched_by_time: 0,
  ...extra,
});

describe('budgets and usage figures', () => {
  it('reads budgets as people write them, as the daemon does', () => {
    expect(parseBudget('200k')).toEqual({ tokens: 200_000 });
    expect(parseBudget('1.5M')).toEqual({ tokens: 1_500_000 });
    expect(parseBudget('$2')).toEqual({ usd: 2 });
    expect(parseBudget('3usd')).toEqual({ usd: 3 });
    expect(parseBudget('lots')).toBeNull();
    expect(parseBudget('0')).toBeNull();
  });

  it('compares a spend with a budget only in the same unit', () => {
    expect(budgetShare('10k', 8_000)).toBeCloseTo(0.8);
    expect(budgetShare('$2', 8_000, 3)).toBeCloseTo(1.5);
    expect(budgetShare('$2', 8_000)).toBeNull(); // dollars unknown: no bar, never a guess
    expect(budgetShare('10k', null)).toBeNull();
    expect(budgetShare(undefined, 5)).toBeNull();
  });

  it('says what a cost is, and never shows an absent one as zero', () => {
    expect(costText(row('runs', [], 10, { cost_usd: 1.234, cost_estimated: true }))).toBe('$1.23 est.');
    expect(costText(row('account', [], 10, { cost_usd: 0.5 }))).toBe('$0.50');
    expect(costText(row('chats', [], 10))).toBe('no price');
    expect(costText(row('chats', [], null, { with_tokens: 0 }))).toBe('—');
    expect(costText(row('runs', [], 9000, { cost_usd: 0.5, unpriced_tokens: 8000 }))).toBe('$0.50 + 8,000 tokens unpriced');
    expect(rowTokens(row('chats', [], null, { with_tokens: 0 }))).toBe('not recorded');
    expect(rowTokens(row('runs', [], 0))).toBe('0');
    expect(figureText(null)).toBe('—');
    expect(figureText(1234)).toBe('1,234');
    expect(tokensText(1234)).toBe('1,234');
    expect(tokensText(2_500_000)).toBe('2.5M');
  });

  it('lays daily rows out as one series per source over every day', () => {
    const r = {
      rows: [
        row('runs', ['2026-11-24', 'runs'], 5),
        row('account', ['2026-11-25', 'account'], 7),
        row('runs', ['2026-11-25', 'runs'], 3),
        row('chats', ['2026-11-25', 'chats'], null, { with_tokens: 0 }),
      ],
    } as UsageReport;
    expect(dailySeries(r)).toEqual({
      days: ['2026-11-24', '2026-11-25'],
      series: [
        { source: 'runs', data: [5, 3] },
        { source: 'account', data: [0, 7] },
        { source: 'chats', data: [0, null] },
      ],
    });
  });
});

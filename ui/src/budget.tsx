// Budgets as people write them (`200k`, `$2`) and how much of one is spent: the bar runs, tasks
// and the daily budget show. Kept apart from the usage charts so views that show a bar do not
// load Chart.js.

/** A budget as people write it (`200k`, `1.5M`, `250000`, `$2`): tokens or dollars. */
export function parseBudget(b: string | null | undefined): { tokens?: number; usd?: number } | null {
  if (!b) return null;
  const t = b.trim().toLowerCase().replace(/[_,]/g, '');
  const usd = t.startsWith('$') ? t.slice(1) : t.endsWith('usd') ? t.slice(0, -3) : null;
  if (usd !== null) {
    const v = Number(usd);
    return Number.isFinite(v) && v > 0 ? { usd: v } : null;
  }
  const scale = t.endsWith('k') ? 1e3 : t.endsWith('m') ? 1e6 : 1;
  const v = Number(scale === 1 ? t : t.slice(0, -1)) * scale;
  return Number.isFinite(v) && v > 0 ? { tokens: Math.round(v) } : null;
}

/** How much of `budget` a spend is: tokens against a token budget, dollars (when known)
 * against a dollar one; `null` when the two cannot be compared. */
export function budgetShare(budget: string | null | undefined, tokens: number | null, usd?: number | null): number | null {
  const b = parseBudget(budget);
  if (!b) return null;
  if (b.tokens !== undefined) return tokens === null ? null : tokens / b.tokens;
  return usd === undefined || usd === null ? null : usd / (b.usd ?? 1);
}

/** How much of a budget is spent: a bar that turns amber at 80 % and red past 100 %. */
export function BudgetBar({ share, testid }: { share: number; testid?: string }) {
  const pct = Math.max(0, share * 100);
  const level = share >= 1 ? 'over' : share >= 0.8 ? 'warn' : 'ok';
  return (
    <span class={`budget-bar ${level}`} title={`${pct.toFixed(0)} % of the budget`} data-testid={testid} data-share={share.toFixed(3)}>
      <span style={{ width: `${Math.min(100, pct)}%` }} />
    </span>
  );
}

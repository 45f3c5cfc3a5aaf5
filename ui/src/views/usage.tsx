// Usage, on the Insights page: tokens per day by source (runs exactly, chats where Cursor recorded
// any, other agents' requests as Claude Code, Codex and Gemini CLI recorded them, the account from
// its imported CSV) and per model with the cost — Cursor's figure where it
// gave one, else an estimate, said so —, the runs and tasks that cost most, what share of each
// source has figures at all, today's spend against the daily budget, a CSV export and importing
// the account's usage CSV. Nothing absent is shown as zero.

import { useState } from 'preact/hooks';

import { api } from '../api';
import { ChartBox, cssVar } from '../chart';
import { ErrorNote } from '../components';
import { navigate, reportError, toast, useAsync, useLive } from '../hooks';
import type { ImportReport, UsageReport, UsageRow } from '../types';
import { BudgetBar } from '../budget';

const SOURCE_COLORS: Record<string, string> = {
  runs: '#4f6bed',
  chats: '#2e9e6b',
  agents: '#9b59b6',
  account: '#d9822b',
};

/** The report's `since` for the Insights range (`all` reads as ten years). */
export function usageSince(range: string): string {
  return range === 'all' ? '10y' : range;
}

/** `$1.23`, `$1.23 est.` when part of it is Tether's estimate, `no price` when there are tokens
 * but nothing to price them with, `—` when there is nothing. */
export function costText(r: Pick<UsageRow, 'cost_usd' | 'cost_estimated' | 'with_tokens' | 'unpriced_tokens'>): string {
  if (r.cost_usd === undefined || r.cost_usd === null) return r.with_tokens > 0 ? 'no price' : '—';
  const unpriced = r.unpriced_tokens > 0 ? ` + ${tokensText(r.unpriced_tokens)} tokens unpriced` : '';
  return `$${r.cost_usd.toFixed(2)}${r.cost_estimated ? ' est.' : ''}${unpriced}`;
}

/** A group's tokens, or "not recorded" when nothing in it has figures (never a zero). */
export function rowTokens(r: Pick<UsageRow, 'tokens'>): string {
  return r.tokens === null || r.tokens === undefined ? 'not recorded' : tokensText(r.tokens);
}

/** One figure of a group, `—` when none was recorded. */
export function figureText(n: number | null | undefined): string {
  return n === null || n === undefined ? '—' : n.toLocaleString();
}

export function tokensText(n: number): string {
  if (n >= 1e9) return `${(n / 1e9).toFixed(1)}B`;
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)}M`;
  if (n >= 1e4) return `${Math.round(n / 1e3)}k`;
  return n.toLocaleString();
}

/** Tokens per day, one series per source, over the report's days: `0` on a day the source has
 * nothing, `null` (a gap) on a day whose items have no figures. */
export function dailySeries(r: UsageReport): { days: string[]; series: { source: string; data: (number | null)[] }[] } {
  const days = [...new Set(r.rows.map((row) => row.keys[0]))].sort();
  const sources = [...new Set(r.rows.map((row) => row.source))];
  const series = sources.map((source) => {
    const by = new Map(r.rows.filter((row) => row.source === source).map((row) => [row.keys[0], row.tokens]));
    return { source, data: days.map((d) => (by.has(d) ? (by.get(d) ?? null) : 0)) };
  });
  return { days, series };
}

export function UsageSection({ range }: { range: string }) {
  const since = usageSince(range);
  const daily = useAsync(() => api.usage({ since, by: ['day', 'source'] }), [since]);
  const models = useAsync(() => api.usage({ since, by: ['model'] }), [since]);
  const runs = useAsync(() => api.usage({ since, by: ['run'], source: 'runs', limit: 8 }), [since]);
  const tasks = useAsync(() => api.usage({ since, by: ['task'], source: 'runs', limit: 8 }), [since]);
  const summary = useAsync(() => api.usageSummary(), []);
  const [imported, setImported] = useState<ImportReport | null>(null);
  const reload = () => {
    daily.reload();
    models.reload();
    runs.reload();
    tasks.reload();
    summary.reload();
  };
  useLive(['runs', 'usage', 'sessions', 'settings'], reload);

  const importFile = async (e: Event) => {
    const input = e.target as HTMLInputElement;
    const file = input.files?.[0];
    input.value = '';
    if (!file) return;
    try {
      const r = await api.importUsage({ file: file.name, csv: await file.text() });
      setImported(r);
      toast(`${r.file}: ${r.imported} new events, ${r.duplicates} already imported`);
    } catch (err) {
      reportError(err, 'Import failed');
    }
  };

  const d = daily.data;
  const s = summary.data;
  return (
    <section class="panel usage" data-testid="usage">
      <div class="toolbar">
        <h2>Usage</h2>
        <span class="spacer" />
        <label class="button" data-testid="usage-import-label">
          Import usage CSV…
          <input type="file" accept=".csv,text/csv" class="visually-hidden" onChange={importFile} data-testid="usage-import" />
        </label>
        <a class="button" href={api.usageCsvUrl({ since, by: ['day', 'model'] })} download="tether-usage.csv" data-testid="usage-export">
          Export CSV
        </a>
      </div>
      <ErrorNote error={daily.error ?? summary.error} />
      {s && (
        <p class="small" data-testid="usage-today">
          {s.line}
          {s.daily_used !== undefined && s.daily_used !== null && <BudgetBar share={s.daily_used} testid="usage-daily-bar" />}
          {s.held && <span class="note-warn"> {s.held}</span>}
        </p>
      )}
      {imported && <ImportNote r={imported} />}
      {d && d.rows.length === 0 && (
        <p class="muted small" data-testid="usage-empty">
          No usage in this range. Runs record their tokens as they go; import the usage CSV from Cursor's dashboard to see the account's.
        </p>
      )}
      {d && d.rows.length > 0 && <DailyChart r={d} />}
      <div class="usage-grid">
        {models.data && models.data.rows.length > 0 && (
          <div>
            <h3>By model</h3>
            <table class="usage-table" data-testid="usage-models">
              <thead>
                <tr>
                  <th>source</th>
                  <th>model</th>
                  <th class="num">tokens</th>
                  <th class="num">cost</th>
                </tr>
              </thead>
              <tbody>
                {models.data.rows.map((row) => (
                  <tr key={`${row.source}-${row.keys[0]}`}>
                    <td>{row.source}</td>
                    <td>{row.keys[0]}</td>
                    <td class="num" title={`${figureText(row.input)} in, ${figureText(row.output)} out, ${figureText(row.cache_read)} cache read, ${figureText(row.cache_write)} cache write`}>
                      {rowTokens(row)}
                    </td>
                    <td class="num">{costText(row)}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
        <TopList title="Runs that cost most" rows={runs.data?.rows ?? []} view="runs" testid="usage-top-runs" />
        <TopList title="Tasks that cost most" rows={(tasks.data?.rows ?? []).filter((r) => r.keys[0] !== '(no task)')} view="tasks" testid="usage-top-tasks" />
      </div>
      {d && (
        <ul class="muted small usage-notes" data-testid="usage-coverage">
          {d.coverage.notes.map((n) => (
            <li key={n}>{n}</li>
          ))}
          <li>
            Estimates use the price table as of {d.prices_as_of} (Settings → usage.prices overrides it); costs Cursor gave are its own.
          </li>
        </ul>
      )}
    </section>
  );
}

function DailyChart({ r }: { r: UsageReport }) {
  const { days, series } = dailySeries(r);
  const grid = cssVar('--border', '#ddd');
  return (
    <ChartBox
      testid="usage-daily"
      deps={[r]}
      height={200}
      config={() => ({
        type: 'bar',
        data: {
          labels: days,
          datasets: series.map((s) => ({ label: s.source, data: s.data, backgroundColor: SOURCE_COLORS[s.source] ?? '#8a8f98' })),
        },
        options: {
          maintainAspectRatio: false,
          scales: {
            x: { stacked: false, grid: { display: false } },
            y: { grid: { color: grid }, ticks: { callback: (v) => tokensText(Number(v)) } },
          },
          plugins: { tooltip: { callbacks: { label: (c) => `${c.dataset.label}: ${Number(c.raw).toLocaleString()} tokens` } } },
        },
      })}
    />
  );
}

function TopList({ title, rows, view, testid }: { title: string; rows: UsageRow[]; view: 'runs' | 'tasks'; testid: string }) {
  if (rows.length === 0) return null;
  return (
    <div>
      <h3>{title}</h3>
      <ol class="usage-top" data-testid={testid}>
        {rows.map((row) => (
          <li key={row.keys[0]}>
            <button type="button" class="link" onClick={() => navigate(view, row.keys[0])}>
              {row.keys[0]}
            </button>{' '}
            <span class="muted">
              {row.tokens === null || row.tokens === undefined ? 'tokens not recorded' : `${tokensText(row.tokens)} tokens`} · {costText(row)}
            </span>
          </li>
        ))}
      </ol>
    </div>
  );
}

function ImportNote({ r }: { r: ImportReport }) {
  return (
    <div class="note small" data-testid="usage-import-report">
      {r.file}: {r.rows} rows, {r.imported} new events, {r.duplicates} already imported ({r.errored} errored or not charged, {r.free}{' '}
      free).
      {r.malformed.length > 0 && (
        <ul>
          {r.malformed.map((m) => (
            <li key={m.line}>
              line {m.line}: {m.reason}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}

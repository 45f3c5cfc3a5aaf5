// Insights: activity over time (a calendar heat map of messages, chats per week by source), where
// the work went (projects, busiest days, longest chats, tags), models over time with "unknown"
// said, tasks done and runs by outcome, and usage (tokens and cost, see ./usage). Every chart clicks through to
// the chats, tasks or runs behind it. Charts are Chart.js (tree-shaken) and its matrix plugin.

import { BarController, BarElement, CategoryScale, Chart, Legend, LinearScale, Tooltip } from 'chart.js';
import { MatrixController, MatrixElement } from 'chartjs-chart-matrix';
import { useMemo, useState } from 'preact/hooks';

import { api } from '../api';
import { Empty, ErrorNote } from '../components';
import { navigate, useAsync, useLive } from '../hooks';
import { calendarCells, calendarEnd, type Cell, type Insights, modelSeries, sinceOf, weeklyBySource } from '../insights';
import { shortPath } from '../util';
import { ChartBox, cssVar } from '../chart';
import { UsageSection, usageSince } from './usage';
import { WrittenSection } from './code';

Chart.register(BarController, BarElement, CategoryScale, LinearScale, Tooltip, Legend, MatrixController, MatrixElement);

const SOURCE_COLORS: Record<string, string> = { ide: '#4f6bed', cli: '#2e9e6b', cloud: '#d9822b' };
const SERIES_COLORS = ['#4f6bed', '#2e9e6b', '#d9822b', '#b04fd1', '#d14f6b', '#8a8f98'];

export function InsightsView() {
  const [range, setRange] = useState('1y');
  const [project, setProject] = useState('');
  const projects = useAsync(() => api.projects(), []);
  const data = useAsync<Insights>(() => api.insights({ since: sinceOf(range, Date.now()), project: project || undefined }), [range, project]);
  useLive(['sessions', 'tasks', 'runs'], () => data.reload());
  const i = data.data;
  const scope: Record<string, string> = project ? { project } : {};
  return (
    <div class="page insights" data-testid="insights">
      <div class="toolbar">
        <h1>Insights</h1>
        <select value={range} onChange={(e) => setRange((e.target as HTMLSelectElement).value)} data-testid="insights-range" aria-label="Range">
          <option value="30d">Last 30 days</option>
          <option value="90d">Last 90 days</option>
          <option value="1y">Last year</option>
          <option value="all">Everything</option>
        </select>
        <select value={project} onChange={(e) => setProject((e.target as HTMLSelectElement).value)} data-testid="insights-project" aria-label="Project">
          <option value="">All projects</option>
          {(projects.data ?? []).map((p) => (
            <option key={p.path} value={p.path}>
              {shortPath(p.path)}
            </option>
          ))}
        </select>
      </div>
      <ErrorNote error={data.error} />
      {i && i.totals.chats === 0 && (
        <Empty title="Nothing in this range" testid="insights-empty">
          <p>Chats appear here once Tether has indexed Cursor's history (Health → Re-index), or pick a longer range.</p>
        </Empty>
      )}
      {i && i.totals.chats > 0 && <Body i={i} scope={scope} />}
      <UsageSection range={range} />
      <WrittenSection since={usageSince(range)} />
    </div>
  );
}

function Body({ i, scope }: { i: Insights; scope: Record<string, string> }) {
  const end = useMemo(() => calendarEnd(i.days, new Date()), [i]);
  const cells = useMemo(() => calendarCells(i.days, end), [i, end]);
  const weekly = useMemo(() => weeklyBySource(i.days, end), [i, end]);
  const models = useMemo(() => modelSeries(i.models_by_week), [i]);
  const max = Math.max(1, ...cells.map((c) => c.v));
  const accent = cssVar('--accent', '#4f6bed');
  const muted = cssVar('--muted', '#8a8f98');
  const grid = cssVar('--border', '#ddd');
  const panel = cssVar('--panel', '#fff');
  const scales = (stacked: boolean) => ({
    x: { stacked, ticks: { color: muted, maxRotation: 0, autoSkip: true }, grid: { display: false } },
    y: { stacked, ticks: { color: muted, precision: 0 }, grid: { color: grid } },
  });
  const runsDone = i.runs.reduce((n, r) => n + r.count, 0);
  const tasksDone = i.tasks.done_per_day.reduce((n, d) => n + d.count, 0);
  return (
    <>
      <div class="tiles" data-testid="insights-totals">
        <Tile label="Chats" value={i.totals.chats} />
        <Tile label="Messages" value={i.totals.messages} />
        <Tile label="Projects" value={i.totals.projects} />
        <Tile label="Days active" value={i.totals.days_active} />
      </div>
      <section class="panel">
        <h2>Messages per day</h2>
        <ChartBox
          testid="chart-calendar"
          height={150}
          deps={[cells]}
          config={() => ({
            type: 'matrix',
            data: {
              datasets: [
                {
                  label: 'messages',
                  data: cells,
                  backgroundColor: (c: { raw?: unknown }) => {
                    const v = ((c.raw as Cell | undefined)?.v ?? 0) / max;
                    return v === 0 ? withAlpha(accent, 0.07) : withAlpha(accent, 0.25 + 0.75 * v);
                  },
                  borderColor: panel,
                  borderWidth: 1,
                  width: ({ chart }: { chart: Chart }) => (chart.chartArea?.width ?? 600) / 53 - 2,
                  height: ({ chart }: { chart: Chart }) => (chart.chartArea?.height ?? 100) / 7 - 2,
                },
              ],
            },
            options: {
              maintainAspectRatio: false,
              animation: false,
              onClick: (_e, els) => {
                const c = els[0] && cells[els[0].index];
                if (c) navigate('sessions', undefined, { ...scope, day: c.day });
              },
              plugins: {
                legend: { display: false },
                tooltip: { callbacks: { title: () => '', label: (c) => `${(c.raw as Cell).day}: ${(c.raw as Cell).v} messages` } },
              },
              scales: {
                x: { type: 'linear', offset: true, min: -0.5, max: 52.5, display: false },
                y: { type: 'linear', offset: true, min: -0.5, max: 6.5, reverse: true, display: false },
              },
            },
          })}
        />
      </section>
      <div class="insights-grid">
        <section class="panel">
          <h2>Chats per week, by source</h2>
          <ChartBox
            testid="chart-weekly"
            deps={[weekly]}
            config={() => ({
              type: 'bar',
              data: {
                labels: weekly.map((w) => w.week.slice(5)),
                datasets: (['ide', 'cli', 'cloud'] as const).map((src) => ({
                  label: { ide: 'IDE', cli: 'CLI', cloud: 'Cloud' }[src],
                  data: weekly.map((w) => w[src]),
                  backgroundColor: SOURCE_COLORS[src],
                })),
              },
              options: {
                maintainAspectRatio: false,
                animation: false,
                scales: scales(true),
                plugins: { legend: { labels: { color: muted } } },
                onClick: (_e, els) => {
                  const w = els[0] && weekly[els[0].index];
                  const src = els[0] && (['ide', 'cli', 'cloud'] as const)[els[0].datasetIndex];
                  if (w) navigate('sessions', undefined, { ...scope, week: w.week, source: src ?? '' });
                },
              },
            })}
          />
        </section>
        <section class="panel">
          <h2>Top projects</h2>
          <ChartBox
            testid="chart-projects"
            deps={[i.projects]}
            config={() => ({
              type: 'bar',
              data: {
                labels: i.projects.map((p) => (p.project ? shortPath(p.project) : '(no project)')),
                datasets: [{ label: 'messages', data: i.projects.map((p) => p.messages), backgroundColor: accent }],
              },
              options: {
                indexAxis: 'y',
                maintainAspectRatio: false,
                animation: false,
                scales: scales(false),
                plugins: { legend: { display: false } },
                onClick: (_e, els) => {
                  const p = els[0] && i.projects[els[0].index];
                  if (p?.project) navigate('sessions', undefined, { project: p.project });
                },
              },
            })}
          />
        </section>
        <section class="panel">
          <h2>Models, chats per week</h2>
          <ChartBox
            testid="chart-models"
            deps={[models]}
            config={() => ({
              type: 'bar',
              data: {
                labels: models.weeks.map((w) => w.slice(5)),
                datasets: models.series.map((s, n) => ({
                  label: s.label,
                  data: s.data,
                  backgroundColor: s.label === 'unknown' ? grid : SERIES_COLORS[n % SERIES_COLORS.length],
                })),
              },
              options: {
                maintainAspectRatio: false,
                animation: false,
                scales: scales(true),
                plugins: { legend: { labels: { color: muted } } },
                onClick: (_e, els) => {
                  const s = els[0] && models.series[els[0].datasetIndex];
                  if (s && s.label !== 'other') navigate('sessions', undefined, { ...scope, model: s.label });
                },
              },
            })}
          />
          <p class="muted small" data-testid="insights-unknown-models">
            {share(i.models.find((m) => m.model === 'unknown')?.chats ?? 0, i.totals.chats)} of chats have no model recorded (“unknown”).
          </p>
        </section>
        <section class="panel">
          <h2>Board</h2>
          {tasksDone + runsDone === 0 ? (
            <p class="muted small">No tasks done or runs in this range.</p>
          ) : (
            <ChartBox
              testid="chart-board"
              deps={[i.runs, i.tasks]}
              config={() => ({
                type: 'bar',
                data: {
                  labels: i.runs.map((r) => `${r.kind} ${r.status.replace('_', ' ')}`),
                  datasets: [
                    {
                      label: 'runs',
                      data: i.runs.map((r) => r.count),
                      backgroundColor: i.runs.map((r) => (r.status === 'succeeded' ? cssVar('--ok', '#2e9e6b') : r.status === 'failed' ? cssVar('--danger', '#d14f6b') : muted)),
                    },
                  ],
                },
                options: {
                  maintainAspectRatio: false,
                  animation: false,
                  scales: scales(false),
                  plugins: { legend: { display: false } },
                  onClick: () => navigate('runs'),
                },
              })}
            />
          )}
          <p class="small" data-testid="insights-tasks">
            <button type="button" class="link" onClick={() => navigate('tasks', undefined, { view: 'list' })}>
              {tasksDone} task{tasksDone === 1 ? '' : 's'} done
            </button>
            {i.tasks.claim_to_done && ` · claim → done: median ${human(i.tasks.claim_to_done.p50_ms)}, 90% within ${human(i.tasks.claim_to_done.p90_ms)}`}
          </p>
        </section>
      </div>
      <div class="insights-grid">
        <section class="panel">
          <h2>Busiest days</h2>
          <ul class="plain" data-testid="insights-busiest">
            {i.busiest_days.map((d) => (
              <li key={d.day}>
                <button type="button" class="link" onClick={() => navigate('sessions', undefined, { ...scope, day: d.day })}>
                  {d.day}
                </button>{' '}
                <span class="muted">
                  {d.messages} messages · {d.chats} chats started
                </span>
              </li>
            ))}
          </ul>
        </section>
        <section class="panel">
          <h2>Longest chats</h2>
          <ul class="plain" data-testid="insights-longest">
            {i.longest.map((c) => (
              <li key={c.id}>
                <button type="button" class="link" onClick={() => navigate('sessions', c.id)}>
                  {c.title || c.id.slice(0, 8)}
                </button>{' '}
                <span class="muted">
                  {c.messages} messages · {c.source}
                </span>
              </li>
            ))}
          </ul>
        </section>
        <section class="panel">
          <h2>Tags</h2>
          {i.tags.length === 0 ? (
            <p class="muted small">No tagged chats in this range.</p>
          ) : (
            <div class="chips" data-testid="insights-tags">
              {i.tags.map((t) => (
                <button type="button" class="chip" key={t.tag} onClick={() => navigate('sessions', undefined, { tag: t.tag })}>
                  #{t.tag} <span class="muted">{t.chats}</span>
                </button>
              ))}
            </div>
          )}
        </section>
      </div>
    </>
  );
}

function Tile({ label, value }: { label: string; value: number }) {
  return (
    <div class="tile">
      <div class="tile-value">{value.toLocaleString()}</div>
      <div class="muted small">{label}</div>
    </div>
  );
}

function share(n: number, of: number): string {
  return of ? `${Math.round((100 * n) / of)} %` : '0 %';
}

function human(ms: number): string {
  const m = Math.round(ms / 60_000);
  if (m < 60) return `${m} min`;
  if (m < 48 * 60) return `${(m / 60).toFixed(1)} h`;
  return `${Math.round(m / 1440)} days`;
}

/** A CSS color (hex or rgb) with an alpha. */
function withAlpha(color: string, a: number): string {
  const hex = color.match(/^#([0-9a-f]{6})$/i);
  if (hex) {
    const n = parseInt(hex[1], 16);
    return `rgba(${(n >> 16) & 255}, ${(n >> 8) & 255}, ${n & 255}, ${a.toFixed(2)})`;
  }
  const rgb = color.match(/^rgb\((\d+),\s*(\d+),\s*(\d+)\)$/);
  return rgb ? `rgba(${rgb[1]}, ${rgb[2]}, ${rgb[3]}, ${a.toFixed(2)})` : color;
}

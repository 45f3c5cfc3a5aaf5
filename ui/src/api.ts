// The client for Tether's UI API (docs/api.md). Same-origin by default (the daemon serves this
// UI at `/` and the API under `/api`, the browser holds the login cookie). The desktop shell can
// point it elsewhere and supply a bearer token instead: `configureApi({ base, token })`, or set
// `window.__TETHER_API__ = { base, token }` before the bundle loads.

import type { Insights } from './insights';
import type {
  Agent,
  Comment,
  MergeResult,
  NewComment,
  PrResult,
  RunDiff,
  Strategy,
  WorktreesReport,
  TeamStatus,
  SharePreview,
  SharedChat,
  SharedSummary,
  TaskImportReport,
  Doctor,
  InitResult,
  NewRun,
  NewSignal,
  NewTask,
  ProjectCount,
  Run,
  RunDetail,
  RunOptions,
  CloudCheck,
  RunStatus,
  SearchHit,
  SessionDetail,
  SessionPage,
  SessionPatch,
  SessionSummary,
  SettingsPatch,
  SettingsView,
  Signal,
  SignalDetail,
  SignalType,
  Status,
  TagCount,
  Task,
  TaskDetail,
  TaskPatch,
  ImportReport,
  ImportUsage,
  PriceTable,
  UsageQuery,
  UsageReport,
  UsageSummary,
  BlameResult,
  FileTouched,
  Publish,
  TracedRepo,
  WrittenBy,
} from './types';

export interface ApiConfig {
  /** Prefix for every URL, e.g. `http://127.0.0.1:47821` in the desktop shell; `''` = same origin. */
  base: string;
  /** Returns a bearer token to send, or nothing to rely on the cookie. */
  token: (() => string | null | undefined) | null;
  fetch: typeof fetch;
}

const config: ApiConfig = {
  base: '',
  token: null,
  fetch: (...args) => globalThis.fetch(...args),
};

declare global {
  interface Window {
    __TETHER_API__?: { base?: string; token?: string | (() => string | null) };
    __TAURI_INTERNALS__?: unknown;
  }
}

export function configureApi(c: Partial<ApiConfig>): void {
  Object.assign(config, c);
}

/** Picks up what a host page (the Tauri shell) put in `window.__TETHER_API__`. */
export function configureFromWindow(w: Window | undefined = globalThis.window): void {
  const injected = w?.__TETHER_API__;
  if (!injected) return;
  const t = injected.token;
  configureApi({
    base: injected.base ?? '',
    token: typeof t === 'function' ? t : t ? () => t : null,
  });
}

export function apiConfig(): Readonly<ApiConfig> {
  return config;
}

export function apiUrl(path: string, query?: Query): string {
  return config.base + path + queryString(query);
}

/** An error as the API reports it: `{code, message}` plus the HTTP status (0 = no answer). */
export class ApiError extends Error {
  readonly code: string;
  readonly status: number;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
  }
}

const CODE_BY_STATUS: Record<number, string> = {
  400: 'invalid_input',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  409: 'conflict',
};

/** Turns a failed response into an ApiError; the body's own `code`/`message` win when present. */
export async function errorFromResponse(res: Response): Promise<ApiError> {
  let text = '';
  try {
    text = await res.text();
  } catch {
    // body unreadable: fall back to the status line
  }
  let code: string | undefined;
  let message: string | undefined;
  try {
    const body: unknown = JSON.parse(text);
    if (body && typeof body === 'object') {
      const b = body as Record<string, unknown>;
      if (typeof b.code === 'string' && b.code) code = b.code;
      if (typeof b.message === 'string' && b.message) message = b.message;
      else if (typeof b.error === 'string' && b.error) message = b.error;
    }
  } catch {
    if (text.trim() && text.length < 300) message = text.trim();
  }
  code ??= CODE_BY_STATUS[res.status] ?? (res.status >= 500 ? 'server_error' : 'http_error');
  message ??= `${res.status} ${res.statusText || 'error'}`.trim();
  return new ApiError(res.status, code, message);
}

/** A network failure (daemon down, connection refused) as an ApiError. */
export function networkError(e: unknown): ApiError {
  const detail = e instanceof Error ? e.message : String(e);
  return new ApiError(0, 'network', `Cannot reach the Tether daemon (${detail}). Is \`tether serve\` running?`);
}

export type Query = Record<string, string | number | boolean | null | undefined | (string | number)[]>;

export function queryString(q?: Query): string {
  if (!q) return '';
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) {
    if (v === undefined || v === null || v === '' || v === false) continue;
    if (Array.isArray(v)) for (const x of v) p.append(k, String(x));
    else p.append(k, v === true ? '1' : String(v));
  }
  const s = p.toString();
  return s ? `?${s}` : '';
}

export function authHeaders(): Record<string, string> {
  const t = config.token?.();
  return t ? { Authorization: `Bearer ${t}` } : {};
}

export async function request<T>(
  method: string,
  path: string,
  opts: { query?: Query; body?: unknown; signal?: AbortSignal } = {},
): Promise<T> {
  const headers: Record<string, string> = { Accept: 'application/json', ...authHeaders() };
  if (method !== 'GET' && method !== 'HEAD') headers['X-Tether'] = '1';
  let body: string | undefined;
  if (opts.body !== undefined) {
    headers['Content-Type'] = 'application/json';
    body = JSON.stringify(opts.body);
  }
  let res: Response;
  try {
    res = await config.fetch(apiUrl(path, opts.query), { method, headers, body, credentials: 'same-origin', signal: opts.signal });
  } catch (e) {
    if (opts.signal?.aborted) throw e;
    throw networkError(e);
  }
  if (!res.ok) throw await errorFromResponse(res);
  if (res.status === 202 || res.status === 204) return undefined as T;
  const text = await res.text();
  return (text ? JSON.parse(text) : undefined) as T;
}

/**
 * Downloads a file from the API. Same-origin with the cookie a plain link does it; with a bearer
 * token (desktop shell) a link cannot send the header, so the file is fetched and saved from a blob.
 * Returns false when the caller should let the link do it.
 */
export async function downloadWithToken(url: string, filename: string): Promise<boolean> {
  if (!config.token?.()) return false;
  let res: Response;
  try {
    res = await config.fetch(url, { headers: authHeaders(), credentials: 'same-origin' });
  } catch (e) {
    throw networkError(e);
  }
  if (!res.ok) throw await errorFromResponse(res);
  const cd = res.headers.get('content-disposition') ?? '';
  const name = /filename="([^"]+)"/.exec(cd)?.[1] ?? filename;
  const href = URL.createObjectURL(await res.blob());
  const a = document.createElement('a');
  a.href = href;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(href), 10_000);
  return true;
}

const enc = encodeURIComponent;

export interface SessionFilter {
  project?: string;
  source?: string;
  tag?: string;
  bookmarked?: boolean;
  /** Chats started in [since, until) (ms since the epoch), answered by `model`. */
  since?: number;
  until?: number;
  model?: string;
  limit?: number;
  offset?: number;
}

export interface TaskFilter {
  status?: Status[];
  assignee?: string;
  role?: string;
  project?: string;
  label?: string;
  ready?: boolean;
  limit?: number;
}

export interface SignalListFilter {
  to?: string;
  from?: string;
  agent?: string;
  trace?: string;
  open?: boolean;
  limit?: number;
}

export interface Status_ {
  version: string;
  uptime_s: number;
  url: string;
  index: { state: 'idle' | 'indexing'; sessions: number; messages: number };
  mcp_sessions: { id: string; last_activity: string; streams: number }[];
  paused: boolean;
  /** The port this daemon moved away from (a saved setting changed), and when. */
  moved_from?: { port: number; at: string } | null;
}

/** A usage query as URL parameters (`by` repeated). */
function usageQuery(q: UsageQuery): Query {
  return { since: q.since, until: q.until, by: q.by?.length ? q.by : undefined, source: q.source, limit: q.limit };
}

export const api = {
  status: () => request<Status_>('GET', '/api/status'),
  sessions: (f: SessionFilter = {}) =>
    request<{ sessions: SessionSummary[] }>('GET', '/api/sessions', { query: { ...f } }).then((r) => r.sessions),
  /** One page of the chat list, and the whole list's size. */
  sessionPage: (f: SessionFilter = {}) => request<SessionPage>('GET', '/api/sessions', { query: { ...f } }),
  search: (q: string, project?: string, limit = 50, signal?: AbortSignal) =>
    request<{ hits: SearchHit[] }>('GET', '/api/search', { query: { q, project, limit }, signal }).then((r) => r.hits),
  /** A chat with its messages from `offset`, at most `limit` of them (0 = all). */
  session: (id: string, tools = true, offset = 0, limit = 0) =>
    request<SessionDetail>('GET', `/api/sessions/${enc(id)}`, { query: { tools, offset, limit } }),
  patchSession: (id: string, patch: SessionPatch) => request<SessionSummary>('PATCH', `/api/sessions/${enc(id)}`, { body: patch }),
  exportUrl: (id: string, format: 'md' | 'json' | 'html') => apiUrl(`/api/sessions/${enc(id)}/export`, { format }),
  projects: () => request<{ projects: ProjectCount[] }>('GET', '/api/projects').then((r) => r.projects),
  insights: (q: { since?: number; project?: string }) => {
    const p = new URLSearchParams();
    if (q.since !== undefined) p.set('since', String(Math.round(q.since)));
    if (q.project) p.set('project', q.project);
    return request<Insights>('GET', `/api/insights?${p}`);
  },
  tags: () => request<{ tags: TagCount[] }>('GET', '/api/tags').then((r) => r.tags),
  renameTag: (from: string, to: string) => request<TagCount>('POST', '/api/tags/rename', { body: { from, to } }),
  deleteTag: (tag: string) => request<{ removed_from: number }>('DELETE', `/api/tags/${enc(tag)}`),
  tasks: (f: TaskFilter = {}) => request<{ tasks: Task[] }>('GET', '/api/tasks', { query: { ...f } }).then((r) => r.tasks),
  task: (id: string) => request<TaskDetail>('GET', `/api/tasks/${enc(id)}`),
  createTask: (t: NewTask) => request<Task>('POST', '/api/tasks', { body: t }),
  patchTask: (id: string, patch: TaskPatch) => request<Task>('PATCH', `/api/tasks/${enc(id)}`, { body: patch }),
  claimTask: (id: string) => request<Task>('POST', `/api/tasks/${enc(id)}/claim`),
  agents: () => request<{ agents: Agent[] }>('GET', '/api/agents').then((r) => r.agents),
  setWakeByResume: (id: string, on: boolean) =>
    request<Agent>('PATCH', `/api/agents/${enc(id)}`, { body: { wake_by_resume: on } }),
  signals: (f: SignalListFilter = {}) =>
    request<{ signals: Signal[] }>('GET', '/api/signals', { query: { ...f } }).then((r) => r.signals),
  signal: (id: string) => request<SignalDetail>('GET', `/api/signals/${enc(id)}`),
  sendSignal: (s: NewSignal) => request<Signal>('POST', '/api/signals', { body: s }),
  replySignal: (id: string, body: string, type?: SignalType) =>
    request<Signal>('POST', `/api/signals/${enc(id)}/reply`, { body: { body, type } }),
  /** Marks the person's unread signals read. */
  drainSignals: () => request<{ signals: Signal[] }>('POST', '/api/signals/drain').then((r) => r.signals),
  runs: (f: { status?: RunStatus[]; task?: string; chat?: string; limit?: number } = {}) =>
    request<{ runs: Run[] }>('GET', '/api/runs', { query: { ...f } }).then((r) => r.runs),
  run: (id: string, tail?: number, before?: number) => request<RunDetail>('GET', `/api/runs/${enc(id)}`, { query: { tail, before } }),
  approveRun: (id: string) => request<Run>('POST', `/api/runs/${enc(id)}/approve`),
  runOptions: () => request<RunOptions>('GET', '/api/runs/options'),
  startRun: (r: NewRun) => request<Run>('POST', '/api/runs', { body: r }),
  cancelRun: (id: string) => request<Run>('POST', `/api/runs/${enc(id)}/cancel`),
  followupRun: (id: string, prompt: string) => request<Run>('POST', `/api/runs/${enc(id)}/followup`, { body: { prompt } }),
  runDiff: (id: string, stat = false) => request<RunDiff>('GET', `/api/runs/${enc(id)}/diff`, { query: { stat: stat || undefined } }),
  commentRun: (id: string, c: NewComment) => request<Comment>('POST', `/api/runs/${enc(id)}/comments`, { body: c }),
  sendComments: (id: string, text?: string) => request<Run>('POST', `/api/runs/${enc(id)}/comments/send`, { body: { text } }),
  mergeRun: (id: string, strategy: Strategy, into?: string) =>
    request<MergeResult>('POST', `/api/runs/${enc(id)}/merge`, { body: { strategy, into } }),
  prRun: (id: string) => request<PrResult>('POST', `/api/runs/${enc(id)}/pr`, { body: {} }),
  discardRun: (id: string) => request<Run>('POST', `/api/runs/${enc(id)}/discard`),
  worktrees: () => request<WorktreesReport>('GET', '/api/worktrees'),
  runEventsUrl: (id: string, after = 0) => apiUrl(`/api/runs/${enc(id)}/events`, { after }),
  usage: (q: UsageQuery) => request<UsageReport>('GET', '/api/usage', { query: usageQuery(q) }),
  usageCsvUrl: (q: UsageQuery) => apiUrl('/api/usage', { ...usageQuery(q), format: 'csv' }),
  usageSummary: () => request<UsageSummary>('GET', '/api/usage/summary'),
  blame: (path: string, line?: number, end_line?: number) => request<BlameResult>('GET', '/api/blame', { query: { path, line, end_line } }),
  sessionFiles: (id: string) => request<FileTouched[]>('GET', `/api/sessions/${enc(id)}/files`),
  traceRepos: () => request<TracedRepo[]>('GET', '/api/trace/repos'),
  setTracePublish: (p: Publish) => request<TracedRepo>('PUT', '/api/trace/repos', { body: p }),
  traceWritten: (since?: string) => request<WrittenBy[]>('GET', '/api/trace/written', { query: { since } }),
  traceExportUrl: (q: { since?: string; repo?: string }) => apiUrl('/api/trace/export', q),
  usagePrices: () => request<PriceTable>('GET', '/api/usage/prices'),
  importUsage: (u: ImportUsage) => request<ImportReport>('POST', '/api/usage/import', { body: u }),
  setTaskBudget: (id: string, budget: string | null) =>
    request<{ task: string; budget: string | null }>('PUT', `/api/tasks/${enc(id)}/budget`, { body: { budget } }),
  doctor: () => request<Doctor>('GET', '/api/doctor'),
  team: () => request<TeamStatus>('GET', '/api/team'),
  teamJoin: (j: { url: string; machine?: string; password?: string; client_cert?: string; client_key?: string }) => request<TeamStatus>('POST', '/api/team/join', { body: j }),
  teamLeave: () => request<TeamStatus>('POST', '/api/team/leave'),
  teamImportLocal: () => request<TaskImportReport>('POST', '/api/team/import-local'),
  sharePreview: (id: string) => request<SharePreview>('GET', `/api/sessions/${enc(id)}/share`),
  share: (id: string, digest: string) => request<SharedChat>('POST', `/api/sessions/${enc(id)}/share`, { body: { digest } }),
  shared: (q?: string) => request<{ shared: SharedSummary[] }>('GET', '/api/shared', { query: { q } }).then((r) => r.shared),
  sharedChat: (id: string) => request<SharedChat>('GET', `/api/shared/${enc(id)}`),
  unshare: (id: string) => request<{ unshared: string }>('DELETE', `/api/shared/${enc(id)}`),
  cloudDoctor: () => request<{ checks: CloudCheck[] }>('GET', '/api/cloud/doctor'),
  reindex: () => request<void>('POST', '/api/index'),
  rotateToken: () => request<{ rotated: boolean }>('POST', '/api/token/rotate'),
  settings: () => request<SettingsView>('GET', '/api/settings'),
  patchSettings: (patch: SettingsPatch) => request<SettingsView>('PATCH', '/api/settings', { body: patch }),
  init: (project: string, dry_run: boolean) => request<InitResult>('POST', '/api/init', { body: { project, dry_run } }),
  initPlugin: (dry_run: boolean, remove = false) =>
    request<InitResult>('POST', '/api/init/plugin', { body: { dry_run, remove } }),
};

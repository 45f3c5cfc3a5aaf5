// The client for Tether's UI API (docs/api.md). Same-origin by default (the daemon serves this
// UI at `/` and the API under `/api`, the browser holds the login cookie). The desktop shell can
// point it elsewhere and supply a bearer token instead: `configureApi({ base, token })`, or set
// `window.__TETHER_API__ = { base, token }` before the bundle loads.

import { client, type Client } from './gen/api';
import type {
  NewComment,
  Strategy,
  NewRun,
  NewSignal,
  NewTask,
  RunStatus,
  SearchHit,
  SessionPatch,
  SettingsPatch,
  SignalType,
  Status,
  TaskPatch,
  ImportUsage,
  UsageQuery,
  Publish,
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

/** A usage query as URL parameters (`by` repeated). */
function usageQuery(q: UsageQuery) {
  return { since: q.since, until: q.until, by: q.by?.length ? q.by : undefined, source: q.source, limit: q.limit };
}

/** The generated client (ui/src/gen/api.ts, from the server's route table), over this file's
 * transport: auth headers, errors as ApiError, the base URL. */
export const routes: Client = client(
  (method, path, o) => request(method, path, { ...o, query: o.query as Query | undefined }),
  (path, query) => apiUrl(path, query as Query | undefined),
);

/** The views' names for the routes: each unwraps or shapes one generated call. */
export const api = {
  status: () => routes.systemStatus(),
  sessions: (f: SessionFilter = {}) => routes.sessionsList(f).then((r) => r.sessions),
  /** One page of the chat list, and the whole list's size. */
  sessionPage: (f: SessionFilter = {}) => routes.sessionsList(f),
  search: (q: string, project?: string, limit = 50, signal?: AbortSignal) =>
    routes.sessionsSearch({ q, project, limit }, signal).then((r) => r.hits as SearchHit[]),
  /** A chat with its messages from `offset`, at most `limit` of them (0 = all). */
  session: (id: string, tools = true, offset = 0, limit = 0) => routes.sessionsShow(id, { tools, offset, limit }),
  patchSession: (id: string, patch: SessionPatch) => routes.sessionsTag(id, patch),
  exportUrl: (id: string, format: 'md' | 'json' | 'html') => routes.sessionsExport(id, { format }),
  projects: () => routes.sessionsProjects().then((r) => r.projects),
  insights: (q: { since?: number; project?: string }) =>
    routes.systemInsights({ since: q.since === undefined ? undefined : Math.round(q.since), project: q.project || undefined }),
  tags: () => routes.sessionsTags().then((r) => r.tags),
  renameTag: (from: string, to: string) => routes.sessionsRenameTag({ from, to }),
  deleteTag: (tag: string) => routes.sessionsDeleteTag(tag),
  tasks: (f: TaskFilter = {}) => routes.tasksList(f).then((r) => ('tasks' in r ? r.tasks : [])),
  task: (id: string) => routes.tasksGet(id),
  createTask: (t: NewTask) => routes.tasksCreate(t),
  patchTask: (id: string, patch: TaskPatch) => routes.tasksUpdate(id, patch),
  claimTask: (id: string) => routes.tasksClaim(id),
  agents: () => routes.agentsList().then((r) => r.agents),
  setWakeByResume: (id: string, on: boolean) => routes.agentsUpdate(id, { wake_by_resume: on }),
  signals: (f: SignalListFilter = {}) => routes.signalsList(f).then((r) => r.signals),
  signal: (id: string) => routes.signalsGet(id),
  sendSignal: (s: NewSignal) => routes.signalsSend(s),
  replySignal: (id: string, body: string, type?: SignalType) => routes.signalsReply(id, { body, type }),
  /** Marks the person's unread signals read. */
  drainSignals: () => routes.signalsDrain().then((r) => r.signals),
  runs: (f: { status?: RunStatus[]; task?: string; chat?: string; limit?: number } = {}) =>
    routes.runsList(f).then((r) => r.runs),
  run: (id: string, tail?: number, before?: number) => routes.runsGet(id, { tail, before }),
  approveRun: (id: string) => routes.runsApprove(id),
  runOptions: () => routes.runsOptions(),
  startRun: (r: NewRun) => routes.runsStart(r),
  cancelRun: (id: string) => routes.runsCancel(id),
  followupRun: (id: string, prompt: string) => routes.runsFollowup(id, { prompt }),
  runDiff: (id: string, stat = false) => routes.changesDiff(id, { stat: stat || undefined }),
  commentRun: (id: string, c: NewComment) => routes.changesComment(id, c),
  sendComments: (id: string, text?: string) => routes.changesSendComments(id, { text: text ?? null }),
  mergeRun: (id: string, strategy: Strategy, into?: string) => routes.changesMerge(id, { strategy, into: into ?? null }),
  prRun: (id: string) => routes.changesPr(id, { title: null, base: null }),
  discardRun: (id: string) => routes.changesDiscard(id),
  worktrees: () => routes.changesWorktrees(),
  runEventsUrl: (id: string, after = 0) => routes.sseRunEvents(id, { after }),
  usage: (q: UsageQuery) => routes.usageReport(usageQuery(q)),
  usageCsvUrl: (q: UsageQuery) => apiUrl('/api/usage', { ...usageQuery(q), format: 'csv' }),
  usageSummary: () => routes.usageSummary(),
  blame: (path: string, line?: number, end_line?: number) => routes.traceBlame({ path, line, end_line }),
  sessionFiles: (id: string) => routes.traceFiles(id),
  traceRepos: () => routes.traceRepos(),
  setTracePublish: (p: Publish) => routes.tracePublish(p),
  traceWritten: (since?: string) => routes.traceWritten({ since }),
  traceExportUrl: (q: { since?: string; repo?: string }) => routes.traceExport(q),
  usagePrices: () => routes.usagePrices(),
  importUsage: (u: ImportUsage) => routes.usageImport(u),
  setTaskBudget: (id: string, budget: string | null) => routes.usageTaskBudget(id, { budget }),
  doctor: () => routes.systemDoctor(),
  team: () => routes.teamStatus(),
  teamJoin: (j: { url: string; machine?: string; password?: string; client_cert?: string; client_key?: string }) =>
    routes.teamJoin(j),
  teamLeave: () => routes.teamLeave(),
  teamImportLocal: () => routes.teamImportLocal(),
  sharePreview: (id: string) => routes.teamSharePreview(id),
  share: (id: string, digest: string) => routes.teamShare(id, { digest }),
  shared: (q?: string) => routes.teamShared({ q }).then((r) => r.shared),
  sharedChat: (id: string) => routes.teamSharedChat(id),
  unshare: (id: string) => routes.teamUnshare(id),
  cloudDoctor: () => routes.runsCloudDoctor(),
  reindex: () => routes.systemReindex(),
  rotateToken: () => routes.systemRotateToken(),
  settings: () => routes.settingsGet(),
  patchSettings: (patch: SettingsPatch) => routes.settingsUpdate(patch),
  init: (project: string, dry_run: boolean) => routes.systemInstall({ project, dry_run }),
  initPlugin: (dry_run: boolean, remove = false) => routes.systemInstallPlugin({ dry_run, remove }),
};

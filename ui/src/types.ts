// JSON shapes of the UI API (docs/api.md; the same JSON `tether … --json` prints).

export interface SessionSummary {
  id: string;
  title: string | null;
  project: string | null;
  source: 'ide' | 'cli' | string;
  format: string;
  messages: number;
  created_at: string | null;
  updated_at: string | null;
  nickname: string | null;
  tags: string[];
  bookmarked: boolean;
  no_index: boolean;
  archived?: boolean;
  model?: string | null;
  mode?: string | null;
  /** False while a first index has listed the chat but not read its messages yet. */
  searchable?: boolean;
}

export interface MessageOut {
  seq: number;
  role: string;
  /** `text`, `thinking` or `tool`. */
  kind: string;
  text: string;
  tool_name?: string;
  tool_status?: string;
  model?: string;
  created_at?: string;
}

export interface SessionDetail extends Omit<SessionSummary, 'messages'> {
  /** The summary's message count (`messages` is the list here). */
  message_count: number;
  parts: number;
  offset: number;
  messages: MessageOut[];
}

export interface SessionPatch {
  nickname?: string | null;
  add_tags?: string[];
  remove_tags?: string[];
  bookmarked?: boolean;
  no_index?: boolean;
}

export interface SearchHit {
  session_id: string;
  title: string | null;
  project: string | null;
  source: string;
  updated_at: string | null;
  /** Matches wrapped in \u0002 … \u0003. */
  snippet: string;
  seq: number | null;
  score: number;
}

export interface ProjectCount {
  path: string;
  sessions: number;
}

export interface TagCount {
  tag: string;
  sessions: number;
}

export type Status = 'todo' | 'in_progress' | 'blocked' | 'in_review' | 'done' | 'cancelled';
export type Priority = 'critical' | 'high' | 'medium' | 'low';

export interface Task {
  id: string;
  title: string;
  description: string;
  status: Status;
  priority: Priority;
  role: string | null;
  project: string | null;
  labels: string[];
  depends_on: string[];
  blocked_by: string[];
  acceptance: string[];
  assignee: string | null;
  lease_until: string | null;
  lease_expired: boolean;
  summary: string | null;
  external_ref: string | null;
  created_by: string;
  created_at: string;
  updated_at: string;
  version: number;
}

export interface TaskEvent {
  at: string;
  actor: string;
  kind: string;
  detail: Record<string, unknown> | null;
}

export interface TaskDetail extends Task {
  notes: TaskEvent[];
  history: TaskEvent[];
}

export interface NewTask {
  title: string;
  description?: string;
  priority?: Priority;
  role?: string;
  project?: string;
  labels?: string[];
  depends_on?: string[];
  acceptance?: string[];
  status?: Status;
}

export interface TaskPatch {
  status?: Status;
  title?: string;
  description?: string;
  priority?: Priority;
  role?: string;
  project?: string;
  add_labels?: string[];
  remove_labels?: string[];
  add_depends_on?: string[];
  remove_depends_on?: string[];
  acceptance?: string[];
  assignee?: string;
  comment?: string;
  handoff?: boolean;
  summary?: string;
  release?: boolean;
  force?: boolean;
}

export interface Agent {
  id: string;
  name: string;
  kind: string;
  role: string | null;
  project: string | null;
  status: 'working' | 'idle' | 'ended' | string;
  last_seen: string;
  tasks: string[];
  /** How signals reach it: `full` (a GET stream or Cursor's hooks), `resume` (a chat Tether ran,
   * woken by a follow-up run), `degraded` (only a notice on its next tool call); null for people. */
  surface: 'full' | 'resume' | 'degraded' | null;
  open_obligations: number;
  /** A chain of runs that Tether wakes by a follow-up run when signals wait for it. */
  wake_by_resume: boolean;
}

export type SignalType =
  | 'question'
  | 'task_assigned'
  | 'review_requested'
  | 'status_update'
  | 'acknowledgment'
  | 'peer_joined'
  | 'peer_left'
  | 'master_preempted';

export interface Delivery {
  recipient: string;
  drained_at: string | null;
  obligation: 'none' | 'open' | 'closed';
  closed_at: string | null;
  wake_attempt_count: number;
  last_wake_at: string | null;
  last_wake_path: 'sse' | 'hook' | 'piggyback' | 'resume' | null;
  last_wake_result: 'rang' | 'coalesced' | 'filtered' | 'uncaptured' | 'send_failed' | null;
}

export interface Signal {
  id: string;
  type: SignalType;
  from: string;
  to: string;
  body: string;
  reply_to: string | null;
  task: string | null;
  trace_id: string;
  action_required: boolean;
  reply_required: boolean;
  created_at: string;
  answered_at: string | null;
  answered_by: string | null;
  deliveries: Delivery[];
}

export interface WakeRecord {
  signal: string;
  type: SignalType;
  trace_id: string;
  recipient: string;
  at: string;
  path: string;
  result: string;
  mcp_session: string | null;
}

export interface SignalDetail extends Signal {
  wakes: WakeRecord[];
  thread: Signal[];
}

export interface NewSignal {
  to?: string;
  type?: SignalType;
  body: string;
  reply_to?: string;
  task?: string;
  action_required?: boolean;
}

export interface Location {
  path: string;
  exists: boolean;
}

export interface SourceStatus {
  path: string;
  kind: string;
  status: string;
  sessions: number;
  messages: number;
  reasons: Record<string, number>;
  notes: Record<string, number>;
  error: string | null;
  indexed_at: string | null;
}

export interface DoctorReport {
  version: string;
  data_dir: string;
  index_db: string;
  index_bytes: number;
  cursor_user_dirs: Location[];
  cursor_homes: Location[];
  discovery_notes: string[];
  sessions: number;
  messages: number;
  sources: SourceStatus[];
  daemon: { pid: number; version: string; started_at: string; url?: string; port?: number } | null;
  /** Added by the daemon's API: the Cursor CLI that runs would use. */
  cursor_cli?: CliInfo;
}

export interface Settings {
  cursor_user_dir: string | null;
  cursor_home: string | null;
  port: number | null;
  notifications: boolean;
  launch_at_login: boolean;
}

export type SettingsPatch = Partial<Settings>;

/** `GET /api/settings`: the saved settings next to what the running daemon uses. */
export interface SettingsView {
  settings: Settings;
  port: number;
  cursor_user_dirs: string[];
  cursor_homes: string[];
  overridden: Partial<Record<keyof Settings, string>>;
  restart_needed: (keyof Settings)[];
}

export interface InitResult {
  diff: string;
  changed: string[];
  skipped: string[];
}

export interface IndexEvent {
  state: 'indexing' | 'idle';
  done?: number;
  total?: number;
  /** Estimated time left, from the bytes read so far. */
  eta_ms?: number | null;
  sessions?: number;
  messages?: number;
}

export type RunStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'timed_out' | 'cancelled' | 'lost';
export type RunMode = 'agent' | 'plan' | 'ask';

export interface Permissions {
  allow: string[];
  deny: string[];
}

export interface Usage {
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
}

/** A Cursor Cloud run's repository, Cursor's ids and what it pushed. */
export interface CloudSpec {
  repo: string;
  ref?: string;
  branch?: string;
  auto_pr: boolean;
  agent_id: string;
  run_id?: string;
  agent_url?: string;
  raw_status?: string;
  pushed_branch?: string;
  pr_url?: string;
}

export interface Run {
  id: string;
  kind: string;
  cloud?: CloudSpec;
  prompt: string;
  workspace: string | null;
  model: string | null;
  mode: RunMode;
  role: string | null;
  task: string | null;
  complete_task: boolean;
  permissions: Permissions;
  timeout_secs: number;
  parent: string | null;
  resume_chat: string | null;
  status: RunStatus;
  chat_id: string | null;
  exit_code: number | null;
  result: string | null;
  error: string | null;
  warning: string | null;
  duration_ms: number | null;
  duration_api_ms: number | null;
  usage: Usage | null;
  requested_by: string;
  cancel_requested: boolean;
  /** Queued but waiting for the person: `approval`. Absent when not held. */
  held?: string;
  /** Output past the log's size limit: counted, not kept. */
  log_dropped?: { lines: number; bytes: number };
  created_at: string;
  started_at: string | null;
  ended_at: string | null;
}

/** One event of a run, as stored: `kind` says which fields it has. */
export type RunEvent =
  | { kind: 'init'; session_id: string; model: string | null; cwd: string | null }
  | { kind: 'user'; text: string }
  | { kind: 'assistant'; text: string; partial: boolean }
  | { kind: 'thinking'; text: string | null; done: boolean }
  | {
      kind: 'tool_call';
      call_id: string;
      tool: string;
      phase: string;
      path: string | null;
      command: string | null;
      outcome: string | null;
      args: unknown;
      result: unknown;
    }
  | { kind: 'result'; is_error: boolean; text: string; duration_ms: number | null; duration_api_ms: number | null; usage: Usage | null }
  | { kind: 'notice'; text: string }
  | { kind: 'stderr'; text: string }
  | { kind: 'raw'; text: string; reason: string }
  | { kind: 'status'; status: string; message: string | null };

export type StoredEvent = RunEvent & { seq: number; at: string };

export interface RunDetail extends Run {
  /** A page: the newest events, or those before `before`. */
  events: StoredEvent[];
  /** Every event the run's log holds. */
  events_total: number;
  children: string[];
}

export interface NewRun {
  prompt?: string;
  task?: string;
  workspace?: string;
  model?: string;
  mode?: RunMode;
  role?: string;
  timeout_secs?: number;
  permissions?: Permissions;
  complete?: boolean;
  where?: 'local' | 'cloud';
  repo?: string;
  ref?: string;
  branch?: string;
  auto_pr?: boolean;
}

export interface CliInfo {
  found: boolean;
  path: string | null;
  from: string | null;
  version: string | null;
  hint: string | null;
}

export interface RunOptions {
  roles: { name: string; description: string }[];
  roots: string[];
  cursor_cli: CliInfo;
  defaults: { timeout_minutes: number; max_total: number; max_per_workspace: number };
  cloud: { key: boolean; defaults: { timeout_minutes: number; max_running: number } };
}

/** One check of the Cursor Cloud setup (`GET /api/cloud/doctor`). */
export interface CloudCheck {
  name: string;
  status: 'ok' | 'warn' | 'fail';
  detail: string;
  fix?: string;
}

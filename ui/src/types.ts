// JSON shapes of the UI API (docs/api.md; the same JSON `tether … --json` prints), generated
// from the Rust types that produce them (ui/src/gen, written by scripts/gen-types; CI fails
// when they are stale). Only what the Rust side does not describe one-to-one is written here.

export type { Coverage, MessageOut, ProjectCount, SearchHit, SessionSummary, TagCount } from './gen/history';
export type {
  Agent,
  AgentKind,
  CloudSpec,
  Delivery,
  Event as TaskEvent,
  LogDropped,
  NewRun,
  NewSignal,
  NewTask,
  Permissions,
  Role,
  Run,
  RunDetail,
  RunEvent,
  RunMode,
  RunStatus,
  Signal,
  SignalDetail,
  SignalType,
  Status,
  StoredEvent,
  Task,
  TaskChange as TaskPatch,
  TaskDetail,
  Usage,
  WakeRecord,
} from './gen/board';
export type {
  AgentSettings,
  AgentStatus,
  Attention,
  DoctorReport,
  IndexEvent,
  Installed as InitResult,
  Location,
  Settings,
  SessionPage,
  SettingsView,
  SourceStatus,
  Tag as SessionPatch,
} from './gen/core';
export type { CliInfo } from './gen/runner';
export type { Check as CloudCheck } from './gen/cloud';
export type { Comment, NewComment, RunWorktree, ChangeSummary } from './gen/board';
export type { RunDiff, DiffComment, MergeResult, PrResult, WorktreesReport, TeamStatus, MachineSeen, SharePreview, Redaction } from './gen/core';
export type { SharedChat, SharedSummary, TaskImportReport } from './gen/board';
export type {
  UsageCoverage,
  Dim,
  ImportUsage,
  Price,
  PriceTable,
  UsageQuery,
  UsageReport,
  UsageRow,
  UsageSummary,
} from './gen/core';
export type { ImportReport, Malformed } from './gen/history';
export type { BlameResult, LineOrigin, EditOrigin, OriginCounts, FileTouched, Publish } from './gen/core';
export type { Contributor, EditKind, Range as TraceRange, TracedRepo, WrittenBy } from './gen/trace';
export type { FileChange, ChangeKind, Strategy } from './gen/git';

import type { SessionSummary, MessageOut } from './gen/history';
import type { DoctorReport, Options } from './gen/core';
import type { CliInfo } from './gen/runner';

/** A chat with a page of its messages. Its serializer renames the summary's `messages` count
 * to `message_count` (the list takes the name), a shape ts-rs cannot describe. */
export interface SessionDetail extends Omit<SessionSummary, 'messages'> {
  /** The summary's message count (`messages` is the list here). */
  message_count: number;
  parts: number;
  offset: number;
  messages: MessageOut[];
}

/** The priorities a task takes (the Rust side keeps the text as given, checked on write). */
export type Priority = 'critical' | 'high' | 'medium' | 'low';

/** A change to the settings: any field, `null` resets one to its default. */
export type SettingsPatch = Partial<{ [K in keyof import('./gen/core').Settings]: import('./gen/core').Settings[K] | null }>;

/** `GET /api/doctor`: the doctor's report with the Cursor CLI the runner found. */
export type Doctor = DoctorReport & { cursor_cli: CliInfo };

/** `GET /api/runs/options`: what the engine offers, with the Cursor CLI the runner found. */
export type RunOptions = Options & { cursor_cli: CliInfo };

/** `GET /api/cloud/doctor`: the cloud setup's checks. */
export type CloudDoctor = { checks: import('./gen/cloud').Check[] };

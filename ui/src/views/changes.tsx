// A run's Changes tab: what its branch changed against its base — a file tree with counts and the
// diff (unified or side by side, highlighted, big files folded, binary files named) drawn by
// diff2html — with the person's comments on its lines (click a line number, shift-click to extend),
// "Send to agent" (a follow-up carrying the open comments), merge and discard. Diff text is the
// repository's, untrusted: diff2html escapes it and highlight.js escapes what it colours.

import 'diff2html/bundles/css/diff2html.min.css';

import { parse } from 'diff2html';
import type { DiffFile } from 'diff2html/lib-esm/types';
import { Diff2HtmlUI } from 'diff2html/lib-esm/ui/js/diff2html-ui-base';
import { useEffect, useMemo, useRef, useState } from 'preact/hooks';

import { api } from '../api';
import { ErrorNote } from '../components';
import { navigate, reportError, toast } from '../hooks';
import { hljs } from '../markdown';
import type { ChangeKind, DiffComment, Run, RunDiff, Strategy } from '../types';

type Layout = 'line-by-line' | 'side-by-side';
/** A file with more changed lines than this is folded (diff2html's "too big" note). */
const FOLD_LINES = 1500;

interface Selection {
  path: string;
  start: number;
  end: number;
}

const KIND: Record<ChangeKind, string> = {
  added: 'A',
  modified: 'M',
  deleted: 'D',
  renamed: 'R',
  copied: 'C',
  type_changed: 'T',
};

/** The file and the new-side line number a click in the drawn diff landed on, if any. */
function lineAt(target: HTMLElement, files: DiffFile[], host: HTMLElement): { path: string; line: number } | null {
  const wrapper = target.closest('.d2h-file-wrapper');
  const cell = target.closest('td.d2h-code-linenumber, td.d2h-code-side-linenumber');
  if (!wrapper || !cell) return null;
  const index = Array.from(host.querySelectorAll('.d2h-file-wrapper')).indexOf(wrapper);
  const file = files[index];
  if (!file) return null;
  let text: string | null | undefined;
  if (cell.classList.contains('d2h-code-linenumber')) {
    text = cell.querySelector('.line-num2')?.textContent;
  } else {
    // Side by side: only the right-hand (the run's) side has the lines a comment is on.
    const sides = Array.from(wrapper.querySelectorAll('.d2h-file-side-diff'));
    if (sides.indexOf(cell.closest('.d2h-file-side-diff') as Element) !== 1) return null;
    text = cell.textContent;
  }
  const line = Number.parseInt((text ?? '').trim(), 10);
  return Number.isFinite(line) && line > 0 ? { path: file.newName, line } : null;
}

/** Marks the rows of `sel` (and of open comments) in the drawn diff. */
function markRows(host: HTMLElement, files: DiffFile[], ranges: { sel: Selection | null; comments: DiffComment[] }) {
  host.querySelectorAll('tr.row-selected, tr.row-commented').forEach((r) => r.classList.remove('row-selected', 'row-commented'));
  const wrappers = Array.from(host.querySelectorAll('.d2h-file-wrapper'));
  const mark = (path: string, start: number, end: number, cls: string) => {
    const i = files.findIndex((f) => f.newName === path);
    const w = wrappers[i];
    if (!w) return;
    w.querySelectorAll('td.d2h-code-linenumber .line-num2').forEach((n) => {
      const line = Number.parseInt(n.textContent ?? '', 10);
      if (line >= start && line <= end) n.closest('tr')?.classList.add(cls);
    });
    const right = w.querySelectorAll('.d2h-file-side-diff')[1];
    right?.querySelectorAll('td.d2h-code-side-linenumber').forEach((n) => {
      const line = Number.parseInt(n.textContent ?? '', 10);
      if (line >= start && line <= end) n.closest('tr')?.classList.add(cls);
    });
  };
  for (const c of ranges.comments) if (c.current && !c.addressed_at) mark(c.path, c.start_line, c.end_line, 'row-commented');
  if (ranges.sel) mark(ranges.sel.path, ranges.sel.start, ranges.sel.end, 'row-selected');
}

export function RunChanges({ run, onRun }: { run: Run; onRun: (r: Run) => void }) {
  const [diff, setDiff] = useState<RunDiff | null>(null);
  const [err, setErr] = useState<unknown>(null);
  const [layout, setLayout] = useState<Layout>(() => (localStorage.getItem('tether.diffLayout') as Layout) || 'line-by-line');
  const [sel, setSel] = useState<Selection | null>(null);
  const [text, setText] = useState('');
  const [strategy, setStrategy] = useState<Strategy>('squash');
  const [busy, setBusy] = useState(false);
  const host = useRef<HTMLDivElement>(null);
  const load = () => api.runDiff(run.id).then((d) => (setDiff(d), setErr(null)), setErr);
  useEffect(() => {
    load();
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [run.id, run.status, run.head_commit]);
  const files = useMemo(() => (diff?.patch ? parse(diff.patch, { diffMaxChanges: FOLD_LINES }) : []), [diff?.patch]);
  useEffect(() => {
    if (!host.current) return;
    const started = performance.now();
    const ui = new Diff2HtmlUI(
      host.current,
      files,
      { outputFormat: layout, drawFileList: false, matching: 'lines', highlight: true, fileContentToggle: false, stickyFileHeaders: true },
      hljs,
    );
    ui.draw();
    ui.highlightCode();
    host.current.dataset.renderMs = String(Math.round(performance.now() - started));
    markRows(host.current, files, { sel, comments: diff?.comments ?? [] });
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [files, layout]);
  useEffect(() => {
    if (host.current) markRows(host.current, files, { sel, comments: diff?.comments ?? [] });
  }, [sel, diff?.comments, files]);

  if (err) return <ErrorNote error={err} testid="changes-error" />;
  if (!diff) return <div class="loading">Loading the changes…</div>;
  const w = run.worktree;
  const merged = w?.merged_into;
  const open = diff.comments.filter((c) => !c.sent_in && !c.addressed_at);
  const canFinish = !!w && !merged && w.removed_why !== 'discarded' && !['queued', 'running'].includes(run.status);

  const onClick = (e: MouseEvent) => {
    const at = host.current && lineAt(e.target as HTMLElement, files, host.current);
    if (!at) return;
    if (e.shiftKey && sel && sel.path === at.path) {
      setSel({ path: at.path, start: Math.min(sel.start, at.line), end: Math.max(sel.end, at.line) });
    } else {
      setSel({ path: at.path, start: at.line, end: at.line });
    }
  };
  const comment = (e: Event) => {
    e.preventDefault();
    if (!sel || !text.trim()) return;
    api.commentRun(run.id, { path: sel.path, start_line: sel.start, end_line: sel.end, body: text }).then(
      () => (setSel(null), setText(''), load()),
      (e2) => reportError(e2, 'Comment not saved'),
    );
  };
  const send = () =>
    api.sendComments(run.id).then(
      (r) => (toast(`${r.id} started with ${open.length} comment${open.length === 1 ? '' : 's'}`), navigate('runs', r.id)),
      (e2) => reportError(e2, 'Follow-up not started'),
    );
  const merge = () => {
    setBusy(true);
    api.mergeRun(run.id, strategy).then(
      (m) => (setBusy(false), toast(`${run.id} merged into ${m.into}`), onRun(m.run)),
      (e2) => (setBusy(false), reportError(e2, 'Not merged')),
    );
  };
  const openPr = () => {
    setBusy(true);
    api.prRun(run.id).then(
      (p) => (setBusy(false), toast(p.created ? `Pull request #${p.number} opened` : `Pushed to pull request #${p.number}`), onRun(p.run)),
      (e2) => (setBusy(false), reportError(e2, 'No pull request')),
    );
  };
  const discard = () => {
    if (!confirm(`Throw away ${run.id}'s work? Its worktree and branch ${w?.branch} are removed.`)) return;
    api.discardRun(run.id).then((r) => (toast(`${r.id}'s work discarded`), onRun(r)), (e2) => reportError(e2, 'Not discarded'));
  };
  const scrollTo = (i: number) => host.current?.querySelectorAll('.d2h-file-wrapper')[i]?.scrollIntoView({ block: 'start' });
  const s = diff.summary;
  return (
    <div class="changes" data-testid="run-changes">
      <div class="changes-head">
        <span data-testid="changes-summary">
          <strong>{s.files}</strong> file{s.files === 1 ? '' : 's'} <span class="add">+{s.added}</span> <span class="del">−{s.deleted}</span>
          {s.binary ? ` · ${s.binary} binary` : ''}
        </span>
        <span class="muted small">
          {diff.base_branch ?? diff.base.slice(0, 10)} → {diff.branch}
        </span>
        <span class="spacer" />
        <div class="seg" role="group" aria-label="Diff layout">
          {(['line-by-line', 'side-by-side'] as Layout[]).map((l) => (
            <button
              type="button"
              key={l}
              class={layout === l ? 'on' : ''}
              onClick={() => (setLayout(l), localStorage.setItem('tether.diffLayout', l))}
              data-testid={`diff-${l}`}
            >
              {l === 'line-by-line' ? 'Unified' : 'Side by side'}
            </button>
          ))}
        </div>
        {canFinish && (
          <>
            <select value={strategy} onChange={(e) => setStrategy((e.target as HTMLSelectElement).value as Strategy)} data-testid="merge-strategy">
              <option value="squash">Squash</option>
              <option value="merge">Merge commit</option>
              <option value="rebase">Rebase</option>
            </select>
            <button type="button" class="primary" onClick={merge} disabled={busy || s.files === 0} data-testid="run-merge">
              Merge into {diff.base_branch ?? '…'}
            </button>
            <button type="button" onClick={openPr} disabled={busy || s.files === 0} data-testid="run-pr">
              {w?.pr_url ? 'Push to pull request' : 'Open pull request'}
            </button>
            <button type="button" class="danger" onClick={discard} data-testid="run-discard">
              Discard
            </button>
          </>
        )}
      </div>
      {diff.note && <div class="note-warn small">{diff.note}</div>}
      {w?.pr_url && (
        <div class="small">
          Pull request:{' '}
          <a href={w.pr_url} target="_blank" rel="noreferrer" data-testid="changes-pr">
            #{w.pr_number} on GitHub
          </a>
        </div>
      )}
      {merged && (
        <div class="note-ok small" data-testid="changes-merged">
          Merged into {merged} as {w?.merged_commit?.slice(0, 10)}
          {w?.removed_why === 'merged' ? '; its worktree is removed' : ''}.
        </div>
      )}
      <div class="changes-body">
        <nav class="file-tree" data-testid="changes-files">
          {diff.files.map((f, i) => (
            <button type="button" class="file-row" key={f.path} onClick={() => scrollTo(i)} title={f.old_path ? `from ${f.old_path}` : f.path}>
              <span class={`kind k-${f.kind}`}>{KIND[f.kind]}</span>
              <span class="path">{f.path}</span>
              <span class="counts">{f.added === null ? 'binary' : <><span class="add">+{f.added}</span> <span class="del">−{f.deleted}</span></>}</span>
            </button>
          ))}
        </nav>
        <div class="diff-pane">
          {/* eslint-disable-next-line jsx-a11y/click-events-have-key-events */}
          <div ref={host} class="diff-host" onClick={onClick} data-testid="diff" />
        </div>
      </div>
      {sel && (
        <form class="comment-box" onSubmit={comment} data-testid="comment-box">
          <div class="small">
            Comment on <strong>{sel.path}</strong> {sel.start === sel.end ? `line ${sel.start}` : `lines ${sel.start}–${sel.end}`}
            <span class="muted"> (shift-click a line number to extend)</span>
          </div>
          <textarea value={text} rows={3} placeholder="What should change here?" onInput={(e) => setText((e.target as HTMLTextAreaElement).value)} data-testid="comment-text" />
          <div class="row">
            <button type="submit" class="primary" disabled={!text.trim()} data-testid="comment-save">
              Comment
            </button>
            <button type="button" onClick={() => setSel(null)}>
              Cancel
            </button>
          </div>
        </form>
      )}
      {diff.comments.length > 0 && (
        <section class="comments" data-testid="changes-comments">
          <div class="comments-head">
            <strong>Comments</strong>
            <span class="spacer" />
            {open.length > 0 && canFinish && (
              <button type="button" class="primary" onClick={send} data-testid="comments-send">
                Send {open.length} to agent
              </button>
            )}
          </div>
          {diff.comments.map((c) => (
            <div class={`comment ${c.addressed_at ? 'addressed' : ''}`} key={c.id} data-testid="comment">
              <div class="small">
                <strong>
                  {c.path}:{c.start_line}
                  {c.end_line !== c.start_line ? `–${c.end_line}` : ''}
                </strong>{' '}
                <span class="muted">
                  {c.author} · {c.addressed_at ? `addressed by ${c.sent_in}` : c.sent_in ? `sent in ${c.sent_in}` : 'open'}
                  {c.current ? '' : ' · outdated'}
                </span>
              </div>
              <pre class="quote">{c.quote}</pre>
              <div>{c.body}</div>
            </div>
          ))}
        </section>
      )}
    </div>
  );
}

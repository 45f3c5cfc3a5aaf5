import type { ComponentChildren, JSX } from 'preact';
import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';

import { ApiError } from './api';
import { signal as mkSignal } from './signal';
import { toasts, useSignal } from './hooks';
import { computeWindow } from './windowing';

export function Empty({ title, children, testid }: { title: string; children?: ComponentChildren; testid?: string }) {
  return (
    <div class="empty" data-testid={testid ?? 'empty'}>
      <h3>{title}</h3>
      {children && <div class="empty-body">{children}</div>}
    </div>
  );
}

export function ErrorNote({ error, testid }: { error: unknown; testid?: string }) {
  if (!error) return null;
  const e = error as Error;
  const code = e instanceof ApiError ? e.code : undefined;
  return (
    <div class="error-note" role="alert" data-testid={testid ?? 'error'}>
      {code && <code class="code">{code}</code>} {e.message}
    </div>
  );
}

/**
 * Only the rows in view are in the DOM (fixed row height). `active` is kept scrolled into view.
 */
export function VirtualList(props: {
  count: number;
  rowHeight: number;
  renderRow: (index: number) => JSX.Element;
  active?: number;
  testid?: string;
  label: string;
  onKeyDown?: (e: KeyboardEvent) => void;
  /** Told which rows [start, end) are rendered, whenever that changes (to read their pages). */
  onRange?: (start: number, end: number) => void;
}) {
  const { count, rowHeight, renderRow, active, onRange } = props;
  const ref = useRef<HTMLDivElement>(null);
  const [scrollTop, setScrollTop] = useState(0);
  const [height, setHeight] = useState(600);
  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return;
    setHeight(el.clientHeight || 600);
    const ro = new ResizeObserver(() => setHeight(el.clientHeight || 600));
    ro.observe(el);
    return () => ro.disconnect();
  }, []);
  useEffect(() => {
    const el = ref.current;
    if (!el || active == null || active < 0) return;
    const top = active * rowHeight;
    if (top < el.scrollTop) el.scrollTop = top;
    else if (top + rowHeight > el.scrollTop + el.clientHeight) el.scrollTop = top + rowHeight - el.clientHeight;
  }, [active, rowHeight]);
  // A new, shorter list: keep scrollTop within bounds.
  useEffect(() => {
    const el = ref.current;
    if (el && el.scrollTop > count * rowHeight) el.scrollTop = 0;
  }, [count, rowHeight]);
  const w = computeWindow({ count, rowHeight, scrollTop, viewportHeight: height, overscan: 6 });
  useEffect(() => onRange?.(w.start, w.end), [w.start, w.end, onRange]);
  const rows: JSX.Element[] = [];
  for (let i = w.start; i < w.end; i++) rows.push(renderRow(i));
  return (
    <div
      class="vlist"
      ref={ref}
      role="listbox"
      aria-label={props.label}
      tabIndex={0}
      data-testid={props.testid}
      data-count={count}
      onScroll={(e) => setScrollTop((e.currentTarget as HTMLDivElement).scrollTop)}
      onKeyDown={props.onKeyDown}
    >
      <div class="vlist-spacer" style={{ height: `${w.totalHeight}px` }}>
        <div class="vlist-rows" style={{ transform: `translateY(${w.offsetTop}px)` }}>
          {rows}
        </div>
      </div>
    </div>
  );
}

/** A modal on the native <dialog> element (focus trap and Escape for free). */
export function Dialog(props: {
  open: boolean;
  title: string;
  onClose: () => void;
  children: ComponentChildren;
  testid?: string;
  wide?: boolean;
}) {
  const ref = useRef<HTMLDialogElement>(null);
  useEffect(() => {
    const d = ref.current;
    if (!d) return;
    if (props.open && !d.open) d.showModal();
    if (!props.open && d.open) d.close();
  }, [props.open]);
  return (
    <dialog
      ref={ref}
      class={props.wide ? 'dialog wide' : 'dialog'}
      aria-label={props.title}
      data-testid={props.testid}
      onClose={props.onClose}
      onCancel={(e) => {
        e.preventDefault();
        props.onClose();
      }}
    >
      {props.open && (
        <>
          <header class="dialog-head">
            <h2>{props.title}</h2>
            <button type="button" class="icon" aria-label="Close" onClick={props.onClose}>
              ×
            </button>
          </header>
          <div class="dialog-body">{props.children}</div>
        </>
      )}
    </dialog>
  );
}

interface ConfirmReq {
  title: string;
  body: string;
  confirm: string;
  danger: boolean;
  resolve: (ok: boolean) => void;
}
const confirmReq = mkSignal<ConfirmReq | null>(null);

/** An in-page confirm (window.confirm is unavailable in some webviews and blocks tests). */
export function confirmDialog(title: string, body: string, confirm = 'OK', danger = true): Promise<boolean> {
  return new Promise((resolve) => confirmReq.set({ title, body, confirm, danger, resolve }));
}

export function ConfirmHost() {
  const req = useSignal(confirmReq);
  const done = (ok: boolean) => {
    req?.resolve(ok);
    confirmReq.set(null);
  };
  return (
    <Dialog open={!!req} title={req?.title ?? ''} onClose={() => done(false)} testid="confirm">
      <p class="confirm-body">{req?.body}</p>
      <div class="actions">
        <button type="button" onClick={() => done(false)} data-testid="confirm-cancel">
          Cancel
        </button>
        <button type="button" class={req?.danger ? 'danger' : 'primary'} onClick={() => done(true)} data-testid="confirm-ok" autoFocus>
          {req?.confirm}
        </button>
      </div>
    </Dialog>
  );
}

export function Toasts() {
  const list = useSignal(toasts);
  return (
    <div class="toasts" aria-live="polite" data-testid="toasts">
      {list.map((t) => (
        <div key={t.id} class={`toast ${t.kind}`} role={t.kind === 'error' ? 'alert' : 'status'} data-testid={`toast-${t.kind}`}>
          {t.text}
        </div>
      ))}
    </div>
  );
}

/** Injects HTML that a sanitiser or escaper produced (never call it with raw text). */
export function SafeHtml({ html, class: cls, testid }: { html: string; class?: string; testid?: string }) {
  return <div class={cls} data-testid={testid} dangerouslySetInnerHTML={{ __html: html }} />;
}

export function Chip({ label, onRemove, testid }: { label: string; onRemove?: () => void; testid?: string }) {
  return (
    <span class="chip" data-testid={testid}>
      {label}
      {onRemove && (
        <button type="button" class="chip-x" aria-label={`Remove tag ${label}`} onClick={onRemove}>
          ×
        </button>
      )}
    </span>
  );
}

export function CopyButton({ text, label = 'Copy', testid }: { text: string; label?: string; testid?: string }) {
  const [done, setDone] = useState(false);
  return (
    <button
      type="button"
      data-testid={testid}
      onClick={async () => {
        try {
          await navigator.clipboard.writeText(text);
        } catch {
          // Clipboard API refused (no permission / insecure context): select-and-copy fallback.
          const ta = document.createElement('textarea');
          ta.value = text;
          document.body.append(ta);
          ta.select();
          document.execCommand('copy');
          ta.remove();
        }
        setDone(true);
        setTimeout(() => setDone(false), 1500);
      }}
    >
      {done ? 'Copied' : label}
    </button>
  );
}

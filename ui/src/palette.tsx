import { useEffect, useMemo, useRef, useState } from 'preact/hooks';

import { api } from './api';
import { navigate, reportError, toast } from './hooks';
import type { View } from './router';
import { NEW_TASK_PARAM } from './views/tasks';

export interface Command {
  id: string;
  label: string;
  hint?: string;
  run: () => void;
}

const VIEW_LABELS: [View, string][] = [
  ['sessions', 'Sessions'],
  ['tasks', 'Tasks'],
  ['tags', 'Tags'],
  ['agents', 'Agents'],
  ['health', 'Health'],
  ['settings', 'Settings'],
];

export function commandsFor(text: string): Command[] {
  const cmds: Command[] = VIEW_LABELS.map(([v, l]) => ({ id: `go-${v}`, label: `Go to ${l}`, run: () => navigate(v) }));
  cmds.push(
    { id: 'new-task', label: 'Create task', run: () => navigate('tasks', undefined, { [NEW_TASK_PARAM]: '1' }) },
    {
      id: 'reindex',
      label: 'Re-index Cursor chats',
      run: () =>
        api.reindex().then(
          () => toast('Re-index started'),
          (e) => reportError(e, 'Re-index'),
        ),
    },
  );
  const t = text.trim().toLowerCase();
  const matched = t ? cmds.filter((c) => c.label.toLowerCase().includes(t) || t.split(/\s+/).every((w) => c.label.toLowerCase().includes(w))) : cmds;
  if (text.trim()) {
    matched.push({ id: 'search', label: `Search chats for “${text.trim()}”`, run: () => navigate('sessions', undefined, { q: text.trim() }) });
  }
  return matched;
}

export function Palette({ open, onClose }: { open: boolean; onClose: () => void }) {
  const [text, setText] = useState('');
  const [sel, setSel] = useState(0);
  const input = useRef<HTMLInputElement>(null);
  const cmds = useMemo(() => commandsFor(text), [text]);
  // Cleared on closing, not on opening: a reset after opening could wipe what was typed at once
  // (the browser tests type right after Ctrl+K and lost the text that way).
  useEffect(() => {
    if (open) {
      setTimeout(() => input.current?.focus(), 0);
    } else {
      setText('');
      setSel(0);
    }
  }, [open]);
  useEffect(() => setSel(0), [text]);
  if (!open) return null;
  const run = (c: Command | undefined) => {
    if (!c) return;
    onClose();
    c.run();
  };
  return (
    <div class="palette-backdrop" onClick={onClose} data-testid="palette">
      <div class="palette" role="dialog" aria-modal="true" aria-label="Command palette" onClick={(e) => e.stopPropagation()}>
        <label class="sr-only" for="palette-input">
          Command
        </label>
        <input
          id="palette-input"
          ref={input}
          type="text"
          placeholder="Jump to a view, search chats, create a task…"
          value={text}
          autoComplete="off"
          onInput={(e) => setText((e.target as HTMLInputElement).value)}
          onKeyDown={(e) => {
            if (e.key === 'ArrowDown') {
              e.preventDefault();
              setSel((s) => Math.min(cmds.length - 1, s + 1));
            } else if (e.key === 'ArrowUp') {
              e.preventDefault();
              setSel((s) => Math.max(0, s - 1));
            } else if (e.key === 'Enter') {
              e.preventDefault();
              run(cmds[sel]);
            } else if (e.key === 'Escape') {
              e.preventDefault();
              onClose();
            }
          }}
          data-testid="palette-input"
        />
        <ul role="listbox" aria-label="Commands">
          {cmds.map((c, i) => (
            <li key={c.id} role="option" aria-selected={i === sel} class={i === sel ? 'sel' : ''} onMouseEnter={() => setSel(i)} onClick={() => run(c)} data-testid={`cmd-${c.id}`}>
              {c.label}
            </li>
          ))}
        </ul>
      </div>
    </div>
  );
}

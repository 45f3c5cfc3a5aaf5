import { useState } from 'preact/hooks';

import { api } from '../api';
import { confirmDialog, Empty, ErrorNote } from '../components';
import { navigate, reportError, toast, useAsync, useLive } from '../hooks';

export function TagsView() {
  const tags = useAsync(() => api.tags(), []);
  const [editing, setEditing] = useState<string | null>(null);
  const [to, setTo] = useState('');
  useLive(['sessions'], () => tags.reload());

  const rename = async (from: string) => {
    const target = to.trim().replace(/^#/, '');
    if (!target || target === from) {
      setEditing(null);
      return;
    }
    const merging = (tags.data ?? []).some((t) => t.tag === target);
    if (merging && !(await confirmDialog('Merge tags?', `#${target} exists already: every chat tagged #${from} gets #${target} and #${from} goes away.`, 'Merge', false))) return;
    try {
      const r = await api.renameTag(from, target);
      toast(merging ? `Merged #${from} into #${r.tag} (${r.sessions} chats)` : `Renamed #${from} to #${r.tag}`);
      setEditing(null);
      tags.reload();
    } catch (e) {
      reportError(e, 'Rename');
    }
  };

  const remove = async (tag: string, n: number) => {
    if (!(await confirmDialog(`Delete #${tag}?`, `The tag is removed from ${n} chat${n === 1 ? '' : 's'}. The chats stay.`, 'Delete tag'))) return;
    try {
      const r = await api.deleteTag(tag);
      toast(`Removed #${tag} from ${r.removed_from} chat${r.removed_from === 1 ? '' : 's'}`);
      tags.reload();
    } catch (e) {
      reportError(e, 'Delete');
    }
  };

  return (
    <div class="page">
      <div class="toolbar">
        <h1>Tags</h1>
      </div>
      <ErrorNote error={tags.error} />
      {tags.data && tags.data.length === 0 ? (
        <Empty title="No tags yet" testid="tags-empty">
          <p>
            Tag a chat from its reader in <b>Sessions</b>, with <code>tether sessions tag ID --add NAME</code>, or let an
            agent call <code>session_tag</code>.
          </p>
        </Empty>
      ) : (
        <table class="table narrow" data-testid="tags-table">
          <thead>
            <tr>
              <th>Tag</th>
              <th class="num">Chats</th>
              <th>
                <span class="sr-only">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {(tags.data ?? []).map((t) => (
              <tr key={t.tag} data-testid="tag-row" data-tag={t.tag}>
                <td>
                  {editing === t.tag ? (
                    <form
                      class="inline-form"
                      onSubmit={(e) => {
                        e.preventDefault();
                        rename(t.tag);
                      }}
                    >
                      <label class="sr-only" for={`rename-${t.tag}`}>
                        New name for #{t.tag}
                      </label>
                      <input
                        id={`rename-${t.tag}`}
                        type="text"
                        value={to}
                        onInput={(e) => setTo((e.target as HTMLInputElement).value)}
                        onKeyDown={(e) => e.key === 'Escape' && setEditing(null)}
                        data-testid="tag-rename-input"
                        autoFocus
                      />
                      <button type="submit" class="primary" data-testid="tag-rename-save">
                        Save
                      </button>
                      <button type="button" onClick={() => setEditing(null)}>
                        Cancel
                      </button>
                    </form>
                  ) : (
                    <button type="button" class="link" onClick={() => navigate('sessions', undefined, { tag: t.tag })} title="Show these chats">
                      #{t.tag}
                    </button>
                  )}
                </td>
                <td class="num">{t.sessions}</td>
                <td class="row-actions">
                  <button
                    type="button"
                    onClick={() => {
                      setEditing(t.tag);
                      setTo(t.tag);
                    }}
                    data-testid="tag-rename"
                  >
                    Rename
                  </button>
                  <button type="button" class="danger" onClick={() => remove(t.tag, t.sessions)} data-testid="tag-delete">
                    Delete
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <p class="muted small">Renaming a tag onto one that exists merges the two.</p>
    </div>
  );
}

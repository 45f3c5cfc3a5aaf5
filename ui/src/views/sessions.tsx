import { useEffect, useMemo, useRef, useState } from 'preact/hooks';

import { api, apiConfig, downloadWithToken } from '../api';
import { Chip, confirmDialog, Dialog, Empty, ErrorNote, SafeHtml, VirtualList } from '../components';
import { navigate, reportError, toast, useAsync, useLive, useSettled } from '../hooks';
import { renderCode, renderMarkdown } from '../markdown';
import type { Route } from '../router';
import { usePaged } from '../paged';
import { snippetHtml } from '../snippet';
import type { FileTouched, IndexEvent, MessageOut, SearchHit, SessionDetail, SessionSummary, SharePreview, SharedSummary } from '../types';
import { ago, cursorContinueLink, cursorOpenLink, dateTime, duration, shortPath, SOURCE_FILTERS, sourceLabel } from '../util';

const ROW_HEIGHT = 64;
/** Chats read a page at a time as they scroll into view. */
const PAGE = 200;
const SEARCH_LIMIT = 200;
/** Messages of a chat read at a time. */
const MSG_PAGE = 100;
// Messages put in the page in the first frame of a chat's window (more than a tall window
// shows); the rest of it follows in the next. Rendering a page of 100 messages (markdown,
// highlighting, sanitizing) was most of a long chat's open.
const FIRST_FRAME = 12;

export const searchInputId = 'session-search';

interface Row {
  id: string;
  title: string;
  project: string | null;
  source: string;
  updated_at: string | null;
  snippet?: string;
  summary?: SessionSummary;
  /** A chat shared with the team: who shared it, from which machine. */
  shared?: SharedSummary;
}

/** A shared chat's ids are `SH-n`; every other id is one of this machine's chats. */
const isShared = (id: string) => /^sh-\d+$/i.test(id);

function sharedBy(s: SharedSummary): string {
  return s.machine ? `${s.shared_by} on ${s.machine}` : s.shared_by;
}

function displayTitle(s: { title: string | null; nickname?: string | null; id: string }): string {
  return s.nickname || s.title || `Untitled chat ${s.id.slice(0, 8)}`;
}

export function SessionsView({ route }: { route: Route }) {
  const [q, setQ] = useState(route.params.q ?? '');
  const [project, setProject] = useState(route.params.project ?? '');
  const [source, setSource] = useState(route.params.source ?? '');
  const [tag, setTag] = useState(route.params.tag ?? '');
  // From Insights: chats started on a day or in a week (its Monday), or answered by a model.
  const narrow = { day: route.params.day ?? '', week: route.params.week ?? '', model: route.params.model ?? '' };
  const [bookmarked, setBookmarked] = useState(false);
  const [active, setActive] = useState(-1);
  // Searched at once, a keystroke at a time: the request a newer keystroke replaces is aborted,
  // and the last results stay until the new ones arrive (a fixed delay would eat the budget).
  const dq = q.trim();

  // The palette and the Tags view navigate here with ?q= / ?tag=.
  useEffect(() => {
    if (route.params.q !== undefined) setQ(route.params.q);
    if (route.params.tag !== undefined) setTag(route.params.tag);
    if (route.params.project !== undefined) setProject(route.params.project);
    if (route.params.source !== undefined) setSource(route.params.source);
  }, [route.params.q, route.params.tag, route.params.project, route.params.source]);

  // "Shared with the team" is a source of its own: the chats teammates shared (team mode only).
  const teamMode = source === 'team';
  // The list's filters, Insights' narrowing (a day, a week, a model) included, go to the server,
  // which pages the list: the first rows show at once at 50,000 chats. Asked for first.
  const filter = {
    project: project || undefined,
    source: (!teamMode && source) || undefined,
    tag: tag || undefined,
    bookmarked,
    ...narrowQuery(narrow),
  };
  const filterKey = JSON.stringify(filter);
  const list = usePaged<SessionSummary>(
    (offset, limit) => api.sessionPage({ ...filter, offset, limit }).then((p) => ({ items: p.sessions, total: p.total, pending: p.pending })),
    [filterKey],
    PAGE,
  );
  // The filters' choices wait for the first rows: asked for beside them, they share the
  // daemon's two cores with the one request the person is waiting for.
  const [listed, setListed] = useState(false);
  useEffect(() => {
    if (!list.loading || list.error) setListed(true);
  }, [list.loading, list.error]);
  const team = useAsync(() => (listed ? api.team().catch(() => null) : Promise.resolve(null)), [listed]);
  const shared = useAsync<SharedSummary[] | null>(() => (teamMode ? api.shared(dq || undefined) : Promise.resolve(null)), [teamMode, dq]);
  const projects = useAsync(() => (listed ? api.projects() : Promise.resolve([])), [listed]);
  const tags = useAsync(() => (listed ? api.tags() : Promise.resolve([])), [listed]);
  const searching = !!dq && !teamMode;
  const inFlight = useRef<AbortController | null>(null);
  const search = useAsync<{ q: string; hits: SearchHit[] } | null>(() => {
    inFlight.current?.abort();
    if (!searching) return Promise.resolve(null);
    const ac = new AbortController();
    inFlight.current = ac;
    return api.search(dq, project || undefined, SEARCH_LIMIT, ac.signal).then((hits) => ({ q: dq, hits }));
  }, [dq, project, teamMode]);
  // Searching a narrowed list (a tag, bookmarks, a day…): which chats are in it.
  const narrowed = !!(tag || bookmarked || narrow.day || narrow.week || narrow.model);
  const members = useAsync<Set<string> | null>(
    () => (searching && narrowed ? api.sessions({ ...filter, limit: 100000 }).then((ss) => new Set(ss.map((x) => x.id))) : Promise.resolve(null)),
    [searching && narrowed, filterKey],
  );

  useLive(['sessions'], () => {
    list.reload();
    tags.reload();
    projects.reload();
    if (dq) search.reload();
    if (searching && narrowed) members.reload();
  });
  const [indexing, setIndexing] = useState<IndexEvent | null>(null);
  useLive(['index'], (d) => setIndexing((d as IndexEvent).state === 'indexing' ? (d as IndexEvent) : null));
  const pending = list.pending;

  // Rows shown from a list (team chats, search hits); else the paged list, row by row.
  const shown: Row[] | null = useMemo(() => {
    if (teamMode) {
      return (shared.data ?? []).map((c) => ({
        id: c.id,
        title: c.title,
        project: c.project,
        source: 'team',
        updated_at: new Date(c.shared_at).toISOString(),
        shared: c,
      }));
    }
    if (!search.data) return null;
    // What the pages read so far say about a hit (nickname, bookmark, tags).
    const byId = new Map(list.loaded().map(([, x]) => [x.id, x]));
    const within = members.data;
    return search.data.hits
      .filter((h) => (!source || h.source === source) && (!narrowed || !within || within.has(h.session_id)))
      .map((h) => {
        const s = byId.get(h.session_id);
        return {
          id: h.session_id,
          title: s ? displayTitle(s) : h.title || h.session_id.slice(0, 8),
          project: h.project,
          source: h.source,
          updated_at: h.updated_at,
          snippet: h.snippet,
          summary: s,
        };
      });
  }, [list.loaded, search.data, members.data, shared.data, teamMode, source, narrowed]);
  const count = shown ? shown.length : list.total;
  const rowAt = (i: number): Row | undefined => {
    if (shown) return shown[i];
    const s = list.get(i);
    return s && { id: s.id, title: displayTitle(s), project: s.project, source: s.source, updated_at: s.updated_at, summary: s };
  };

  const openId = route.id;
  useEffect(() => {
    const i = shown ? shown.findIndex((r) => r.id === openId) : (list.loaded().find(([, x]) => x.id === openId)?.[0] ?? -1);
    if (i >= 0) setActive(i);
  }, [openId, shown, list.loaded]);

  const open = (id: string) => navigate('sessions', id, q ? { q } : undefined);

  const onKey = (e: KeyboardEvent) => {
    if (e.key === 'ArrowDown' || e.key === 'j') {
      e.preventDefault();
      setActive((a) => Math.min(count - 1, a + 1));
    } else if (e.key === 'ArrowUp' || e.key === 'k') {
      e.preventDefault();
      setActive((a) => Math.max(0, a - 1));
    } else if (e.key === 'Enter' && rowAt(active)) {
      open(rowAt(active)!.id);
    }
  };

  const loading = teamMode ? shared.loading && !shared.data : list.loading && count === 0;
  const noChatsAtAll = !loading && !list.error && !searching && count === 0 && !project && !source && !tag && !bookmarked;

  return (
    <div class="split">
      <section class="pane list-pane" aria-label="Chats">
        <div class="filters">
          <label class="sr-only" for={searchInputId}>
            Search chats
          </label>
          <input
            id={searchInputId}
            type="search"
            placeholder="Search chats  ( / )"
            value={q}
            onInput={(e) => setQ((e.target as HTMLInputElement).value)}
            onKeyDown={(e) => {
              if (e.key === 'ArrowDown') {
                e.preventDefault();
                (document.querySelector('[data-testid=session-list]') as HTMLElement | null)?.focus();
                setActive(0);
              } else if (e.key === 'Enter' && rowAt(0)) open(rowAt(Math.max(0, active))?.id ?? rowAt(0)!.id);
            }}
            data-testid="session-search"
            autoComplete="off"
          />
          <div class="filter-row">
            <label>
              <span class="sr-only">Project</span>
              <select value={project} onChange={(e) => setProject((e.target as HTMLSelectElement).value)} data-testid="filter-project" aria-label="Project">
                <option value="">All projects</option>
                {(projects.data ?? []).map((p) => (
                  <option value={p.path} key={p.path} title={p.path}>
                    {shortPath(p.path)} ({p.sessions})
                  </option>
                ))}
              </select>
            </label>
            <label>
              <span class="sr-only">Source</span>
              <select value={source} onChange={(e) => setSource((e.target as HTMLSelectElement).value)} data-testid="filter-source" aria-label="Source">
                {SOURCE_FILTERS.map((f) => (
                  <option value={f.value} key={f.value}>
                    {f.label}
                  </option>
                ))}
                {(team.data?.joined || teamMode) && (
                  <option value="team" title="Chats shared with the team">
                    Team
                  </option>
                )}
              </select>
            </label>
            <label>
              <span class="sr-only">Tag</span>
              <select value={tag} onChange={(e) => setTag((e.target as HTMLSelectElement).value)} data-testid="filter-tag" aria-label="Tag">
                <option value="">Any tag</option>
                {(tags.data ?? []).map((t) => (
                  <option value={t.tag} key={t.tag}>
                    #{t.tag} ({t.sessions})
                  </option>
                ))}
                {tag && !(tags.data ?? []).some((t) => t.tag === tag) && <option value={tag}>#{tag}</option>}
              </select>
            </label>
            <label class="check">
              <input
                type="checkbox"
                checked={bookmarked}
                onChange={(e) => setBookmarked((e.target as HTMLInputElement).checked)}
                data-testid="filter-bookmarked"
              />
              ★ only
            </label>
          </div>
          {(narrow.day || narrow.week || narrow.model) && (
            <div class="narrowed" data-testid="list-narrowed">
              {narrow.day && `Started on ${narrow.day}`}
              {narrow.week && `Started in the week of ${narrow.week}`}
              {narrow.model && `${narrow.day || narrow.week ? ' · ' : ''}Model ${narrow.model}`}{' '}
              <button type="button" class="link" onClick={() => navigate('sessions', undefined, project ? { project } : undefined)}>
                show all
              </button>
            </div>
          )}
          {(indexing || pending > 0) && (
            <IndexingNote event={indexing} pending={pending} total={list.total} searching={searching} />
          )}
          {/* data-query: the words the rows shown answer (the GUI benchmark waits on it). */}
          <div
            class="list-meta"
            data-testid="list-meta"
            aria-live="polite"
            data-query={searching ? (search.data?.q ?? '') : ''}
            data-busy={(searching ? search.loading : loading) || undefined}
          >
            {searching
              ? search.loading
                ? 'Searching…'
                : `${count} match${count === 1 ? '' : 'es'}`
              : loading
                ? 'Loading…'
                : `${count.toLocaleString('en-US')} chat${count === 1 ? '' : 's'}${teamMode ? ' shared with the team' : ''}`}
          </div>
        </div>
        <ErrorNote error={list.error ?? search.error ?? shared.error} />
        {teamMode && count === 0 && !loading ? (
          <Empty title={dq ? `No shared chat matches “${dq}”` : 'No chat shared with the team yet'} testid="shared-none">
            <p>Open one of your chats and choose “Share with team…”: you see its text with secrets replaced before anything leaves this machine.</p>
          </Empty>
        ) : noChatsAtAll ? (
          <Empty title="Tether found no Cursor chats" testid="sessions-empty">
            <p>
              Run <code>tether doctor</code> in a terminal to see where Tether looked for Cursor's data, or point it at
              the right place with <code>TETHER_CURSOR_DIR</code> / <code>--cursor-dir</code>. Chats appear here as soon
              as they are indexed.
            </p>
          </Empty>
        ) : count === 0 && !loading && !(searching && search.loading) ? (
          <Empty title={searching ? `No chat matches “${dq}”` : 'No chat matches these filters'} testid="sessions-none">
            <p>{searching ? 'Try fewer words, a prefix like pars*, or clear the filters.' : 'Clear a filter to see more chats.'}</p>
          </Empty>
        ) : (
          <VirtualList
            count={count}
            rowHeight={ROW_HEIGHT}
            active={active}
            label="Chats"
            testid="session-list"
            onKeyDown={onKey}
            onRange={shown ? undefined : list.want}
            renderRow={(i) => {
              const r = rowAt(i);
              // A row whose page is still on its way.
              if (!r) return <div key={`row-${i}`} class="row placeholder" style={{ height: `${ROW_HEIGHT}px` }} aria-hidden="true" />;
              const s = r.summary;
              return (
                <div
                  key={r.id}
                  role="option"
                  aria-selected={r.id === openId}
                  class={`row${r.id === openId ? ' open' : ''}${i === active ? ' active' : ''}`}
                  style={{ height: `${ROW_HEIGHT}px` }}
                  onClick={() => {
                    setActive(i);
                    open(r.id);
                  }}
                  data-testid="session-row"
                  data-id={r.id}
                >
                  <div class="row-title">
                    {s?.bookmarked && <span class="star on" aria-label="bookmarked">★</span>}
                    <span class="title-text">{r.title}</span>
                    <span class="row-time">{ago(r.updated_at)}</span>
                  </div>
                  {r.shared ? (
                    <div class="row-sub" data-testid="shared-row-by">
                      <span class="badge src-team">shared</span> by {sharedBy(r.shared)} · {shortPath(r.project) || 'no project'}
                    </div>
                  ) : r.snippet !== undefined ? (
                    <SafeHtml class="row-sub snippet" html={snippetHtml(r.snippet)} testid="snippet" />
                  ) : (
                    <div class="row-sub">
                      <span class={`badge src-${r.source}`} data-testid="agent-badge">
                        {sourceLabel(r.source)}
                      </span>{' '}
                      {shortPath(r.project) || 'no project'}
                      {s?.searchable === false ? (
                        <span class="muted" data-testid="row-pending">
                          {' '}
                          · indexing…
                        </span>
                      ) : (
                        s && s.messages > 0 && <span class="muted"> · {s.messages} msg{s.messages === 1 ? '' : 's'}</span>
                      )}
                      {s?.tags.map((t) => (
                        <span class="tag-mini" key={t}>
                          #{t}
                        </span>
                      ))}
                    </div>
                  )}
                </div>
              );
            }}
          />
        )}
      </section>
      <section class="pane reader-pane" aria-label="Chat">
        {openId && isShared(openId) ? (
          <SharedReader id={openId} onGone={() => (shared.reload(), navigate('sessions', undefined, { source: 'team' }))} />
        ) : openId ? (
          <Reader
            id={openId}
            seq={route.params.seq}
            summary={shown ? shown.find((r) => r.id === openId)?.summary : list.loaded().find(([, x]) => x.id === openId)?.[1]}
            onChanged={() => (list.reload(), tags.reload())}
            inTeam={!!team.data?.joined}
          />
        ) : (
          <Empty title="No chat open" testid="reader-empty">
            <p>Pick a chat on the left, or type to search every message (press / to focus the search).</p>
          </Empty>
        )}
      </section>
    </div>
  );
}

/** A first index at work: chats are listed at once and read newest first; says how far it is. */
function IndexingNote({ event, pending, total, searching }: { event: IndexEvent | null; pending: number; total: number; searching: boolean }) {
  // Until the next progress event (a page opened mid-index), the list itself says how far it is.
  const pct = event?.total
    ? Math.min(100, Math.round(((event.done ?? 0) / event.total) * 100))
    : total
      ? Math.round(((total - pending) / total) * 100)
      : undefined;
  const eta = event?.eta_ms != null && event.done !== event.total ? `, about ${duration(Math.ceil(event.eta_ms / 1000))} left` : '';
  return (
    <div class="indexing-note" data-testid="indexing-note" role="status">
      <progress max={100} value={pct} aria-label="Indexing progress" />
      <span class="small">
        {event?.total
          ? `Indexing chats, newest first: ${event.done} of ${event.total}${eta}`
          : total
            ? `Indexing chats, newest first: ${(total - pending).toLocaleString()} of ${total.toLocaleString()} read`
            : 'Indexing chats…'}
        {pending > 0 && searching && (
          <span data-testid="search-coverage"> · still indexing: {(total - pending).toLocaleString()} of {total.toLocaleString()} chats searchable</span>
        )}
      </span>
    </div>
  );
}

function Pending({ summary }: { summary: SessionSummary }) {
  return (
    <div class="reader">
      <Empty title={summary.title || `Untitled chat ${summary.id.slice(0, 8)}`} testid="reader-pending">
        <p>Tether is still indexing: this chat is listed, and its messages open here as soon as they are read (newest chats go first).</p>
      </Empty>
    </div>
  );
}

function MessageView({ m }: { m: MessageOut }) {
  // A live chat is read again at each change: its other messages keep their HTML.
  const html = useMemo(
    () => (m.kind === 'error' ? '' : m.kind === 'tool' ? renderCode(m.text, /^\s*[[{]/.test(m.text) ? 'json' : undefined) : renderMarkdown(m.text)),
    [m.kind, m.text],
  );
  if (m.kind === 'thinking') {
    return (
      <details class="msg thinking" data-testid="msg-thinking" data-seq={m.seq}>
        <summary>Thinking</summary>
        <SafeHtml class="md" html={html} />
      </details>
    );
  }
  if (m.kind === 'error') {
    return (
      <div class="msg msg-error" data-testid="msg-error" data-seq={m.seq}>
        <span class="role">Error</span> <span>{m.text}</span>
      </div>
    );
  }
  if (m.kind === 'tool') {
    return (
      <details class="msg tool" data-testid="msg-tool" data-seq={m.seq}>
        <summary>
          Tool: <code>{m.tool_name || 'tool'}</code>
          {m.tool_status && <span class="muted"> · {m.tool_status}</span>}
        </summary>
        <SafeHtml html={html} />
      </details>
    );
  }
  return (
    <article class={`msg ${m.role}`} data-testid="msg" data-seq={m.seq}>
      <header class="msg-head">
        <span class="role">{m.role === 'user' ? 'You' : m.role === 'assistant' ? 'Assistant' : m.role}</span>
        {m.model && <span class="muted"> · {m.model}</span>}
        {m.created_at && <span class="muted msg-time">{dateTime(m.created_at)}</span>}
      </header>
      <SafeHtml class="md" html={html} testid="msg-body" />
    </article>
  );
}

function NotIndexed({ summary, onChanged }: { summary: SessionSummary; onChanged: () => void }) {
  return (
    <div class="reader" data-testid="reader-not-indexed">
      <Empty title={`“${displayTitle(summary)}” is not indexed`}>
        <p>It is marked “do not index”: Tether keeps none of its messages and shows it to no one, agents included.</p>
        <button
          type="button"
          onClick={async () => {
            try {
              await api.patchSession(summary.id, { no_index: false });
              await api.reindex().catch(() => {});
              toast('The chat will be indexed again');
              onChanged();
            } catch (e) {
              reportError(e, 'Do not index');
            }
          }}
          data-testid="index-again"
        >
          Index it again
        </button>
      </Empty>
    </div>
  );
}

function Reader({
  id,
  seq,
  summary,
  onChanged,
  inTeam,
}: {
  id: string;
  seq?: string;
  summary?: SessionSummary;
  onChanged: () => void;
  inTeam: boolean;
}) {
  const [sharing, setSharing] = useState(false);
  // A window of the chat's messages, [start, start + span): a long chat opens at its start (or at
  // the message a search hit points to) and reads on as the end scrolls into view.
  const win = useRef({ key: '', start: 0, span: MSG_PAGE });
  const [more, setMore] = useState<'idle' | 'loading'>('idle');
  const detail = useAsync(() => {
    // A new chat or hit starts its own window; a live change reads the same window again.
    const key = `${id}:${seq ?? ''}`;
    if (win.current.key !== key) win.current = { key, start: seq ? Math.max(0, Number(seq) - 20 || 0) : 0, span: MSG_PAGE };
    return api.session(id, true, win.current.start, win.current.span);
  }, [id, seq]);
  const startedBy = useAsync(() => api.runs({ chat: id, limit: 1 }).catch(() => []), [id]);
  const files = useAsync(() => api.sessionFiles(id).catch(() => []), [id]);
  const [s, setS] = useState<SessionDetail | undefined>(undefined);
  const [nick, setNick] = useState('');
  const [newTag, setNewTag] = useState('');
  const body = useRef<HTMLDivElement>(null);
  const end = useRef<HTMLDivElement>(null);

  useEffect(() => {
    if (detail.data) {
      setS(detail.data);
      setNick(detail.data.nickname ?? '');
    }
  }, [detail.data]);
  useEffect(() => setS(undefined), [id]);
  // The window's first messages are in the page at once, all of them a frame later.
  const long = !!s && s.messages.length > FIRST_FRAME;
  const settled = useSettled(long, [id, seq]);
  const partial = long && !settled;

  // Messages before or after the window, appended to it.
  const extend = async (dir: 'after' | 'before') => {
    if (!s || more === 'loading') return;
    const w = win.current;
    const offset = dir === 'after' ? w.start + s.messages.length : Math.max(0, w.start - MSG_PAGE);
    const limit = dir === 'after' ? MSG_PAGE : w.start - offset;
    if (limit <= 0) return;
    setMore('loading');
    try {
      const d = await api.session(id, true, offset, limit);
      if (d.id !== s.id) return;
      win.current = { ...w, start: dir === 'after' ? w.start : offset, span: w.span + limit };
      setS((old) =>
        old ? { ...d, offset: win.current.start, messages: dir === 'after' ? [...old.messages, ...d.messages] : [...d.messages, ...old.messages] } : old,
      );
    } catch (e) {
      reportError(e, 'Could not read more of the chat');
    } finally {
      setMore('idle');
    }
  };
  const hasMore = !!s && win.current.start + s.messages.length < s.parts;
  useEffect(() => {
    const el = end.current;
    if (!el || !hasMore) return;
    const io = new IntersectionObserver((es) => es.some((x) => x.isIntersecting) && extend('after'), { rootMargin: '600px' });
    io.observe(el);
    return () => io.disconnect();
  });

  useLive(['sessions'], (d) => {
    const ids = (d as { ids?: string[] })?.ids;
    if (!ids || ids.includes(id)) detail.reload();
  });

  // Opened from a search hit: bring the matching message into view (the 21st of its window,
  // in the page once the whole window is).
  useEffect(() => {
    if (!s || seq === undefined) return;
    const el = body.current?.querySelector(`[data-seq="${CSS.escape(seq)}"]`);
    if (el) {
      el.scrollIntoView({ block: 'center' });
      el.classList.add('hit');
    }
  }, [s, seq, partial]);

  const patch = async (p: Parameters<typeof api.patchSession>[1], what: string) => {
    try {
      const sum = await api.patchSession(id, p);
      setS((old) => (old ? { ...old, ...sum, messages: sum.no_index ? [] : old.messages } : old));
      setNick(sum.nickname ?? '');
      onChanged();
      return true;
    } catch (e) {
      reportError(e, what);
      return false;
    }
  };

  if (summary?.no_index || (s?.no_index && detail.error)) {
    return <NotIndexed summary={summary ?? (s as unknown as SessionSummary)} onChanged={() => (detail.reload(), onChanged())} />;
  }
  if (summary?.searchable === false && !s) return <Pending summary={summary} />;
  if (detail.error && !s) {
    return (
      <div class="reader">
        <ErrorNote error={detail.error} testid="reader-error" />
      </div>
    );
  }
  if (!s) return <div class="reader loading">Loading…</div>;

  const title = s.title || `Untitled chat ${s.id.slice(0, 8)}`;
  const saveNick = () => {
    const v = nick.trim();
    if (v === (s.nickname ?? '')) return;
    patch({ nickname: v || null }, 'Nickname');
  };
  const addTag = async () => {
    const t = newTag.trim().replace(/^#/, '');
    if (!t) return;
    if (await patch({ add_tags: [t] }, 'Tag')) setNewTag('');
  };

  return (
    <div class="reader" data-testid="reader" data-id={s.id}>
      <header class="reader-head">
        <div class="reader-title-row">
          <button
            type="button"
            class={`icon star${s.bookmarked ? ' on' : ''}`}
            aria-pressed={s.bookmarked}
            aria-label={s.bookmarked ? 'Remove bookmark' : 'Bookmark'}
            title={s.bookmarked ? 'Remove bookmark' : 'Bookmark'}
            onClick={() => patch({ bookmarked: !s.bookmarked }, 'Bookmark')}
            data-testid="bookmark"
          >
            {s.bookmarked ? '★' : '☆'}
          </button>
          <h2 data-testid="reader-title">{s.nickname || title}</h2>
        </div>
        {s.nickname && <div class="muted small">{title}</div>}
        <div class="meta-line muted small">
          <span class={`badge src-${s.source}`} data-testid="reader-agent">
            {sourceLabel(s.source)}
          </span>{' '}
          <span title={s.project ?? ''}>{s.project || 'no project'}</span> · {s.parts} parts ·
          updated {dateTime(s.updated_at)} · <code>{s.id}</code>
          {startedBy.data?.[0] && (
            <>
              {' '}
              · started by{' '}
              <button type="button" class="link small" onClick={() => navigate('runs', startedBy.data![0].id)} data-testid="reader-run">
                run {startedBy.data[0].id}
              </button>
            </>
          )}
        </div>
        <div class="edit-row">
          <label class="inline">
            Nickname
            <input
              type="text"
              value={nick}
              placeholder="a short name"
              onInput={(e) => setNick((e.target as HTMLInputElement).value)}
              onKeyDown={(e) => e.key === 'Enter' && (e.target as HTMLInputElement).blur()}
              onBlur={saveNick}
              data-testid="nickname"
            />
          </label>
          <div class="tags" data-testid="reader-tags">
            {s.tags.map((t) => (
              <Chip key={t} label={`#${t}`} testid="tag-chip" onRemove={() => patch({ remove_tags: [t] }, 'Tag')} />
            ))}
            <form
              class="add-tag"
              onSubmit={(e) => {
                e.preventDefault();
                addTag();
              }}
            >
              <label class="sr-only" for="add-tag">
                Add tag
              </label>
              <input id="add-tag" type="text" placeholder="add tag" value={newTag} onInput={(e) => setNewTag((e.target as HTMLInputElement).value)} data-testid="add-tag" />
              <button type="submit" data-testid="add-tag-button">
                Add
              </button>
            </form>
          </div>
        </div>
        <div class="edit-row">
          <div class="exports" role="group" aria-label="Cursor">
            {s.project && (
              <a class="button" href={cursorOpenLink(s.project)} title={`Open ${s.project} in Cursor`} data-testid="open-in-cursor">
                Open project in Cursor
              </a>
            )}
            <a
              class="button"
              href={cursorContinueLink(s.id, s.nickname || title, s.source)}
              title="Start a new Cursor chat that picks this one up (Cursor asks before sending it)"
              data-testid="continue-in-cursor"
            >
              Continue in Cursor
            </a>
          </div>
        </div>
        {inTeam && (
          <div class="edit-row">
            <button type="button" onClick={() => setSharing(true)} data-testid="share-open">
              Share with team…
            </button>
            <ShareDialog id={s.id} open={sharing} onClose={() => setSharing(false)} />
          </div>
        )}
        <div class="edit-row">
          <div class="exports" role="group" aria-label="Export">
            Export:
            {(['md', 'json', 'html'] as const).map((f) => (
              <a
                key={f}
                class="button"
                href={api.exportUrl(s.id, f)}
                download
                data-testid={`export-${f}`}
                onClick={(e) => {
                  if (!apiConfig().token?.()) return;
                  e.preventDefault();
                  downloadWithToken(api.exportUrl(s.id, f), `tether-${s.id}.${f}`).catch((err) => reportError(err, 'Export'));
                }}
              >
                {f.toUpperCase()}
              </a>
            ))}
          </div>
          <label class="check danger-text">
            <input
              type="checkbox"
              checked={s.no_index}
              data-testid="no-index"
              onChange={async (e) => {
                const el = e.target as HTMLInputElement;
                const want = el.checked;
                el.checked = s.no_index;
                if (want) {
                  const ok = await confirmDialog(
                    'Stop indexing this chat?',
                    'Its messages are removed from Tether’s index for good and it no longer appears in searches or to agents. Cursor’s own copy is not touched.',
                    'Do not index',
                  );
                  if (!ok) return;
                }
                if (await patch({ no_index: want }, 'Do not index')) toast(want ? 'Chat removed from the index' : 'Chat will be indexed again');
              }}
            />
            Do not index
          </label>
        </div>
        {files.data && files.data.length > 0 && <FilesChanged files={files.data} />}
      </header>
      <div class="messages" ref={body} data-testid="messages" data-partial={partial ? '' : undefined}>
        {win.current.start > 0 && (
          <button type="button" class="link small" onClick={() => extend('before')} disabled={more === 'loading'} data-testid="messages-earlier">
            {more === 'loading' ? 'Loading…' : `Show earlier messages (${win.current.start.toLocaleString('en-US')} before these)`}
          </button>
        )}
        {s.messages.length === 0 ? <Empty title="This chat has no messages" /> : s.messages.slice(0, partial ? FIRST_FRAME : undefined).map((m) => <MessageView key={m.seq} m={m} />)}
        {hasMore && !partial && (
          <div ref={end} class="muted small" data-testid="messages-more">
            {more === 'loading' ? 'Loading…' : `${(s.parts - win.current.start - s.messages.length).toLocaleString('en-US')} more messages`}
          </div>
        )}
      </div>
    </div>
  );
}

/** "2–5, 9": a file's ranges as its edits left them, merged. */
export function rangesText(ranges: { start_line: number; end_line: number }[]): string {
  const sorted = [...ranges].sort((a, b) => a.start_line - b.start_line);
  const merged: [number, number][] = [];
  for (const r of sorted) {
    const last = merged[merged.length - 1];
    if (last && r.start_line <= last[1] + 1) last[1] = Math.max(last[1], r.end_line);
    else merged.push([r.start_line, r.end_line]);
  }
  return merged.map(([a, b]) => (a === b ? `${a}` : `${a}–${b}`)).join(', ');
}

/** The files the chat's edits changed (code origin), each opening the Code view at its lines. */
function FilesChanged({ files }: { files: FileTouched[] }) {
  const lines = files.reduce((n, f) => n + f.lines, 0);
  return (
    <details class="files-changed" data-testid="reader-files">
      <summary>
        {files.length} file{files.length === 1 ? '' : 's'} changed · {lines} line{lines === 1 ? '' : 's'} written
      </summary>
      <ul>
        {files.map((f) => (
          <li key={f.file}>
            <button
              type="button"
              class="link"
              onClick={() => navigate('code', undefined, { path: f.file, line: String(f.ranges[0]?.start_line ?? 1) })}
              data-testid="reader-file"
            >
              {f.path}
            </button>
            <span class="muted small">
              {' '}
              {f.ranges.length > 0 ? `lines ${rangesText(f.ranges)}` : 'no positions recorded'} · {f.edits} edit{f.edits === 1 ? '' : 's'}
            </span>
          </li>
        ))}
      </ul>
    </details>
  );
}

/** What Insights narrowed the list to, as the list's query: the local day's or week's start and
 * end (ms since the epoch), and the model. */
export function narrowQuery(n: { day: string; week: string; model: string }): { since?: number; until?: number; model?: string } {
  const out: { since?: number; until?: number; model?: string } = {};
  if (n.model) out.model = n.model;
  const first = n.day || n.week;
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(first);
  if (m) {
    const start = new Date(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
    const end = new Date(start);
    end.setDate(end.getDate() + (n.day ? 1 : 7));
    out.since = start.getTime();
    out.until = end.getTime();
  }
  return out;
}

/** What sharing would send (secrets replaced), and the one button that sends exactly that. */
function ShareDialog({ id, open, onClose }: { id: string; open: boolean; onClose: () => void }) {
  const [preview, setPreview] = useState<SharePreview | null>(null);
  const [error, setError] = useState<unknown>(null);
  const [busy, setBusy] = useState(false);
  useEffect(() => {
    if (!open) return;
    setPreview(null);
    setError(null);
    api.sharePreview(id).then(setPreview, setError);
  }, [open, id]);
  const total = preview?.redactions.reduce((n, r) => n + r.count, 0) ?? 0;
  const share = async () => {
    if (!preview) return;
    setBusy(true);
    try {
      const shared = await api.share(id, preview.digest);
      toast(`Shared with the team as ${shared.id}`);
      onClose();
    } catch (e) {
      reportError(e, 'Share');
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog open={open} title="Share this chat with the team" onClose={onClose} testid="share-dialog" wide>
      <ErrorNote error={error} />
      {!preview && !error && <p class="muted">Replacing secrets…</p>}
      {preview && (
        <>
          <p data-testid="share-summary">
            Teammates will read this copy of “{preview.title}” ({preview.messages} messages).{' '}
            {total === 0
              ? 'No secrets were found in it.'
              : `${total} secret${total === 1 ? ' was' : 's were'} replaced: ${preview.redactions.map((r) => `${r.kind.replace(/_/g, ' ')} ×${r.count}`).join(', ')}.`}{' '}
            Check the text before you share it.
          </p>
          <pre class="share-text" data-testid="share-text">
            {preview.text}
          </pre>
          <div class="actions">
            <button type="button" onClick={onClose}>
              Cancel
            </button>
            <button type="button" class="primary" disabled={busy} onClick={share} data-testid="share-confirm">
              Share with team
            </button>
          </div>
        </>
      )}
    </Dialog>
  );
}

/** A chat a teammate shared: its redacted Markdown, who shared it, and taking it back. */
function SharedReader({ id, onGone }: { id: string; onGone: () => void }) {
  const chat = useAsync(() => api.sharedChat(id), [id]);
  if (chat.error) {
    return (
      <div class="reader">
        <ErrorNote error={chat.error} testid="reader-error" />
      </div>
    );
  }
  const c = chat.data;
  if (!c) return <div class="reader loading">Loading…</div>;
  return (
    <div class="reader" data-testid="shared-reader" data-id={c.id}>
      <header class="reader-head">
        <h2 data-testid="reader-title">{c.title}</h2>
        <div class="meta-line muted small">
          <span class="badge src-team">shared</span> by <strong data-testid="shared-by">{sharedBy(c)}</strong> · {dateTime(new Date(c.shared_at).toISOString())} ·{' '}
          {c.messages} messages · {c.redacted} secret{c.redacted === 1 ? '' : 's'} replaced · <code>{c.id}</code>
          {c.project && <> · {shortPath(c.project)}</>}
        </div>
        <div class="edit-row">
          <button
            type="button"
            class="danger"
            data-testid="unshare"
            onClick={async () => {
              if (!(await confirmDialog('Take this chat back?', 'The team’s copy is deleted for everyone. The chat itself stays where it was.', 'Take back'))) return;
              try {
                await api.unshare(c.id);
                toast(`${c.id} is no longer shared`);
                onGone();
              } catch (e) {
                reportError(e, 'Take back');
              }
            }}
          >
            Take back
          </button>
        </div>
      </header>
      <SafeHtml class="messages md shared-body" html={renderMarkdown(c.body)} testid="shared-body" />
    </div>
  );
}

import { describe, expect, it } from 'vitest';

import { SseParser } from '../src/events';
import { formatHash, parseHash } from '../src/router';

describe('hash routes', () => {
  it('round-trips view, id and params', () => {
    const h = formatHash({ view: 'sessions', id: 'b222/x y', params: { q: 'narwhal' } });
    expect(h).toBe('#/sessions/b222%2Fx%20y?q=narwhal');
    expect(parseHash(h)).toEqual({ view: 'sessions', id: 'b222/x y', params: { q: 'narwhal' } });
    expect(parseHash('#/tasks/T-3?view=list')).toEqual({ view: 'tasks', id: 'T-3', params: { view: 'list' } });
  });

  it('falls back to sessions for unknown or empty hashes', () => {
    expect(parseHash('').view).toBe('sessions');
    expect(parseHash('#/nope/1').view).toBe('sessions');
    expect(parseHash('#/nope/1').id).toBeUndefined();
    expect(parseHash('#/sessions/%E0%A4%A').id).toBeUndefined();
  });
});

describe('SseParser', () => {
  it('parses named events across chunk boundaries and skips comments', () => {
    const p = new SseParser();
    expect(p.feed(': keep-alive\n\nevent: hel')).toEqual([]);
    expect(p.feed('lo\ndata: {"version":"0.1.0"}\n\nevent: tasks\r\ndata: {"rev":3}\r\n')).toEqual([{ event: 'hello', data: '{"version":"0.1.0"}' }]);
    expect(p.feed('\r\ndata: a\ndata: b\n\n')).toEqual([
      { event: 'tasks', data: '{"rev":3}' },
      { event: 'message', data: 'a\nb' },
    ]);
  });
});

describe('LiveEvents', () => {
  it('delivers JSON data to listeners and asks for a refetch after a reconnect', async () => {
    const { LiveEvents } = await import('../src/events');
    const ev = new LiveEvents();
    const got: [string, unknown][] = [];
    for (const n of ['hello', 'tasks', 'sessions', 'agents'] as const) ev.on(n, (d) => got.push([n, d]));
    ev.emit('hello', '{"version":"1"}');
    ev.emit('tasks', '{"rev":2}');
    expect(got).toEqual([['hello', { version: '1' }], ['tasks', { rev: 2 }]]);
    expect(ev.state).toBe('open');
    got.length = 0;
    ev.emit('hello', '{"version":"1"}');
    expect(got.map(([n]) => n)).toEqual(['hello', 'sessions', 'tasks', 'agents']);
  });
});

import { afterEach, describe, expect, it, vi } from 'vitest';

import { agentName, cursorContinueLink, cursorOpenLink, followPort, SOURCE_FILTERS, sourceLabel } from '../src/util';

describe('Cursor links', () => {
  it('opens a folder with cursor://file, escaping what a URL cannot hold', () => {
    expect(cursorOpenLink('/home/me/my project')).toBe('cursor://file/home/me/my%20project');
    expect(cursorOpenLink('C:\\Users\\me\\app')).toBe('cursor://file/C:/Users/me/app');
    expect(cursorOpenLink('/tmp/a#b?c')).toBe('cursor://file/tmp/a%23b%3Fc');
  });

  it('continues a chat through a prompt deeplink that names the session', () => {
    const url = cursorContinueLink('abc-123', 'Fix the "login" bug & more');
    expect(url.startsWith('cursor://anysphere.cursor-deeplink/prompt?text=')).toBe(true);
    const text = new URL(url).searchParams.get('text')!;
    expect(text).toContain('session_read (id abc-123)');
    expect(text).toContain('Fix the "login" bug & more');
    expect(cursorContinueLink('x', 'y'.repeat(10_000)).length).toBeLessThanOrEqual(8000);
    expect(text).toContain('my earlier Cursor chat');
  });

  it('continues a Claude Code chat in Cursor, naming the agent it was', () => {
    const text = new URL(cursorContinueLink('5f1c2d3e', 'Marmoset parser', 'claude-code')).searchParams.get('text')!;
    expect(text).toContain('my earlier Claude Code chat “Marmoset parser”');
    expect(text).toContain('session_read (id 5f1c2d3e)');
  });
});

describe('agents', () => {
  it('labels each chat by its agent, and filters by any of them', () => {
    expect(['ide', 'cli', 'cloud', 'claude-code', 'codex', 'gemini', 'newcomer'].map(sourceLabel)).toEqual([
      'IDE',
      'CLI',
      'Cloud',
      'Claude Code',
      'Codex',
      'Gemini',
      'newcomer',
    ]);
    expect(['cli', 'codex', 'gemini', 'newcomer'].map(agentName)).toEqual(['Cursor', 'Codex', 'Gemini', 'Cursor']);
    expect(SOURCE_FILTERS.map((f) => f.value)).toEqual(['', 'ide', 'cli', 'cloud', 'claude-code', 'codex', 'gemini']);
  });
});

describe('followPort', () => {
  afterEach(() => vi.unstubAllGlobals());

  it('navigates once when the save and the daemon\'s event both ask to follow', async () => {
    const assign = vi.fn();
    vi.stubGlobal('location', { href: 'http://127.0.0.1:4000/#/settings', assign });
    vi.stubGlobal('fetch', vi.fn(async () => new Response(null)));
    const [a, b] = await Promise.all([followPort(4100), followPort(4100)]);
    expect([a, b]).toEqual([true, true]);
    expect(assign.mock.calls).toEqual([['http://127.0.0.1:4100/#/settings']]);
  });
});

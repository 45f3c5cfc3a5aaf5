import { describe, expect, it } from 'vitest';

import { cursorContinueLink, cursorOpenLink } from '../src/util';

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
  });
});

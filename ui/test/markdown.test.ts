// @vitest-environment jsdom
import { describe, expect, it } from 'vitest';

import { highlight, renderCode, renderMarkdown, sanitize } from '../src/markdown';

function dom(html: string): HTMLDivElement {
  const d = document.createElement('div');
  d.innerHTML = html;
  return d;
}

describe('renderMarkdown', () => {
  it('renders ordinary markdown', () => {
    const d = dom(renderMarkdown('# Title\n\nSome **bold** and `code`.\n\n- a\n- b'));
    expect(d.querySelector('h1')?.textContent).toBe('Title');
    expect(d.querySelector('strong')?.textContent).toBe('bold');
    expect(d.querySelectorAll('li').length).toBe(2);
  });

  it('highlights fenced code with highlight.js', () => {
    const d = dom(renderMarkdown('```rust\nfn main() { let x = 1; }\n```'));
    const code = d.querySelector('pre code');
    expect(code?.className).toContain('language-rust');
    expect(code?.querySelector('.hljs-keyword')?.textContent).toBe('fn');
  });

  it('shows raw HTML as text: no script, no event handlers, no iframes', () => {
    const payload = '<script>window.__x=1</script><img src=x onerror="window.__x=2"><iframe src="https://evil.example"></iframe><b onclick="x()">hi</b>';
    const html = renderMarkdown(`hello ${payload}`);
    const d = dom(html);
    expect(d.querySelectorAll('script, img, iframe').length).toBe(0);
    expect(d.querySelector('[onclick], [onerror]')).toBeNull();
    expect(d.textContent).toContain('<script>window.__x=1</script>');
  });

  it('drops javascript: links and makes the rest open safely', () => {
    const d = dom(renderMarkdown('[bad](javascript:alert(1)) [ok](https://example.com) <javascript:alert(2)>'));
    const links = [...d.querySelectorAll('a')];
    for (const a of links) expect(a.getAttribute('href') ?? '').not.toMatch(/^javascript:/i);
    const ok = links.find((a) => a.textContent === 'ok');
    expect(ok?.getAttribute('href')).toBe('https://example.com');
    expect(ok?.getAttribute('rel')).toContain('noopener');
    expect(ok?.getAttribute('target')).toBe('_blank');
  });

  it('turns images into links (no remote loads)', () => {
    const d = dom(renderMarkdown('![pic](https://example.com/a.png) ![x](javascript:alert(1))'));
    expect(d.querySelector('img')).toBeNull();
    expect(d.querySelector('a')?.getAttribute('href')).toBe('https://example.com/a.png');
  });

  it('never lets the text borrow the UI’s own classes or styles', () => {
    const d = dom(sanitize('<span class="toast error hljs-string" style="position:fixed">x</span><form action="/x"><input type="text"></form>'));
    const span = d.querySelector('span')!;
    expect(span.className).toBe('hljs-string');
    expect(span.getAttribute('style')).toBeNull();
    expect(d.querySelector('form, input[type=text]')).toBeNull();
  });

  it('escapes code in unknown languages', () => {
    expect(highlight('<b>x</b>', 'nolang')).toBe('&lt;b&gt;x&lt;/b&gt;');
    const d = dom(renderCode('{"a": "<img src=x onerror=alert(1)>"}', 'json'));
    expect(d.querySelector('img')).toBeNull();
    expect(d.textContent).toContain('<img src=x onerror=alert(1)>');
  });
});

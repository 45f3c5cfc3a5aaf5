// @vitest-environment jsdom
import { describe, expect, it } from 'vitest';

import { escapeHtml, snippetHtml, snippetText } from '../src/snippet';

describe('snippetHtml', () => {
  it('turns the markers into <mark> around the match', () => {
    expect(snippetHtml('Why does parseDate fail? \u0002narwhal\u0003')).toBe('Why does parseDate fail? <mark>narwhal</mark>');
  });

  it('escapes the text before marking, so HTML in a snippet stays text', () => {
    const html = snippetHtml('<img src=x onerror="alert(1)"> and \u0002<script>alert(2)</script>\u0003');
    expect(html).toBe('&lt;img src=x onerror=&quot;alert(1)&quot;&gt; and <mark>&lt;script&gt;alert(2)&lt;/script&gt;</mark>');
    expect(html).not.toMatch(/<(img|script)/);
  });

  it('renders an XSS payload inert in a real DOM', () => {
    (window as unknown as { __pwned?: number }).__pwned = 0;
    const div = document.createElement('div');
    div.innerHTML = snippetHtml('\u0002<img src=x onerror="window.__pwned=1">\u0003<svg onload="window.__pwned=2">');
    document.body.append(div);
    expect(div.querySelectorAll('img, svg, script').length).toBe(0);
    expect(div.querySelectorAll('mark').length).toBe(1);
    expect(div.textContent).toContain('<img src=x onerror="window.__pwned=1">');
    expect((window as unknown as { __pwned?: number }).__pwned).toBe(0);
    div.remove();
  });

  it('balances stray or unclosed markers', () => {
    expect(snippetHtml('a\u0003b')).toBe('ab');
    expect(snippetHtml('\u0002open')).toBe('<mark>open</mark>');
    expect(snippetHtml('\u0002a\u0002b\u0003')).toBe('<mark>ab</mark>');
    expect(snippetHtml('x\u0002a\u0003 y \u0002b\u0003')).toBe('x<mark>a</mark> y <mark>b</mark>');
  });

  it('drops other control characters but keeps ampersands escaped once', () => {
    expect(snippetHtml('a\u0000b\u0007c & d')).toBe('abc &amp; d');
    expect(escapeHtml(`&<>"'`)).toBe('&amp;&lt;&gt;&quot;&#39;');
    expect(snippetText('\u0002x\u0003 y')).toBe('x y');
  });
});

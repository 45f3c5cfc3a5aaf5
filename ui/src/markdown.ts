// Chat text → safe HTML. Conversation text is untrusted: raw HTML in it is shown as text (never
// parsed), code is highlighted by highlight.js (which escapes), and the result goes through
// DOMPurify with a short allow-list before it reaches the DOM.

import DOMPurify from 'dompurify';
import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import css from 'highlight.js/lib/languages/css';
import diff from 'highlight.js/lib/languages/diff';
import go from 'highlight.js/lib/languages/go';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import markdown from 'highlight.js/lib/languages/markdown';
import python from 'highlight.js/lib/languages/python';
import rust from 'highlight.js/lib/languages/rust';
import sql from 'highlight.js/lib/languages/sql';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';
import { Marked } from 'marked';

import { escapeHtml } from './snippet';

const LANGS = { bash, css, diff, go, javascript, json, markdown, python, rust, sql, typescript, xml, yaml };
for (const [name, lang] of Object.entries(LANGS)) hljs.registerLanguage(name, lang);
hljs.registerAliases(['sh', 'shell', 'zsh', 'console'], { languageName: 'bash' });
hljs.registerAliases(['js', 'jsx', 'mjs', 'cjs'], { languageName: 'javascript' });
hljs.registerAliases(['ts', 'tsx'], { languageName: 'typescript' });
hljs.registerAliases(['html', 'svg'], { languageName: 'xml' });
hljs.registerAliases(['py'], { languageName: 'python' });
hljs.registerAliases(['rs'], { languageName: 'rust' });
hljs.registerAliases(['yml'], { languageName: 'yaml' });
hljs.registerAliases(['md'], { languageName: 'markdown' });

/** Highlighted, escaped HTML for a code block (plain escaped text for unknown languages). */
export function highlight(code: string, lang?: string): string {
  const l = (lang ?? '').trim().split(/\s+/)[0].toLowerCase();
  if (l && hljs.getLanguage(l)) {
    try {
      return hljs.highlight(code, { language: l, ignoreIllegals: true }).value;
    } catch {
      // fall through to plain
    }
  }
  return escapeHtml(code);
}

const SAFE_URL = /^(https?:|mailto:|#)/i;

const marked = new Marked({
  gfm: true,
  breaks: true,
  async: false,
  renderer: {
    // Raw HTML in a chat is text, never markup.
    html({ text }) {
      return escapeHtml(text);
    },
    code({ text, lang }) {
      const l = (lang ?? '').trim().split(/\s+/)[0];
      const cls = l && hljs.getLanguage(l) ? ` class="hljs language-${escapeHtml(l.toLowerCase())}"` : ' class="hljs"';
      return `<pre><code${cls}>${highlight(text, l)}</code></pre>\n`;
    },
    // Images would load remote URLs: show them as links instead.
    image({ href, text }) {
      if (!href || !SAFE_URL.test(href)) return escapeHtml(text || '');
      return `<a href="${escapeHtml(href)}">${escapeHtml(text || href)}</a>`;
    },
  },
});

const ALLOWED_TAGS = [
  'a', 'b', 'blockquote', 'br', 'code', 'del', 'em', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6', 'hr', 'i', 'input', 'li',
  'ol', 'p', 'pre', 's', 'span', 'strong', 'table', 'tbody', 'td', 'th', 'thead', 'tr', 'ul',
];
const ALLOWED_ATTR = ['href', 'title', 'class', 'start', 'align', 'type', 'checked', 'disabled'];

let hooked = false;
function purifier(): typeof DOMPurify {
  if (!hooked) {
    DOMPurify.addHook('afterSanitizeAttributes', (node) => {
      if (node.tagName === 'A') {
        const href = node.getAttribute('href') ?? '';
        if (!SAFE_URL.test(href)) node.removeAttribute('href');
        node.setAttribute('target', '_blank');
        node.setAttribute('rel', 'noopener noreferrer nofollow');
      }
      // Only task-list checkboxes survive, and they stay inert.
      if (node.tagName === 'INPUT') {
        if (node.getAttribute('type') !== 'checkbox') node.remove();
        else node.setAttribute('disabled', '');
      }
      // Classes only for highlighting (hljs-*, language-*) — never our own UI's classes.
      const cls = node.getAttribute('class');
      if (cls !== null) {
        const kept = cls.split(/\s+/).filter((c) => /^(hljs(-[\w-]+)?|language-[\w-]+)$/.test(c));
        if (kept.length) node.setAttribute('class', kept.join(' '));
        else node.removeAttribute('class');
      }
    });
    // Set once: a config passed to each `sanitize` call is parsed again at every call (its
    // allow-lists rebuilt from DOMPurify's defaults), most of a long chat's first render.
    DOMPurify.setConfig({
      ALLOWED_TAGS,
      ALLOWED_ATTR: [...ALLOWED_ATTR, 'target', 'rel'],
      ALLOW_DATA_ATTR: false,
      ALLOW_ARIA_ATTR: false,
    });
    hooked = true;
  }
  return DOMPurify;
}

/** Sanitises an HTML string with the reader's allow-list. */
export function sanitize(html: string): string {
  return purifier().sanitize(html) as unknown as string;
}

/** Markdown (untrusted) → sanitised HTML. */
export function renderMarkdown(text: string): string {
  let html: string;
  try {
    html = marked.parse(text) as string;
  } catch {
    html = `<pre>${escapeHtml(text)}</pre>`;
  }
  return sanitize(html);
}

/** Untrusted text shown verbatim in a code block (tool output), highlighted when it is JSON. */
export function renderCode(text: string, lang?: string): string {
  return sanitize(`<pre><code class="hljs">${highlight(text, lang)}</code></pre>`);
}
export { hljs };

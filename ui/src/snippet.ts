// Search snippets: the daemon marks matches with \u0002 … \u0003. The text is untrusted, so it
// is HTML-escaped FIRST, and only then are the markers turned into <mark> (balanced: a stray
// closing marker is dropped, an unclosed one is closed at the end).

const ESC: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => ESC[c]);
}

export const MARK_OPEN = '\u0002';
export const MARK_CLOSE = '\u0003';

/** The snippet as safe HTML with `<mark>` around the matches. */
export function snippetHtml(snippet: string): string {
  // Other control characters (except tab/newline) carry no meaning here: drop them.
  // eslint-disable-next-line no-control-regex
  const clean = snippet.replace(/[\u0000\u0001\u0004-\u0008\u000b\u000c\u000e-\u001f\u007f]/g, '');
  let out = '';
  let open = false;
  for (const part of clean.split(/([\u0002\u0003])/)) {
    if (part === MARK_OPEN) {
      if (!open) out += '<mark>';
      open = true;
    } else if (part === MARK_CLOSE) {
      if (open) out += '</mark>';
      open = false;
    } else {
      out += escapeHtml(part);
    }
  }
  if (open) out += '</mark>';
  return out;
}

/** The snippet as plain text (markers removed), e.g. for a title attribute. */
export function snippetText(snippet: string): string {
  return snippet.replace(/[\u0002\u0003]/g, '');
}

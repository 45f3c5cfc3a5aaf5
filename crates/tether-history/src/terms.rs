//! Words of our full-text index on the Rust side: the vocabulary, kept in `fts_terms` so that a
//! prefix query (`conf*`) can be answered as an OR of the words it stands for, and the marking of
//! a query's words in search snippets (`Highlighter`).
//!
//! FTS5 answers a prefix by merging the doclists of every matching term into one list before it
//! returns a row, whatever the LIMIT: on a word found in a quarter of 900 k messages that is ~15 ms
//! for each statement that names the prefix. An OR of terms is walked lazily, newest first, and
//! stops at the LIMIT. FTS5 has no cheap way to list the terms under a prefix (`fts5vocab` walks
//! every posting to count them), hence this table.
//!
//! The table may hold more than FTS5 does — never less, or a rewritten prefix would miss rows.
//! Extra entries are harmless: each one is re-tokenized by FTS5 in the query, and any row it then
//! matches holds a token that starts with the prefix. So tokens are cut only at ASCII characters
//! other than letters and digits (never finer than `unicode61`), and a token with non-ASCII
//! characters is also recorded without its diacritics and from every point after a non-ASCII
//! character where an ASCII word starts. Where that would store long runs of text (prose in a
//! script without spaces around ASCII words), the empty term is stored instead and prefixes are
//! left to FTS5 from then on: slower, never wrong.
//!
//! Depends on rusqlite, unicode-normalization, rustc-hash and our parsed model; knows nothing of
//! Cursor's formats or of how a search ranks.

use rusqlite::{Connection, params};
use rustc_hash::FxHashSet;
use unicode_normalization::UnicodeNormalization;
use unicode_normalization::char::is_combining_mark;

/// Above this many terms a prefix stays a prefix: a long OR costs more than FTS5's merge.
pub const MAX_EXPANSION: usize = 64;

/// Longest form with non-ASCII characters that is recorded; see `Vocabulary::add_mixed`.
const MAX_MIXED_BYTES: usize = 64;

/// Inner word starts recorded per token. A token with more (a long run mixing scripts without a
/// space) stores the empty term, which turns prefix rewriting off: a missed row is worse than a
/// slow one.
const MAX_INNER_STARTS: usize = 256;

/// Terms seen during one indexing pass, so each one is written once.
#[derive(Debug, Default)]
pub struct Vocabulary {
    seen: FxHashSet<String>,
    pending: Vec<String>,
    token: Vec<u8>,
}

impl Vocabulary {
    /// Adds the tokens of `text`. Runs over every message the indexer reads, hence the byte loop:
    /// words are cut only at ASCII bytes, which never occur inside a UTF-8 sequence, so each token
    /// is a slice of `text`, copied only when it has capitals to lower.
    pub fn add_text(&mut self, text: &str) {
        let bytes = text.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i].is_ascii() && !bytes[i].is_ascii_alphanumeric() {
                i += 1;
                continue;
            }
            let start = i;
            let (mut ascii, mut upper) = (true, false);
            // Every non-ASCII character counts as part of a word here. unicode61 cuts at some of
            // them and not at others (its tables are Unicode 6.1, so it keeps later emoji inside
            // words); cutting coarser is safe, the inner starts below cover where FTS5 cuts.
            while let Some(&b) = bytes.get(i) {
                if b.is_ascii_alphanumeric() {
                    upper |= b.is_ascii_uppercase();
                } else if b.is_ascii() {
                    break;
                } else {
                    ascii = false;
                }
                i += 1;
            }
            let token = &text[start..i];
            if !ascii {
                self.add_non_ascii(&token.to_lowercase());
            } else if upper {
                let mut lower = std::mem::take(&mut self.token);
                lower.clear();
                lower.extend(token.bytes().map(|b| b.to_ascii_lowercase()));
                self.add(std::str::from_utf8(&lower).expect("ASCII"));
                self.token = lower;
            } else {
                self.add(token);
            }
        }
    }

    /// A lower-cased token with non-ASCII characters in it, in every form a prefix may need.
    fn add_non_ascii(&mut self, token: &str) {
        let stripped = strip(token);
        self.add_mixed(token);
        self.add_mixed(&stripped);
        // FTS5 may start a word after any non-ASCII character. Prefixes are rewritten only when
        // ASCII, so the words that start there with an ASCII letter or digit are the ones needed.
        let mut starts = 0;
        for form in [token, stripped.as_str()] {
            let mut after_non_ascii = false;
            for (i, c) in form.char_indices() {
                if after_non_ascii && c.is_ascii_alphanumeric() {
                    starts += 1;
                    if starts > MAX_INNER_STARTS {
                        // Too many to list: the vocabulary can no longer promise every term.
                        self.mark_incomplete();
                        return;
                    }
                    self.add_mixed(&form[i..]);
                }
                after_non_ascii = !c.is_ascii();
            }
        }
    }

    /// A form with non-ASCII characters in it: kept only if it starts like an ASCII prefix can
    /// (others are never looked up), and only if short. A long one is a run of text that FTS5 may
    /// hold as one word or cut anywhere; listing its inner starts in full would store the text
    /// many times over, so the vocabulary gives up instead.
    fn add_mixed(&mut self, term: &str) {
        if !term.as_bytes().first().is_some_and(u8::is_ascii_alphanumeric) {
            return;
        }
        if term.len() > MAX_MIXED_BYTES {
            self.mark_incomplete();
        } else {
            self.add(term);
        }
    }

    fn mark_incomplete(&mut self) {
        if self.seen.insert(String::new()) {
            self.pending.push(String::new());
        }
    }

    fn add(&mut self, term: &str) {
        if term.is_empty() {
            self.mark_incomplete();
        } else if !self.seen.contains(term) {
            self.seen.insert(term.to_owned());
            self.pending.push(term.to_owned());
        }
    }

    /// The distinct terms of one session's title and messages; the index's parser thread computes
    /// them so the writer thread only merges them (`add_terms`).
    pub fn of_session(s: &crate::model::ParsedSession) -> Vec<String> {
        let mut v = Vocabulary::default();
        v.add_text(s.title.as_deref().unwrap_or(""));
        for m in &s.messages {
            v.add_text(&m.text);
        }
        v.pending
    }

    /// The distinct terms of some texts.
    pub fn of_texts<'a>(texts: impl IntoIterator<Item = &'a str>) -> Vec<String> {
        let mut v = Vocabulary::default();
        for t in texts {
            v.add_text(t);
        }
        v.pending
    }

    /// Adds terms from `of_session` (the empty term included: it says "incomplete").
    pub fn add_terms(&mut self, terms: Vec<String>) {
        for t in terms {
            if t.is_empty() {
                self.mark_incomplete();
            } else if !self.seen.contains(&t) {
                self.seen.insert(t.clone());
                self.pending.push(t);
            }
        }
    }

    /// Writes the terms added since the last call.
    pub fn flush(&mut self, conn: &Connection) -> rusqlite::Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let mut stmt = conn.prepare_cached("INSERT OR IGNORE INTO fts_terms(term) VALUES (?1)")?;
        for t in self.pending.drain(..) {
            stmt.execute([t])?;
        }
        Ok(())
    }
}

/// Removes the terms of `texts` that neither full-text index holds any more, so that the words of
/// a chat the user asked us to stop indexing leave with it. Call it after the rows are deleted.
pub fn forget<'a>(conn: &Connection, texts: impl IntoIterator<Item = &'a str>) -> rusqlite::Result<usize> {
    let mut f = Forget::default();
    for t in texts {
        f.add(t);
    }
    f.apply(conn)
}

/// The words of text about to be deleted or replaced (deleted chats, edited messages), gathered
/// before; `apply` then drops those neither full-text index holds any more.
#[derive(Debug, Default)]
pub struct Forget(Vocabulary);

impl Forget {
    pub fn add(&mut self, text: &str) {
        self.0.add_text(text);
    }

    /// The words of a message's `old` text that its `new` text no longer has.
    pub fn add_replaced(&mut self, old: &str, new: &str) {
        let mut kept = Vocabulary::default();
        kept.add_text(new);
        let mut gone = Vocabulary::default();
        gone.add_text(old);
        for t in gone.pending {
            if !kept.seen.contains(&t) {
                self.0.add(&t);
            }
        }
    }

    pub fn is_empty(&self) -> bool {
        self.0.pending.is_empty()
    }

    pub fn apply(&mut self, conn: &Connection) -> rusqlite::Result<usize> {
        let mut held = conn.prepare_cached(
            "SELECT EXISTS (SELECT 1 FROM messages_fts WHERE messages_fts MATCH ?1)
                 OR EXISTS (SELECT 1 FROM titles_fts WHERE titles_fts MATCH ?1)",
        )?;
        let mut drop = conn.prepare_cached("DELETE FROM fts_terms WHERE term = ?1")?;
        let mut n = 0;
        let terms = std::mem::take(&mut self.0);
        for term in terms.pending.into_iter().filter(|t| !t.is_empty()) {
            // A term FTS5 cannot parse is kept: keeping one costs nothing, losing one loses rows.
            if !held.query_row([quote(&term)], |r| r.get(0)).unwrap_or(true) {
                n += drop.execute([&term])?;
            }
        }
        Ok(n)
    }
}

/// `term` as an FTS5 string: one phrase, whatever characters it holds.
pub fn quote(term: &str) -> String {
    format!("\"{}\"", term.replace('"', "\"\""))
}

/// Characters the highlighter keeps in a word: what unicode61 keeps in a token (letters, digits,
/// private use), plus combining marks, so an accent written as its own character stays on its word.
fn is_token_char(c: char) -> bool {
    c.is_alphanumeric()
        || is_combining_mark(c)
        || matches!(c as u32, 0xE000..=0xF8FF | 0xF_0000..=0xF_FFFD | 0x10_0000..=0x10_FFFD)
}

/// The query with each bare `word*` replaced by `(term OR …)` when the vocabulary lists between one
/// and `MAX_EXPANSION` terms under it. Queries with other syntax than bare words, `*` prefixes and
/// AND/OR/NOT are returned as they are, as are prefixes that are not plain ASCII.
pub fn expand_prefixes(conn: &Connection, fts: &str) -> rusqlite::Result<String> {
    let words: Vec<&str> = fts.split_whitespace().collect();
    let bare = |w: &str| !w.is_empty() && w.chars().all(|c| c.is_alphanumeric() || c == '_' || !c.is_ascii());
    let simple = words.iter().all(|w| match w.strip_suffix('*') {
        Some(p) => bare(p),
        None => bare(w),
    });
    if !simple || !fts.contains('*') {
        return Ok(fts.to_owned());
    }
    if conn.prepare_cached("SELECT EXISTS (SELECT 1 FROM fts_terms WHERE term = '')")?.query_row([], |r| r.get(0))? {
        return Ok(fts.to_owned());
    }
    let mut stmt =
        conn.prepare_cached("SELECT term FROM fts_terms WHERE term >= ?1 AND term < ?2 ORDER BY term LIMIT ?3")?;
    let operator = |w: &str| matches!(w, "AND" | "OR" | "NOT");
    // Words side by side are an implicit AND, which binds tighter than NOT, AND and OR. FTS5 has no
    // implicit AND before a parenthesis, so each run of words becomes `(a AND b)`.
    let mut out: Vec<String> = Vec::new();
    let mut run: Vec<String> = Vec::new();
    let close = |run: &mut Vec<String>, out: &mut Vec<String>| match run.len() {
        0 => {}
        1 => out.push(run.pop().expect("one")),
        _ => out.push(format!("({})", std::mem::take(run).join(" AND "))),
    };
    for w in words {
        if operator(w) {
            close(&mut run, &mut out);
            out.push(w.to_owned());
            continue;
        }
        let Some(prefix) = w.strip_suffix('*').filter(|p| p.bytes().all(|b| b.is_ascii_alphanumeric())) else {
            run.push(w.to_owned());
            continue;
        };
        let prefix = prefix.to_ascii_lowercase();
        // The prefix is ASCII alphanumeric, so bumping its last byte gives the first string after
        // every string that starts with it.
        let mut upper = prefix.clone().into_bytes();
        *upper.last_mut().expect("a bare word is not empty") += 1;
        let upper = String::from_utf8(upper).expect("still ASCII");
        let terms: Vec<String> = stmt
            .query_map(params![prefix, upper, MAX_EXPANSION as i64 + 1], |r| r.get(0))?
            .collect::<rusqlite::Result<_>>()?;
        if terms.is_empty() || terms.len() > MAX_EXPANSION {
            run.push(w.to_owned());
        } else {
            let ors: Vec<String> = terms.iter().map(|t| quote(t)).collect();
            run.push(format!("({})", ors.join(" OR ")));
        }
    }
    close(&mut run, &mut out);
    Ok(out.join(" "))
}

#[cfg(test)]
mod tests {

    /// A streamed answer only grows: none of its words may leave the vocabulary; a word edited
    /// out is a candidate.
    #[test]
    fn only_the_words_that_left_a_message_are_candidates_to_forget() {
        let mut f = Forget::default();
        f.add_replaced("an answer that streams", "an answer that streams on and on");
        assert!(f.is_empty());
        f.add_replaced("the Platypus swims", "the otter swims");
        assert_eq!(f.0.pending, ["platypus"]);
    }
    use super::*;

    fn terms(text: &str) -> Vec<String> {
        let mut v = Vocabulary::default();
        v.add_text(text);
        let mut t = v.pending;
        t.sort();
        t
    }

    #[test]
    fn ascii_tokens_are_lowercased_and_recorded_once() {
        assert_eq!(terms("Config config_file, CONFIG-2 x"), ["2", "config", "file", "x"]);
    }

    #[test]
    fn non_ascii_tokens_are_also_recorded_without_diacritics_and_from_inner_starts() {
        let t = terms("Naïve café");
        for want in ["naïve", "naive", "ve", "café", "cafe"] {
            assert!(t.contains(&want.to_owned()), "{want} in {t:?}");
        }
        // A combining mark FTS5 may treat as a separator: the word after it is recorded too.
        let t = terms("x\u{301}conf");
        assert!(t.contains(&"conf".to_owned()), "{t:?}");
        // unicode61 keeps emoji newer than Unicode 6.1 inside a word; SQLite folds ſ to s.
        let t = terms("the config🤔 Conſole");
        assert!(t.contains(&"config🤔".to_owned()) && t.contains(&"console".to_owned()), "{t:?}");
    }

    fn db(words: &[&str]) -> Connection {
        let c = Connection::open_in_memory().unwrap();
        c.execute_batch("CREATE TABLE fts_terms (term TEXT PRIMARY KEY) WITHOUT ROWID").unwrap();
        let mut v = Vocabulary::default();
        v.add_text(&words.join(" "));
        v.flush(&c).unwrap();
        c
    }

    #[test]
    fn prefixes_become_an_or_of_the_known_terms() {
        let c = db(&["config", "configure", "confirm", "cone", "other"]);
        let conf = r#"("config" OR "configure" OR "confirm")"#;
        assert_eq!(expand_prefixes(&c, "conf* other").unwrap(), format!("({conf} AND other)"));
        assert_eq!(expand_prefixes(&c, "Conf* AND x").unwrap(), format!("{conf} AND x"));
        assert_eq!(expand_prefixes(&c, "other conf*").unwrap(), format!("(other AND {conf})"));
        // Side by side binds tighter than NOT: the run stays together.
        assert_eq!(expand_prefixes(&c, "conf* NOT other cone").unwrap(), format!("{conf} NOT (other AND cone)"));
        // Nothing known under it, other syntax, or a non-ASCII prefix: left to FTS5.
        assert_eq!(expand_prefixes(&c, "zz*").unwrap(), "zz*");
        assert_eq!(expand_prefixes(&c, "\"a b\" conf*").unwrap(), "\"a b\" conf*");
        assert_eq!(expand_prefixes(&c, "NEAR(conf* other)").unwrap(), "NEAR(conf* other)");
        assert_eq!(expand_prefixes(&c, "café*").unwrap(), "café*");
        assert_eq!(expand_prefixes(&c, "config").unwrap(), "config");
    }

    #[test]
    fn a_vocabulary_that_cannot_list_every_term_turns_rewriting_off() {
        let long = "a中".repeat(MAX_INNER_STARTS + 1);
        let c = db(&["config", &long]);
        assert_eq!(expand_prefixes(&c, "conf*").unwrap(), "conf*");
    }

    #[test]
    fn too_many_terms_stay_a_prefix() {
        let words: Vec<String> = (0..=MAX_EXPANSION).map(|i| format!("w{i}")).collect();
        let c = db(&words.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(expand_prefixes(&c, "w*").unwrap(), "w*");
    }
}

/// Marks a query's words in message text, in place of FTS5's `snippet()`: that needs the FTS5
/// cursor on the row, and setting one up per hit costs ~0.5 ms when a term is in many rows, which
/// was most of a search.
///
/// Every word of the query is marked wherever it occurs (case and diacritics folded as FTS5
/// folds them), a `word*` wherever a token starts with it. Words of a phrase are marked one by one.
#[derive(Debug, Clone)]
pub struct Highlighter {
    words: Vec<String>,
    prefixes: Vec<String>,
}

impl Highlighter {
    /// The words of an FTS5 query; operators are left out.
    pub fn new(fts: &str) -> Self {
        let (mut words, mut prefixes) = (Vec::new(), Vec::new());
        for (start, end) in tokens(fts) {
            let word = &fts[start..end];
            if matches!(word, "AND" | "OR" | "NOT" | "NEAR") {
                continue;
            }
            let folded = fold(word);
            if fts[end..].starts_with('*') {
                prefixes.push(folded);
            } else {
                words.push(folded);
            }
        }
        Self { words, prefixes }
    }

    /// The folded token, if the query names it.
    fn matches(&self, token: &str) -> Option<String> {
        let t = fold(token);
        (self.words.contains(&t) || self.prefixes.iter().any(|p| t.starts_with(p.as_str()))).then_some(t)
    }

    /// All of `text` with each match between `open` and `close`.
    pub fn mark(&self, text: &str, open: &str, close: &str) -> String {
        self.snippet(text, open, close, usize::MAX)
    }

    /// Up to `width` tokens of `text` around its best stretch of matches, with each match between
    /// `open` and `close` and `…` where text was cut.
    pub fn snippet(&self, text: &str, open: &str, close: &str, width: usize) -> String {
        let toks: Vec<(usize, usize)> = tokens(text).collect();
        let hits: Vec<Option<String>> = toks.iter().map(|&(s, e)| self.matches(&text[s..e])).collect();
        let width = width.max(1);
        // The window with the most distinct matched words, then the most matches; a little context
        // before the first match.
        let mut best = (0usize, (0usize, 0usize));
        for (i, _) in hits.iter().enumerate().filter(|(_, h)| h.is_some()) {
            let start = i.saturating_sub(2).min(toks.len().saturating_sub(width));
            let end = start.saturating_add(width).min(toks.len());
            let mut distinct: Vec<&str> = Vec::new();
            let mut n = 0;
            for f in hits[start..end].iter().flatten() {
                n += 1;
                if !distinct.contains(&f.as_str()) {
                    distinct.push(f);
                }
            }
            if (distinct.len(), n) > best.1 {
                best = (start, (distinct.len(), n));
            }
        }
        let start = best.0;
        let end = start.saturating_add(width).min(toks.len());
        if toks.is_empty() {
            return text.chars().take(200).collect();
        }
        let from = if start == 0 { 0 } else { toks[start].0 };
        let to = if end == toks.len() { text.len() } else { toks[end - 1].1 };
        let mut out = String::with_capacity(to - from + 16);
        if start > 0 {
            out.push('…');
        }
        let mut at = from;
        for k in start..end {
            let (s, e) = toks[k];
            if hits[k].is_some() {
                out.push_str(&text[at..s]);
                out.push_str(open);
                out.push_str(&text[s..e]);
                out.push_str(close);
                at = e;
            }
        }
        out.push_str(&text[at..to]);
        if end < toks.len() {
            out.push('…');
        }
        out
    }
}

/// Byte ranges of the words of `text`, cut about as unicode61 cuts them (for marking only: the
/// vocabulary cuts coarser on purpose).
fn tokens(text: &str) -> impl Iterator<Item = (usize, usize)> + '_ {
    let word = |c: char| c.is_ascii_alphanumeric() || (!c.is_ascii() && is_token_char(c));
    let mut it = text.char_indices().peekable();
    std::iter::from_fn(move || {
        let start = loop {
            let (i, c) = it.next()?;
            if word(c) {
                break i;
            }
        };
        let mut end = text.len();
        while let Some(&(i, c)) = it.peek() {
            if word(c) {
                it.next();
            } else {
                end = i;
                break;
            }
        }
        Some((start, end))
    })
}

/// Lower case without diacritics, as `unicode61 remove_diacritics 2` compares tokens.
fn fold(token: &str) -> String {
    if token.is_ascii() { token.to_ascii_lowercase() } else { strip(&token.to_lowercase()) }
}

/// Without diacritics; also folds the long s (ſ, ẛ), the only other letters SQLite folds to ASCII.
fn strip(token: &str) -> String {
    token.nfd().filter(|c| !is_combining_mark(*c)).map(|c| if c == 'ſ' { 's' } else { c }).collect()
}

#[cfg(test)]
mod highlight_tests {
    use super::Highlighter;

    #[test]
    fn marks_words_prefixes_and_folded_forms() {
        let h = Highlighter::new(r#""return value" AND conf* NOT zebra"#);
        assert_eq!(
            h.snippet("The Return value of Configure() is VALUE.", "[", "]", 16),
            "The [Return] [value] of [Configure]() is [VALUE]."
        );
        let h = Highlighter::new("cafe");
        assert_eq!(h.snippet("un Café noir", "<", ">", 16), "un <Café> noir");
    }

    #[test]
    fn long_text_is_cut_around_the_best_stretch() {
        let text = format!("{}alpha beta{}", "x ".repeat(50), " y".repeat(50));
        let h = Highlighter::new("alpha beta");
        let s = h.snippet(&text, "[", "]", 6);
        assert_eq!(s, "…x x [alpha] [beta] y y…");
        // Without a match (cut differently from FTS5), the start of the text.
        assert_eq!(Highlighter::new("nothing").snippet("a b c d", "[", "]", 2), "a b…");
        assert_eq!(Highlighter::new("a").snippet("", "[", "]", 2), "");
    }
}

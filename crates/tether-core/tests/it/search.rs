//! Search over a generated history large enough to reach the broad-query mode.

use tether_core::sessions::SearchQuery;
use tether_testkit::CursorFixture;
use tether_testkit::generate::{GenSpec, generate_global, vocabulary_for};

use crate::Env;

#[test]
fn broad_and_selective_queries_both_return_distinct_highlighted_sessions() {
    let fx = CursorFixture::new();
    let stats = generate_global(&fx.global_path(), &GenSpec { target_bytes: 4 << 20, seed: 3 }).unwrap();
    let e = Env::new(fx);
    e.index();
    assert!(stats.bubbles > 3000, "{stats:?}");
    let vocab = vocabulary_for(3);
    // "function" is in most messages (broad: newest first); a tail word is selective (bm25); a
    // prefix query gets its snippets from one walk over the hits' range.
    for q in ["function", vocab[5000].as_str(), "\"error handling\"", "conf*", "function conf*"] {
        let hits = e.t.search(&SearchQuery { limit: 10, ..SearchQuery::new(q) }).unwrap();
        assert!(!hits.is_empty(), "{q}: no hits");
        assert!(hits.len() <= 10);
        let mut ids: Vec<_> = hits.iter().map(|h| h.session_id.clone()).collect();
        ids.sort();
        ids.dedup();
        assert_eq!(ids.len(), hits.len(), "{q}: one hit per session");
        assert!(hits.iter().all(|h| h.snippet.contains("**")), "{q}: snippets highlight the match: {hits:?}");
        assert!(hits.windows(2).all(|w| w[0].score >= w[1].score), "{q}: ordered by score");
    }
}

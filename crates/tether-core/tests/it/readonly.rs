use tether_core::history::index::{Depth, no_progress};
use tether_testkit::eras::build_all;
use tether_testkit::{CursorFixture, Journal};

use crate::Env;

fn assert_untouched(before: &std::collections::BTreeMap<std::path::PathBuf, Vec<u8>>, fx: &CursorFixture) {
    let after = fx.snapshot();
    assert_eq!(
        before.keys().collect::<Vec<_>>(),
        after.keys().collect::<Vec<_>>(),
        "no file created or removed in Cursor's dirs"
    );
    for (p, b) in before {
        assert!(after[p] == *b, "{} changed", p.display());
    }
}

#[test]
fn indexing_never_modifies_cursor_files_rollback() {
    let fx = CursorFixture::new();
    build_all(&fx);
    let before = fx.snapshot();
    let e = Env::new(fx);
    e.t.index(Depth::Force, &no_progress).unwrap();
    e.t.index(Depth::Quick, &no_progress).unwrap();
    assert_untouched(&before, &e.fx);
}

#[test]
fn indexing_never_modifies_cursor_files_wal() {
    let fx = CursorFixture::new();
    tether_testkit::eras::wal_uncheckpointed(&fx).close();
    let before = fx.snapshot();
    let e = Env::new(fx);
    e.t.index(Depth::Force, &no_progress).unwrap();
    assert_untouched(&before, &e.fx);
}

#[test]
fn a_cleanly_closed_wal_db_gets_no_new_sidecars() {
    let fx = CursorFixture::new();
    let g = fx.global(Journal::Wal);
    tether_testkit::eras::era_d_cursor3(&fx, &g);
    g.close();
    let wal = tether_core::history::cursor::sqlite::sidecar(&fx.global_path(), "-wal");
    assert!(!wal.exists(), "SQLite removes the -wal on a clean close");
    let before = fx.snapshot();
    let e = Env::new(fx);
    e.index();
    assert!(!wal.exists(), "opening read-only must not create a -wal next to Cursor's DB");
    assert_untouched(&before, &e.fx);
    assert_eq!(e.search_ids("capybara").len(), 1);
}

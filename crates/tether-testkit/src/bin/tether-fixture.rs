//! Write a fake home with Cursor data from every storage era, for trying Tether by hand:
//!
//! ```text
//! cargo run -p tether-testkit --bin tether-fixture -- /tmp/fake-home
//! TETHER_CURSOR_DIR=/tmp/fake-home/.config/Cursor/User TETHER_CURSOR_HOME=/tmp/fake-home/.cursor tether index
//! ```

fn main() {
    let Some(dir) = std::env::args_os().nth(1) else {
        eprintln!("usage: tether-fixture DIR   (DIR must not exist yet)");
        std::process::exit(2);
    };
    let dir = std::path::PathBuf::from(dir);
    if dir.exists() {
        eprintln!("{} already exists; pick a new directory", dir.display());
        std::process::exit(1);
    }
    let fx = tether_testkit::CursorFixture::at(&dir);
    tether_testkit::eras::build_all(&fx);
    println!("TETHER_CURSOR_DIR={}", fx.user_dir.display());
    println!("TETHER_CURSOR_HOME={}", fx.cursor_home.display());
}

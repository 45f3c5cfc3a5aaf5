//! Where the window's links go (the daemon's own pages stay, Cursor and web links go to the
//! system, the rest is refused) and where exports are saved. Nothing in the page can reach
//! these functions (it has no IPC).

use std::path::{Path, PathBuf};

use tauri::webview::DownloadEvent;
use tauri::{AppHandle, Url, Webview};
use tauri_plugin_shell::ShellExt;

/// Where a link from the page goes: the daemon's own pages stay in the window; Cursor links and
/// web links go to the system (Cursor, the browser); anything else is refused. Returns whether
/// the window may navigate.
pub fn route_link(app: &AppHandle, daemon_url: &str, url: &Url) -> bool {
    let daemon: Option<Url> = daemon_url.parse().ok();
    let same_origin = daemon.is_some_and(|d| d.origin() == url.origin());
    match url.scheme() {
        _ if same_origin => true,
        // The boot page, shown when no daemon answered.
        "tauri" | "about" => true,
        "http" if url.host_str() == Some("tauri.localhost") => true,
        "cursor" | "http" | "https" | "mailto" => {
            #[allow(deprecated)]
            // the card names tauri-plugin-shell; Rust-side calls are not scoped, this match is the scope
            if let Err(e) = app.shell().open(url.as_str(), None) {
                tracing::warn!(error = %e, "cannot open a link");
            }
            false
        }
        other => {
            tracing::warn!(scheme = other, "refused a link the app does not open");
            false
        }
    }
}

/// Exports go to the Downloads folder (never over an existing file) and open when saved.
pub fn on_download(webview: &Webview, event: DownloadEvent<'_>) -> bool {
    match event {
        DownloadEvent::Requested { url, destination } => {
            let name = destination.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            let name = if name.is_empty() { file_name_of(&url) } else { name };
            let dir = tether_core::paths::downloads_dir();
            *destination = free_path(&dir, &name);
            true
        }
        DownloadEvent::Finished { path, success, .. } => {
            match (success, path) {
                (true, Some(p)) =>
                {
                    #[allow(deprecated)]
                    if let Err(e) = webview.shell().open(p.to_string_lossy(), None) {
                        tracing::warn!(error = %e, "cannot open the export");
                    }
                }
                (ok, p) => tracing::warn!(success = ok, path = ?p, "export not saved"),
            }
            true
        }
        _ => true,
    }
}

fn file_name_of(url: &Url) -> String {
    let last = url.path_segments().and_then(|mut s| s.next_back()).unwrap_or("export");
    let clean: String = last.chars().filter(|c| c.is_alphanumeric() || "-_.".contains(*c)).collect();
    if clean.is_empty() { "tether-export".into() } else { clean }
}

/// `dir/name`, or `dir/stem (2).ext` and so on when that exists.
fn free_path(dir: &Path, name: &str) -> PathBuf {
    let p = dir.join(name);
    if !p.exists() {
        return p;
    }
    let (stem, ext) = match name.rsplit_once('.') {
        Some((s, e)) if !s.is_empty() => (s, format!(".{e}")),
        _ => (name, String::new()),
    };
    (2..).map(|n| dir.join(format!("{stem} ({n}){ext}"))).find(|p| !p.exists()).unwrap_or(p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exports_never_overwrite() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(free_path(dir.path(), "chat.md"), dir.path().join("chat.md"));
        std::fs::write(dir.path().join("chat.md"), "").unwrap();
        std::fs::write(dir.path().join("chat (2).md"), "").unwrap();
        assert_eq!(free_path(dir.path(), "chat.md"), dir.path().join("chat (3).md"));
        assert_eq!(file_name_of(&"http://127.0.0.1:1/api/sessions/a%2Fb/export".parse().unwrap()), "export");
    }
}

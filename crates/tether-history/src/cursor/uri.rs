//! Turning the URIs and paths Cursor records into project paths.
//!
//! Handles `file://` (percent-decoding, Windows drive letters), `vscode-remote://`, `.code-workspace`
//! files and VS Code's `UriComponents` objects. Pure string work.

use percent_encoding::percent_decode_str;
use serde_json::Value;

/// Normalise a URI string or plain path to a project path.
///
/// - `file:///home/u/proj` → `/home/u/proj`
/// - `file:///c%3A/Users/x/proj` → `c:/Users/x/proj` (drive letter lowercased, as Cursor does)
/// - `vscode-remote://ssh-remote%2Bhost/home/u/p` → `vscode-remote://ssh-remote+host/home/u/p`
/// - `…/name.code-workspace` → itself (a multi-root workspace is its own project)
pub fn project_from_uri(uri: &str) -> Option<String> {
    let uri = uri.trim();
    if uri.is_empty() {
        return None;
    }
    let path = if let Some(rest) = uri.strip_prefix("file://") {
        // `file://host/share` (UNC) keeps the host; `file:///x` has an empty authority.
        let decoded = percent_decode_str(rest).decode_utf8_lossy().into_owned();
        if decoded.starts_with('/') { normalise_path(&decoded) } else { format!("//{decoded}") }
    } else if let Some(rest) = uri.strip_prefix("vscode-remote://") {
        let decoded = percent_decode_str(rest).decode_utf8_lossy().into_owned();
        format!("vscode-remote://{}", decoded.trim_end_matches('/'))
    } else if uri.contains("://") {
        percent_decode_str(uri).decode_utf8_lossy().into_owned()
    } else {
        normalise_path(uri)
    };
    Some(strip_code_workspace(&path))
}

/// Project path from a VS Code `UriComponents`-like object or a URI string.
pub fn project_from_uri_value(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => project_from_uri(s),
        Value::Object(o) => {
            let scheme = o.get("scheme").and_then(Value::as_str).unwrap_or("file");
            if scheme == "file" {
                if let Some(p) = o.get("fsPath").and_then(Value::as_str).filter(|s| !s.is_empty()) {
                    return Some(strip_code_workspace(&normalise_path(p)));
                }
                if let Some(p) = o.get("path").and_then(Value::as_str).filter(|s| !s.is_empty()) {
                    return Some(strip_code_workspace(&normalise_path(p)));
                }
            }
            for key in ["external", "_formatted"] {
                if let Some(s) = o.get(key).and_then(Value::as_str) {
                    return project_from_uri(s);
                }
            }
            let path = o.get("path").and_then(Value::as_str)?;
            let authority = o.get("authority").and_then(Value::as_str).unwrap_or("");
            project_from_uri(&format!("{scheme}://{authority}{path}"))
        }
        _ => None,
    }
}

/// Backslashes to slashes, `/c:/x` and `C:\x` to `c:/x`, no trailing slash. Windows' verbatim
/// forms (what `canonicalize` returns there) name the same folders: `\\?\C:\x` is `c:/x` and
/// `\\?\UNC\server\share` is `//server/share`.
pub fn normalise_path(p: &str) -> String {
    let p = match p.strip_prefix(r"\\?\").or_else(|| p.strip_prefix("//?/")) {
        Some(rest) => match rest.get(..4).filter(|u| u.eq_ignore_ascii_case(r"UNC\") || u.eq_ignore_ascii_case("UNC/"))
        {
            Some(_) => format!("//{}", &rest[4..]),
            None => rest.to_owned(),
        },
        None => p.to_owned(),
    };
    let mut s = p.replace('\\', "/");
    let b = s.as_bytes();
    if b.len() >= 3 && b[0] == b'/' && b[1].is_ascii_alphabetic() && b[2] == b':' {
        s.remove(0);
    }
    let b = s.as_bytes();
    if b.len() >= 2 && b[0].is_ascii_alphabetic() && b[1] == b':' {
        let lower = s[..1].to_ascii_lowercase();
        s.replace_range(..1, &lower);
    }
    while s.len() > 1 && s.ends_with('/') && !s.ends_with(":/") {
        s.pop();
    }
    s
}

/// A multi-root workspace is its own project, named by its `.code-workspace` file: two of them
/// in one folder are two projects, not the folder's.
fn strip_code_workspace(p: &str) -> String {
    p.to_owned()
}

/// Forms of a local directory that a session's project may be recorded under, for matching
/// `--project current`: the path itself and, on WSL, `/mnt/c/x` ↔ `c:/x`.
pub fn path_aliases(p: &str) -> Vec<String> {
    let n = normalise_path(p);
    let mut out = vec![n.clone()];
    let b = n.as_bytes();
    if n.starts_with("/mnt/") && b.len() >= 6 && b[5].is_ascii_alphabetic() && (b.len() == 6 || b[6] == b'/') {
        out.push(format!("{}:{}", (b[5] as char).to_ascii_lowercase(), if b.len() == 6 { "/" } else { &n[6..] }));
    }
    out
}

/// Is `path` equal to `root` or inside it?
pub fn is_within(path: &str, root: &str) -> bool {
    path == root || (path.starts_with(root) && (root.ends_with('/') || path[root.len()..].starts_with('/')))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn file_uris_decode_and_normalise() {
        assert_eq!(project_from_uri("file:///home/u/proj").unwrap(), "/home/u/proj");
        assert_eq!(project_from_uri("file:///home/u/my%20proj/").unwrap(), "/home/u/my proj");
        assert_eq!(project_from_uri("file:///c%3A/Users/x/proj").unwrap(), "c:/Users/x/proj");
        assert_eq!(project_from_uri("file:///C:/Users/x/proj").unwrap(), "c:/Users/x/proj");
        assert_eq!(project_from_uri("file://server/share/p").unwrap(), "//server/share/p");
    }

    #[test]
    fn windows_folders_in_every_spelling_are_one_project() {
        // As Cursor records them, as Windows gives them (cwd, canonicalize), as a person types them.
        let spellings = [
            "file:///c%3A/Users/x/proj",
            "file:///C%3A/Users/x/proj/",
            r"C:\Users\x\proj",
            r"c:\Users\x\proj\",
            "/c:/Users/x/proj",
            r"\\?\C:\Users\x\proj",
            "//?/C:/Users/x/proj",
        ];
        for s in spellings {
            assert_eq!(project_from_uri(s).unwrap(), "c:/Users/x/proj", "{s}");
        }
        // A drive's root keeps its slash; a share keeps its server.
        assert_eq!(normalise_path(r"D:\"), "d:/");
        assert_eq!(normalise_path(r"\\server\share\p"), "//server/share/p");
        assert_eq!(normalise_path(r"\\?\UNC\server\share\p"), "//server/share/p");
        assert!(is_within(&normalise_path(r"C:\Users\x\proj\src\a.rs"), &normalise_path(r"\\?\C:\Users\x\proj")));
        assert!(!is_within("c:/Users/x/project2", "c:/Users/x/proj"));
        // WSL sees the same folder under /mnt.
        assert!(path_aliases("/mnt/c/Users/x/proj").contains(&"c:/Users/x/proj".to_string()));
    }

    #[test]
    fn remote_and_code_workspace() {
        assert_eq!(
            project_from_uri("vscode-remote://ssh-remote%2Bbox/home/u/p").unwrap(),
            "vscode-remote://ssh-remote+box/home/u/p"
        );
        // Two multi-root workspaces in one folder stay two projects.
        assert_eq!(
            project_from_uri("file:///home/u/work/all.code-workspace").unwrap(),
            "/home/u/work/all.code-workspace"
        );
        assert_ne!(
            project_from_uri("file:///home/u/work/b.code-workspace"),
            project_from_uri("file:///home/u/work/all.code-workspace")
        );
    }

    #[test]
    fn uri_components_objects() {
        let win = json!({"$mid": 1, "fsPath": "c:\\Users\\x\\proj", "path": "/c:/Users/x/proj", "scheme": "file"});
        assert_eq!(project_from_uri_value(&win).unwrap(), "c:/Users/x/proj");
        let remote = json!({"scheme": "vscode-remote", "authority": "ssh-remote+box", "path": "/srv/app"});
        assert_eq!(project_from_uri_value(&remote).unwrap(), "vscode-remote://ssh-remote+box/srv/app");
        let ext = json!({"scheme": "vscode-remote", "external": "vscode-remote://dev-container%2Babc/w"});
        assert_eq!(project_from_uri_value(&ext).unwrap(), "vscode-remote://dev-container+abc/w");
    }

    #[test]
    fn wsl_aliases_and_containment() {
        assert_eq!(path_aliases("/mnt/c/Users/x"), vec!["/mnt/c/Users/x", "c:/Users/x"]);
        assert!(is_within("/a/b/c", "/a/b"));
        assert!(!is_within("/a/bc", "/a/b"));
        assert!(is_within("/a/b", "/a/b"));
    }
}

//! The team database's Unix-socket host: the one place where the PostgreSQL client differs by OS.
//!
//! On Unix a host that is a folder (`host=/var/run/postgresql`, libpq's convention) is the
//! server's Unix socket. Unix sockets are Unix only for the driver, so on Windows such a host is
//! refused when the connection string is read, with a message saying to give the server's host
//! name and port (TCP) instead, rather than being looked up as a host name and failing later.

use tokio_postgres::config::{Config, Host};

/// A host as it is shown in messages.
pub(crate) fn host_text(h: &Host) -> String {
    match h {
        Host::Tcp(h) => h.clone(),
        #[cfg(unix)]
        Host::Unix(p) => p.display().to_string(),
    }
}

/// Why this OS cannot reach one of `config`'s hosts, if it cannot.
pub(crate) fn unreachable_host(config: &Config) -> Option<String> {
    config.get_hosts().iter().find_map(|h| match h {
        Host::Tcp(name) if cfg!(windows) && is_socket_folder(name) => Some(format!(
            "{name} is a Unix-socket folder; Windows has no Unix sockets for PostgreSQL: give the server's host name and port"
        )),
        _ => None,
    })
}

/// Whether libpq would read this host as a socket folder (an absolute path), on any OS: `/…`,
/// or on Windows a drive path such as `C:\…`.
pub(crate) fn is_socket_folder(host: &str) -> bool {
    let b = host.as_bytes();
    host.starts_with('/') || (b.len() > 2 && b[0].is_ascii_alphabetic() && b[1] == b':' && matches!(b[2], b'\\' | b'/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn socket_folders_are_told_from_host_names() {
        for h in ["/var/run/postgresql", "/tmp", r"C:\pg\sock", "c:/pg"] {
            assert!(is_socket_folder(h), "{h}");
        }
        for h in ["db.example", "localhost", "127.0.0.1", "::1", "c:", "pg:5432"] {
            assert!(!is_socket_folder(h), "{h}");
        }
    }

    #[test]
    fn a_socket_host_is_refused_only_where_there_are_no_unix_sockets() {
        let socket: Config = "host=/var/run/postgresql dbname=team".parse().unwrap();
        assert_eq!(unreachable_host(&socket).is_some(), cfg!(windows));
        let tcp: Config = "postgres://me@db.example/team".parse().unwrap();
        assert_eq!(unreachable_host(&tcp), None);
        assert_eq!(host_text(&tcp.get_hosts()[0]), "db.example");
    }
}

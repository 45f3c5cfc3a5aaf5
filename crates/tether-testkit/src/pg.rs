//! A throwaway PostgreSQL cluster for the team board's tests: Debian's `initdb` and `pg_ctl`
//! (installed by `scripts/setup`), a data dir under a temp dir, listening on a free loopback port,
//! stopped and deleted when dropped. `initdb` refuses to run as root, so as root the cluster
//! belongs to Debian's `postgres` user.
//!
//! Tests share one cluster per test binary ([`Cluster::shared`]) and take a fresh database each
//! ([`Cluster::database`]): a cluster costs ~2 s to make, a database ~50 ms. A shared cluster is
//! never dropped (statics are not), so each cluster has a guardian: a shell that the kernel sends
//! SIGTERM when this process dies (`PR_SET_PDEATHSIG`), which stops the server and deletes the
//! data dir. No test run leaves a postmaster or a cluster behind, whichever way it ends.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The password of the cluster's superuser `tether` over TCP (the socket trusts it).
pub const PASSWORD: &str = "tether-test-password";
/// The role of a TLS cluster ([`Cluster::start_tls`]) that signs in with a client certificate
/// only ([`Cluster::client_cert_files`]).
pub const CERT_USER: &str = "tether_cert";

pub struct Cluster {
    dir: PathBuf,
    pub port: u16,
    bin: PathBuf,
    owner: Option<&'static str>,
    guardian: u32,
    /// Says when the guardian has stopped the server and deleted the data dir.
    gone: std::sync::Mutex<std::sync::mpsc::Receiver<()>>,
    /// Commits are synced to disk (else `fsync=off`).
    durable: bool,
    /// Serves TLS only (`hostssl`), with a certificate for 127.0.0.1 from a CA of its own.
    tls: bool,
}

impl Cluster {
    /// The binaries of the newest PostgreSQL installed (`TETHER_PG_BIN` overrides).
    pub fn bin_dir() -> Option<PathBuf> {
        if let Ok(b) = std::env::var("TETHER_PG_BIN") {
            return Some(b.into());
        }
        let mut found: Vec<(u32, PathBuf)> = std::fs::read_dir("/usr/lib/postgresql")
            .ok()?
            .flatten()
            .filter_map(|e| Some((e.file_name().to_str()?.parse().ok()?, e.path().join("bin"))))
            .filter(|(_, p): &(u32, PathBuf)| p.join("initdb").exists())
            .collect();
        found.sort();
        found.pop().map(|(_, p)| p)
    }

    /// A new cluster, running. Panics with the fix when PostgreSQL is not installed.
    pub fn start() -> Cluster {
        Self::start_with(false, false)
    }

    /// A cluster that takes TLS connections only: its server certificate names 127.0.0.1 (and
    /// no host name) and is signed by a CA of its own, [`Cluster::ca_file`]; a second CA that
    /// signed nothing here is [`Cluster::other_ca_file`].
    pub fn start_tls() -> Cluster {
        Self::start_with(false, true)
    }

    pub fn ca_file(&self) -> PathBuf {
        self.dir.join("tls/ca.crt")
    }

    pub fn other_ca_file(&self) -> PathBuf {
        self.dir.join("tls/other-ca.crt")
    }

    /// A client certificate and key (PEM files) for [`CERT_USER`], from [`Cluster::ca_file`]'s
    /// CA; `stranger`: the same from the CA the server does not trust.
    pub fn client_cert_files(&self, stranger: bool) -> (PathBuf, PathBuf) {
        let name = if stranger { "stranger" } else { "client" };
        (self.dir.join(format!("tls/{name}.crt")), self.dir.join(format!("tls/{name}.key")))
    }

    /// A cluster that syncs its commits to disk, as a real one does (for the benchmarks; tests
    /// go faster without).
    pub fn start_durable() -> Cluster {
        Self::start_with(true, false)
    }

    fn start_with(durable: bool, tls: bool) -> Cluster {
        let bin = Self::bin_dir()
            .expect("PostgreSQL is not installed: run `TETHER_SETUP_TESTS=1 scripts/setup` (Debian's postgresql)");
        let owner = is_root().then_some("postgres");
        let dir = tempfile::Builder::new().prefix("tether-pg-").tempdir().expect("temp dir").keep();
        let data = dir.join("data");
        let pwfile = dir.join("pw");
        std::fs::write(&pwfile, PASSWORD).unwrap();
        if let Some(user) = owner {
            for p in [&dir, &pwfile] {
                chown(p, user);
            }
        }
        run(
            owner,
            Command::new(bin.join("initdb"))
                .args(["-D"])
                .arg(&data)
                .args(["-U", "tether", "-E", "UTF8", "--no-sync", "--no-instructions"])
                .args(["--auth-local=trust", "--auth-host=scram-sha-256", "--pwfile"])
                .arg(&pwfile),
        );
        if tls {
            make_certificates(&dir.join("tls"), owner);
            // Every TCP connection must be TLS.
            let hba = data.join("pg_hba.conf");
            let text = std::fs::read_to_string(&hba).expect("pg_hba.conf");
            let only_tls: String = text
                .lines()
                .map(|l| l.strip_prefix("host ").map_or_else(|| l.to_owned(), |rest| format!("hostssl {rest}")))
                .collect::<Vec<_>>()
                .join("\n");
            // `CERT_USER` signs in with a client certificate from the CA, and nothing else.
            let cert_line = format!("hostssl all {CERT_USER} 127.0.0.1/32 cert\n");
            std::fs::write(&hba, cert_line + &only_tls + "\n").expect("pg_hba.conf");
        }
        let (guardian, gone) = guard(&dir, &bin, owner);
        let mut cluster = Cluster { dir, port: 0, bin, owner, guardian, gone: gone.into(), durable, tls };
        cluster.port = cluster.launch();
        if tls {
            cluster.psql("postgres", &format!("CREATE ROLE {CERT_USER} LOGIN"));
        }
        cluster
    }

    /// The one cluster of this test binary, started on first use; its guardian stops it when the
    /// process ends.
    pub fn shared() -> &'static Cluster {
        static SHARED: OnceLock<Cluster> = OnceLock::new();
        SHARED.get_or_init(Cluster::start)
    }

    fn data(&self) -> PathBuf {
        self.dir.join("data")
    }

    /// Starts the server on a free port (asked of the OS, then handed over: another process can
    /// take it in between, so a failed start tries another).
    fn launch(&self) -> u16 {
        for _ in 0..5 {
            let port = TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
            let ok = self.pg_ctl(&["start", "-w", "-t", "30", "-o", &self.server_options(port)]);
            if ok {
                return port;
            }
        }
        panic!("PostgreSQL did not start; see {}", self.dir.join("log").display());
    }

    /// Loopback only; no fsync (a test cluster dies with its tests); room for the claim races'
    /// connections beside every other test's.
    fn server_options(&self, port: u16) -> String {
        let sync = if self.durable { "" } else { " -c fsync=off -c full_page_writes=off" };
        let tls = if self.tls {
            let d = self.dir.join("tls");
            format!(
                " -c ssl=on -c ssl_cert_file={} -c ssl_key_file={} -c ssl_ca_file={}",
                d.join("server.crt").display(),
                d.join("server.key").display(),
                d.join("ca.crt").display()
            )
        } else {
            String::new()
        };
        format!("-c listen_addresses=127.0.0.1 -p {port} -k {}{sync}{tls} -c max_connections=300", self.dir.display())
    }

    /// The server's main process (its sessions are its children), while it runs.
    pub fn postmaster_pid(&self) -> Option<u32> {
        let text = std::fs::read_to_string(self.data().join("postmaster.pid")).ok()?;
        text.lines().next()?.trim().parse().ok()
    }

    fn pg_ctl(&self, args: &[&str]) -> bool {
        let mut cmd = Command::new(self.bin.join("pg_ctl"));
        cmd.arg("-D").arg(self.data()).arg("-l").arg(self.dir.join("log")).args(args);
        as_owner(self.owner, &mut cmd).stdout(std::process::Stdio::null()).status().is_ok_and(|s| s.success())
    }

    /// Stops the server (fast shutdown: sessions are cut, committed data stays).
    pub fn stop(&self) {
        assert!(self.pg_ctl(&["stop", "-w", "-m", "fast"]), "pg_ctl stop failed");
    }

    /// Starts it again on the same port, after [`Cluster::stop`].
    pub fn restart(&self) {
        let opts = self.server_options(self.port);
        assert!(self.pg_ctl(&["start", "-w", "-t", "30", "-o", &opts]), "pg_ctl start failed");
    }

    /// A URL for `database` as the superuser, without its password (give it apart).
    pub fn url(&self, database: &str) -> String {
        format!("postgres://tether@127.0.0.1:{}/{database}", self.port)
    }

    /// A new, empty database of its own; its URL (without the password).
    pub fn database(&self) -> String {
        static N: AtomicUsize = AtomicUsize::new(0);
        let name = format!("t{}_{}", std::process::id(), N.fetch_add(1, Ordering::Relaxed));
        self.psql("postgres", &format!("CREATE DATABASE {name}"));
        self.url(&name)
    }

    /// Runs SQL as the superuser over the socket (for setting up what a test needs).
    pub fn psql(&self, database: &str, sql: &str) -> String {
        let out = as_owner(
            self.owner,
            Command::new(self.bin.join("psql"))
                .args(["-X", "-q", "-A", "-t", "-v", "ON_ERROR_STOP=1", "-U", "tether", "-h"])
                .arg(&self.dir)
                .args(["-p", &self.port.to_string(), "-d", database, "-c", sql]),
        )
        .output()
        .expect("psql");
        assert!(out.status.success(), "psql {sql:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}

impl Drop for Cluster {
    fn drop(&mut self) {
        // `kill`, not a system call: the clusters are Debian's PostgreSQL, started on Unix only,
        // and this keeps the kit compiling for the other platforms' checks.
        if self.guardian != 0 {
            let _ = Command::new("kill").args(["-TERM", &self.guardian.to_string()]).status();
        }
        let gone = self.gone.lock().unwrap_or_else(|p| p.into_inner());
        let _ = gone.recv_timeout(std::time::Duration::from_secs(15));
    }
}

/// Starts the cluster's guardian from a thread that lives as long as it does (the kernel's
/// parent-death signal follows the thread that spawned the child, not the process): its pid, and
/// a receiver that hears when it is done.
fn guard(dir: &Path, bin: &Path, owner: Option<&str>) -> (u32, std::sync::mpsc::Receiver<()>) {
    // Temp paths and Debian's paths: no spaces or quotes to escape.
    let stop = format!("{} stop -D {} -m immediate", bin.join("pg_ctl").display(), dir.join("data").display());
    let stop = match owner {
        Some(user) => format!("runuser -u {user} -- {stop}"),
        None => stop,
    };
    let script = format!(
        "trap '{stop} >/dev/null 2>&1; rm -rf {}; kill $! 2>/dev/null; exit 0' TERM INT HUP; while :; do sleep 3600 & wait $!; done",
        dir.display()
    );
    let (tx, rx) = std::sync::mpsc::channel();
    let (done, gone) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        // setpriv (util-linux) asks the kernel for the signal, then becomes the shell.
        let mut cmd = Command::new("setpriv");
        cmd.args(["--pdeathsig", "TERM", "--", "sh", "-c", &script]).stdin(std::process::Stdio::null());
        let mut child = cmd.spawn().expect("start the cluster's guardian");
        tx.send(child.id()).unwrap();
        let _ = child.wait();
        let _ = done.send(());
    });
    (rx.recv().expect("the guardian's pid"), gone)
}

/// A CA, a server certificate for 127.0.0.1 it signed, and a second CA, with openssl.
fn make_certificates(dir: &Path, owner: Option<&str>) {
    std::fs::create_dir_all(dir).expect("tls dir");
    let openssl = |args: &[&str]| {
        let out = Command::new("openssl").current_dir(dir).args(args).output().expect("openssl");
        assert!(out.status.success(), "openssl {args:?}: {}", String::from_utf8_lossy(&out.stderr));
    };
    for ca in ["ca", "other-ca"] {
        openssl(&[
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-days",
            "2",
            "-subj",
            &format!("/CN=tether test {ca}"),
            "-keyout",
            &format!("{ca}.key"),
            "-out",
            &format!("{ca}.crt"),
            "-addext",
            "basicConstraints=critical,CA:TRUE",
            "-addext",
            "keyUsage=critical,keyCertSign,cRLSign",
        ]);
    }
    // A certificate `name`.crt (and its key) for `cn`, signed by `ca`, version 3 with `ext` (as
    // rustls requires).
    let issue = |name: &str, cn: &str, ca: &str, ext: &str| {
        std::fs::write(dir.join(format!("{name}.ext")), ext).expect("extensions file");
        let (key, csr, crt, ext_file) =
            (format!("{name}.key"), format!("{name}.csr"), format!("{name}.crt"), format!("{name}.ext"));
        let subject = format!("/CN={cn}");
        let (ca_crt, ca_key) = (format!("{ca}.crt"), format!("{ca}.key"));
        openssl(&[
            "req",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-subj",
            &subject,
            "-keyout",
            &key,
            "-out",
            &csr,
        ]);
        openssl(&[
            "x509",
            "-req",
            "-in",
            &csr,
            "-CA",
            &ca_crt,
            "-CAkey",
            &ca_key,
            "-CAcreateserial",
            "-days",
            "2",
            "-extfile",
            &ext_file,
            "-out",
            &crt,
        ]);
    };
    issue(
        "server",
        "127.0.0.1",
        "ca",
        "subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n",
    );
    // Client certificates for the role `CERT_USER`: one from the server's CA, one from a CA the
    // server does not trust.
    let client = "basicConstraints=CA:FALSE\nkeyUsage=digitalSignature\nextendedKeyUsage=clientAuth\n";
    issue("client", CERT_USER, "ca", client);
    issue("stranger", CERT_USER, "other-ca", client);
    if let Some(user) = owner {
        for f in ["", "server.key", "server.crt", "ca.crt"] {
            chown(&dir.join(f), user);
        }
    }
    tether_store::private::set_mode(&dir.join("server.key"), 0o600).expect("chmod key");
}

fn is_root() -> bool {
    Command::new("id").arg("-u").output().is_ok_and(|o| o.stdout.starts_with(b"0\n"))
}

fn chown(p: &Path, user: &str) {
    let ok = Command::new("chown").arg(user).arg(p).status().is_ok_and(|s| s.success());
    assert!(ok, "chown {user} {}", p.display());
}

/// `cmd` as `owner` (through runuser, as root), else as is.
fn as_owner(owner: Option<&str>, cmd: &mut Command) -> Command {
    match owner {
        None => std::mem::replace(cmd, Command::new("true")),
        Some(user) => {
            let mut wrapped = Command::new("runuser");
            wrapped.args(["-u", user, "--"]).arg(cmd.get_program()).args(cmd.get_args());
            wrapped
        }
    }
}

fn run(owner: Option<&str>, cmd: &mut Command) {
    let what = format!("{:?}", cmd.get_program());
    let out = as_owner(owner, cmd).output().expect("start a PostgreSQL tool");
    assert!(out.status.success(), "{what}: {}", String::from_utf8_lossy(&out.stderr));
}

/// The board's engines, each fresh: this machine's SQLite (a store file of its own) and a team's
/// PostgreSQL (a migrated database of its own in this binary's cluster). The board's rules are
/// tested on both.
pub fn board_engines() -> Vec<Engine> {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = dir.path().join("index.db");
    let url = team_board_url();
    vec![
        Engine {
            name: "sqlite",
            db: Box::new(tether_store::Store::open(&file).expect("store")),
            open: Box::new(move || Box::new(tether_store::Store::open(&file).expect("store"))),
            _dir: Some(dir),
        },
        Engine { name: "postgres", db: Box::new(pool(&url)), open: Box::new(move || Box::new(pool(&url))), _dir: None },
    ]
}

/// One engine of [`board_engines`]: derefs to the board's `Database`.
pub struct Engine {
    pub name: &'static str,
    db: Box<dyn tether_store::sql::Database>,
    open: Box<dyn Fn() -> Box<dyn tether_store::sql::Database> + Send + Sync>,
    _dir: Option<tempfile::TempDir>,
}

impl Engine {
    /// Another connection to the same board, as another process or machine would have.
    pub fn connect(&self) -> Box<dyn tether_store::sql::Database> {
        (self.open)()
    }
}

impl std::ops::Deref for Engine {
    type Target = dyn tether_store::sql::Database;
    fn deref(&self) -> &Self::Target {
        &*self.db
    }
}

/// A fresh team board: a migrated database of its own in this binary's cluster.
pub fn team_board() -> tether_pg::PgPool {
    pool(&team_board_url())
}

/// The URL of a fresh, migrated team board in this binary's cluster.
pub fn team_board_url() -> String {
    let url = Cluster::shared().database();
    pool(&url).with(tether_pg::migrate::migrate).expect("the team schema");
    url
}

fn pool(url: &str) -> tether_pg::PgPool {
    let target = tether_pg::Target::parse(url).expect("the cluster's URL");
    tether_pg::PgPool::new(target, Some(PASSWORD.into()), std::time::Duration::from_secs(10))
}

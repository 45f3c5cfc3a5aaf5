//! `tether-fake-agent`: a local fake of the Cursor CLI agent (`agent` / `cursor-agent`) in
//! headless print mode. Test-only: it never talks to a model, it replays the shapes documented in
//! `shared/reference/cursor-agents-2026.md` §2 (flags, `stream-json` events, exit codes, sessions)
//! so a process runner can be exercised without the real CLI or an account.
//!
//! The prompt arrives on stdin (or as trailing arguments). Runners pass only an environment
//! allowlist, so tests steer the fake with directives written inside the prompt:
//!
//! | Directive | Effect |
//! |---|---|
//! | (none) | success turn: init, user, thinking, assistant, read/edit/shell tool calls, result; exit 0 |
//! | `[fake:hang-after-result]` | everything including `result`, then sleep forever |
//! | `[fake:fail-result]` | init, user, one assistant, a `result` with `subtype:"error"`; exit 1 |
//! | `[fake:fail=trust\|model\|force\|limit\|generic\|network]` | no `result`; the CLI's stderr message; exit 1 |
//! | `[fake:hang]` | init and user, then sleep forever |
//! | `[fake:ignore-sigterm]` | SIGTERM no longer ends the process (combine with `hang`) |
//! | `[fake:garbage]` | noise before the result: banner, non-UTF-8, `stdout:` prefix, cut JSON, unknown types |
//! | `[fake:big=<MB>]` | about that many megabytes of assistant text in ~4 KB lines |
//! | `[fake:events=<N>]`, `[fake:rate=<per s>]` | N assistant deltas, text `#<seq> @<unix ms>` |
//! | `[fake:slow-start=<ms>]` | wait before printing anything |
//! | `[fake:sleep=<ms>]` | wait between events |
//! | `[fake:resume-error]` | with `--resume`: `Error: could not resume chat <id>`; exit 1 |
//! | `[fake:segment-echo]` | with partial output, the mid-turn consolidated echo live captures show |
//! | `[fake:write=<path>:<text>]` | with `--force`: the file (relative to the workspace) holds `<text>` and a newline |
//! | `[fake:writehex=<path>:<hex>]` | with `--force`: the file holds exactly the bytes `<hex>` spells (any text, brackets and newlines included) |
//! | `[fake:delete=<path>]` | with `--force`: the file is deleted |
//! | `[fake:turn-usage=<N>]` | after each assistant line, a `usage` line of N input tokens; the result's usage is their sum |
//!
//! State lives under `$HOME`: chats in `.fake-agent/chats/<id>/`, the CLI transcript in
//! `.cursor/projects/<slug>/agent-transcripts/<id>/<id>.jsonl`, and a dump of what the process
//! received (argv, env, cwd, prompt, `.cursor/cli.json`, `.cursor/rules/*.mdc`) in
//! `.fake-agent/runs/<session_id>-<unix_ms>.json`.

use std::collections::{BTreeMap, VecDeque};
use std::io::{IsTerminal, Read, StdoutLock, Write};
use std::path::{Path, PathBuf};
use std::process::exit;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use md5::{Digest, Md5};
use serde_json::{Map, Value, json};

const VERSION: &str = "2026.10.01-fake";
const MODELS: &str = "auto, composer-2, claude-4.6-sonnet, gpt-5.3-codex, grok-4.7-xhigh";

#[derive(Clone, Copy, PartialEq, Eq, Default)]
enum Format {
    // The current docs give `text` as the default.
    #[default]
    Text,
    Json,
    StreamJson,
}

#[derive(Default)]
struct Args {
    format: Format,
    partial: bool,
    trust: bool,
    force: bool,
    workspace: Option<PathBuf>,
    model: Option<String>,
    mode: Option<String>,
    /// `Some("")` for a bare `--resume`.
    resume: Option<String>,
    new_session_id: Option<String>,
    api_key: bool,
    positional: Vec<String>,
}

enum Command {
    Run(Args),
    CreateChat,
    Version,
    Help,
}

#[derive(Clone, Copy)]
enum Takes {
    Nothing,
    Value(&'static str),
    Optional(&'static str),
}

struct Opt {
    short: Option<&'static str>,
    long: &'static str,
    takes: Takes,
    choices: &'static [&'static str],
}

const fn opt(short: Option<&'static str>, long: &'static str, takes: Takes) -> Opt {
    Opt { short, long, takes, choices: &[] }
}

/// The subset of the real option table the fake understands; anything else is rejected the way
/// commander rejects it, which is how a runner learns that the CLI is too old.
const OPTIONS: &[Opt] = &[
    opt(Some("-v"), "--version", Takes::Nothing),
    opt(Some("-h"), "--help", Takes::Nothing),
    opt(Some("-p"), "--print", Takes::Nothing),
    Opt {
        short: None,
        long: "--output-format",
        takes: Takes::Value("format"),
        choices: &["text", "json", "stream-json"],
    },
    opt(None, "--stream-partial-output", Takes::Nothing),
    Opt { short: None, long: "--mode", takes: Takes::Value("mode"), choices: &["plan", "ask"] },
    opt(None, "--plan", Takes::Nothing),
    opt(None, "--resume", Takes::Optional("chatId")),
    opt(Some("-m"), "--model", Takes::Value("model")),
    opt(Some("-f"), "--force", Takes::Nothing),
    opt(None, "--yolo", Takes::Nothing),
    Opt { short: None, long: "--sandbox", takes: Takes::Value("mode"), choices: &["enabled", "disabled"] },
    opt(None, "--approve-mcps", Takes::Nothing),
    opt(None, "--trust", Takes::Nothing),
    opt(None, "--workspace", Takes::Value("path-or-name")),
    opt(None, "--api-key", Takes::Value("key")),
    opt(Some("-H"), "--header", Takes::Value("header")),
    opt(Some("-e"), "--endpoint", Takes::Value("url")),
    opt(None, "--new-session-id", Takes::Value("uuid")),
];

impl Opt {
    /// How commander names the option in its messages: `-m, --model <model>`.
    fn flags(&self) -> String {
        let arg = match self.takes {
            Takes::Nothing => String::new(),
            Takes::Value(n) => format!(" <{n}>"),
            Takes::Optional(n) => format!(" [{n}]"),
        };
        match self.short {
            Some(s) => format!("{s}, {}{arg}", self.long),
            None => format!("{}{arg}", self.long),
        }
    }
}

const HELP: &str = "Usage: agent [options] [command] [prompt...]

Start the Cursor Agent (tether-fake-agent: a local fake for tests)

Arguments:
  prompt                       Initial prompt for the agent (else read from stdin)

Options:
  -v, --version                Output the version number
  --api-key <key>              API key for authentication (can also use CURSOR_API_KEY env var)
  -H, --header <header>        Add custom header to agent requests (ignored)
  -e, --endpoint <url>         Target API endpoint URL (ignored)
  -p, --print                  Print responses to console (always on in the fake)
  --output-format <format>     Output format: text | json | stream-json (default: \"text\")
  --stream-partial-output      Stream partial output as individual text deltas
  --mode <mode>                Start in the given execution mode (choices: \"plan\", \"ask\")
  --plan                       Start in plan mode (shorthand for --mode=plan)
  --resume [chatId]            Select a session to resume
  -m, --model <model>          Model to use
  -f, --force                  Force allow commands unless explicitly denied
  --yolo                       Alias for --force (Run Everything)
  --sandbox <mode>             Explicitly enable or disable sandbox mode (choices: \"enabled\", \"disabled\")
  --approve-mcps               Automatically approve all MCP servers
  --trust                      Trust the current workspace without prompting
  --workspace <path-or-name>   Workspace directory to use (defaults to current working directory)
  -h, --help                   Display help for command

Commands:
  create-chat                  Create a new empty chat and return its ID

Test directives go inside the prompt: [fake:hang], [fake:fail=limit], [fake:events=100], ...
";

fn parse_args(argv: &[String]) -> Result<Command, String> {
    let mut a = Args::default();
    let (mut version, mut help) = (false, false);
    let mut queue: VecDeque<String> = argv.iter().cloned().collect();
    let mut only_positional = false;
    while let Some(arg) = queue.pop_front() {
        if only_positional || arg == "-" || !arg.starts_with('-') {
            a.positional.push(arg);
            continue;
        }
        if arg == "--" {
            only_positional = true;
            continue;
        }
        let (flag, attached) = if arg.starts_with("--") {
            match arg.split_once('=') {
                Some((f, v)) => (f.to_owned(), Some(v.to_owned())),
                None => (arg.clone(), None),
            }
        } else {
            // `-pf` and `-mgpt-5`: commander's clustered short options.
            let cut = arg.char_indices().nth(2).map_or(arg.len(), |(i, _)| i);
            (arg[..cut].to_owned(), Some(arg[cut..].to_owned()).filter(|r| !r.is_empty()))
        };
        let Some(o) = OPTIONS.iter().find(|o| o.long == flag || o.short == Some(flag.as_str())) else {
            return Err(format!("error: unknown option '{}'", if flag.starts_with("--") { &arg } else { &flag }));
        };
        let value = match o.takes {
            Takes::Nothing => {
                if let Some(rest) = attached.filter(|_| !flag.starts_with("--")) {
                    queue.push_front(format!("-{rest}"));
                }
                None
            }
            Takes::Value(_) => match attached.or_else(|| queue.pop_front()) {
                Some(v) => Some(v),
                None => return Err(format!("error: option '{}' argument missing", o.flags())),
            },
            Takes::Optional(_) => attached.or_else(|| {
                queue.front().filter(|n| !n.starts_with('-')).is_some().then(|| queue.pop_front()).flatten()
            }),
        };
        if let Some(v) = &value
            && !o.choices.is_empty()
            && !o.choices.contains(&v.as_str())
        {
            return Err(format!(
                "error: option '{}' argument '{v}' is invalid. Allowed choices are {}.",
                o.flags(),
                o.choices.join(", ")
            ));
        }
        match o.long {
            "--version" => version = true,
            "--help" => help = true,
            "--output-format" => {
                a.format = match value.as_deref() {
                    Some("json") => Format::Json,
                    Some("stream-json") => Format::StreamJson,
                    _ => Format::Text,
                }
            }
            "--stream-partial-output" => a.partial = true,
            "--mode" => a.mode = value,
            "--plan" => a.mode = Some("plan".into()),
            "--resume" => a.resume = Some(value.unwrap_or_default()),
            "--model" => a.model = value,
            "--force" | "--yolo" => a.force = true,
            "--trust" => a.trust = true,
            "--workspace" => a.workspace = value.map(PathBuf::from),
            "--api-key" => a.api_key = true,
            "--new-session-id" => a.new_session_id = value,
            _ => {}
        }
    }
    Ok(if help {
        Command::Help
    } else if version {
        Command::Version
    } else if a.positional.first().is_some_and(|p| p == "create-chat") {
        Command::CreateChat
    } else {
        Command::Run(a)
    })
}

#[derive(Default)]
struct Directives {
    hang_after_result: bool,
    fail_result: bool,
    fail: Option<String>,
    hang: bool,
    ignore_sigterm: bool,
    garbage: bool,
    big_mb: Option<f64>,
    events: Option<u64>,
    rate: Option<f64>,
    slow_start_ms: u64,
    sleep_ms: u64,
    resume_error: bool,
    segment_echo: bool,
    /// Files to write (`Some(text)`) or delete (`None`), relative to the workspace.
    files: Vec<(String, Option<String>)>,
    turn_usage: Option<u64>,
}

fn directives(prompt: &str) -> Directives {
    let mut d = Directives::default();
    let mut rest = prompt;
    while let Some(start) = rest.find("[fake:") {
        let body = &rest[start + "[fake:".len()..];
        let Some(end) = body.find(']') else { break };
        let (name, value) = match body[..end].split_once('=') {
            Some((n, v)) => (n.trim(), Some(v.trim())),
            None => (body[..end].trim(), None),
        };
        let num = || value.and_then(|v| v.parse::<f64>().ok()).filter(|n| n.is_finite() && *n >= 0.0);
        let ms = || num().map_or(0, |n| n as u64);
        match name {
            "hang-after-result" => d.hang_after_result = true,
            "fail-result" => d.fail_result = true,
            "fail" => d.fail = Some(value.unwrap_or("generic").to_owned()),
            "hang" => d.hang = true,
            "ignore-sigterm" => d.ignore_sigterm = true,
            "garbage" => d.garbage = true,
            "big" => d.big_mb = num(),
            "events" => d.events = num().map(|n| n as u64),
            "rate" => d.rate = num().filter(|r| *r > 0.0),
            "slow-start" => d.slow_start_ms = ms(),
            "sleep" => d.sleep_ms = ms(),
            "resume-error" => d.resume_error = true,
            "segment-echo" => d.segment_echo = true,
            "write" => {
                if let Some((path, text)) = value.and_then(|v| v.split_once(':')) {
                    d.files.push((path.to_owned(), Some(text.to_owned())));
                }
            }
            "writehex" => {
                if let Some((path, bytes)) =
                    value.and_then(|v| v.split_once(':')).and_then(|(p, h)| Some((p, hex::decode(h).ok()?)))
                {
                    // Written with the newline the plain `write` adds, so strip one if given.
                    let text = String::from_utf8_lossy(&bytes).into_owned();
                    d.files.push((path.to_owned(), Some(text.strip_suffix('\n').unwrap_or(&text).to_owned())));
                }
            }
            "delete" => d.files.extend(value.map(|p| (p.to_owned(), None))),
            "turn-usage" => d.turn_usage = num().map(|n| n as u64),
            // A typo would otherwise silently run the success turn and pass the wrong test.
            other => eprintln!("tether-fake-agent: unknown directive [fake:{other}]"),
        }
        rest = &body[end..];
    }
    d
}

/// Stdout, one flushed line per write. A closed stdout ends the process without a panic message.
struct Out(StdoutLock<'static>);

impl Out {
    fn line(&mut self, bytes: &[u8]) {
        let ok = self.0.write_all(bytes).and_then(|_| self.0.write_all(b"\n")).and_then(|_| self.0.flush());
        if ok.is_err() {
            exit(1);
        }
    }
}

fn now_ms() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_millis() as u64)
}

fn sleep_ms(ms: u64) {
    if ms > 0 {
        std::thread::sleep(Duration::from_millis(ms));
    }
}

fn die(message: &str) -> ! {
    eprintln!("{message}");
    exit(1);
}

fn sleep_forever() -> ! {
    loop {
        std::thread::sleep(Duration::from_secs(3600));
    }
}

/// A uuid-v4-shaped id. The time alone can repeat across fast runs, hence pid and a counter.
fn new_uuid() -> String {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let nanos = SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos());
    let seed = format!("{nanos}-{}-{}", std::process::id(), COUNTER.fetch_add(1, Ordering::Relaxed));
    let mut b = [0u8; 16];
    b.copy_from_slice(&Md5::digest(seed.as_bytes()));
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!("{}-{}-{}-{}-{}", &h[..8], &h[8..12], &h[12..16], &h[16..20], &h[20..])
}

fn home() -> Option<PathBuf> {
    std::env::var_os("HOME").filter(|h| !h.is_empty()).map(PathBuf::from)
}

/// The transcript directory name: `/home/u/my-app` → `home-u-my-app`.
fn slug(path: &Path) -> String {
    let s: String = path.to_string_lossy().chars().map(|c| if c.is_ascii_alphanumeric() { c } else { '-' }).collect();
    s.trim_start_matches('-').to_owned()
}

fn model_display(model: Option<&str>) -> String {
    match model {
        None | Some("auto") | Some("") => "Auto".to_owned(),
        Some(m) => format!("Fake Model ({m})"),
    }
}

fn read_lossy(path: &Path) -> Option<String> {
    std::fs::read(path).ok().map(|b| String::from_utf8_lossy(&b).into_owned())
}

/// What the process received, for tests to assert on (`$HOME/.fake-agent/runs/`).
fn write_dump(sid: &str, argv: &[String], workspace: &Path, prompt: Option<&str>) {
    let Some(home) = home() else { return };
    let env: BTreeMap<String, String> = std::env::vars_os()
        .map(|(k, v)| (k.to_string_lossy().into_owned(), v.to_string_lossy().into_owned()))
        .collect();
    let mut rules = Map::new();
    if let Ok(dir) = std::fs::read_dir(workspace.join(".cursor/rules")) {
        let mut files: Vec<PathBuf> =
            dir.flatten().map(|e| e.path()).filter(|p| p.extension().is_some_and(|x| x == "mdc")).collect();
        files.sort();
        for f in files {
            let name = f.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
            rules.insert(name, json!(read_lossy(&f)));
        }
    }
    let dump = json!({
        "program": std::env::args_os().next().map(|p| p.to_string_lossy().into_owned()),
        "argv": argv,
        "env": env,
        "cwd": std::env::current_dir().ok().map(|d| d.to_string_lossy().into_owned()),
        "workspace": workspace.to_string_lossy(),
        "session_id": sid,
        "prompt": prompt,
        "cli_json": read_lossy(&workspace.join(".cursor/cli.json")),
        "rules": rules,
    });
    let dir = home.join(".fake-agent/runs");
    let text = serde_json::to_string_pretty(&dump).unwrap_or_default();
    if std::fs::create_dir_all(&dir).is_ok() {
        let _ = std::fs::write(dir.join(format!("{sid}-{}.json", now_ms())), text);
    }
}

fn chat_dir(id: &str) -> Option<PathBuf> {
    // An id is a path component here; refuse anything that could climb out of `chats/`.
    let safe = !id.is_empty() && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    home().filter(|_| safe).map(|h| h.join(".fake-agent/chats").join(id))
}

/// Creates the chat on disk (as `agent create-chat` does) and returns how many turns it had.
fn open_chat(id: &str, workspace: &Path, new_turn: bool) -> u64 {
    let Some(dir) = chat_dir(id) else { return 0 };
    let meta_path = dir.join("meta.json");
    let mut meta: Value = read_lossy(&meta_path).and_then(|t| serde_json::from_str(&t).ok()).unwrap_or_else(
        || json!({"chatId": id, "workspace": workspace.to_string_lossy(), "createdAtMs": now_ms(), "turns": 0}),
    );
    let turns = meta["turns"].as_u64().unwrap_or(0);
    meta["turns"] = json!(turns + u64::from(new_turn));
    meta["lastUsedAtMs"] = json!(now_ms());
    if std::fs::create_dir_all(&dir).is_ok() {
        let _ = std::fs::write(meta_path, meta.to_string());
    }
    turns
}

fn append_line(path: &Path, line: &str) {
    if let Some(dir) = path.parent() {
        let _ = std::fs::create_dir_all(dir);
    }
    if let Ok(mut f) = std::fs::OpenOptions::new().create(true).append(true).open(path) {
        let _ = writeln!(f, "{line}");
    }
}

/// `Shell(cargo)`, `Shell(cargo:*)`, `Shell(*)` in `permissions.deny`: deny wins even with `--force`.
fn shell_denied(cli_json: Option<&str>, base: &str, args: &str) -> bool {
    let Some(v) = cli_json.and_then(|t| serde_json::from_str::<Value>(t).ok()) else { return false };
    let Some(deny) = v.pointer("/permissions/deny").and_then(Value::as_array) else { return false };
    deny.iter().filter_map(Value::as_str).any(|token| {
        let Some(inner) = token.strip_prefix("Shell(").and_then(|t| t.strip_suffix(')')) else { return false };
        match inner.split_once(':') {
            Some((b, a)) => glob(b, base) && glob(a, args),
            None => glob(inner, base),
        }
    })
}

fn glob(pattern: &str, text: &str) -> bool {
    let (p, t): (Vec<char>, Vec<char>) = (pattern.chars().collect(), text.chars().collect());
    fn go(p: &[char], t: &[char]) -> bool {
        match p.split_first() {
            None => t.is_empty(),
            Some(('*', rest)) => (0..=t.len()).any(|i| go(rest, &t[i..])),
            Some(('?', rest)) => !t.is_empty() && go(rest, &t[1..]),
            Some((c, rest)) => t.first() == Some(c) && go(rest, &t[1..]),
        }
    }
    go(&p, &t)
}

/// One turn's output: every event goes through here so the format and pacing apply uniformly.
struct Turn {
    out: Out,
    format: Format,
    partial: bool,
    segment_echo: bool,
    sid: String,
    request_id: String,
    pause_ms: u64,
    started: Instant,
    input_len: usize,
    /// Every assistant segment with no separator, as `result.result` carries it.
    text: String,
    /// `--output-format text` prints only the final assistant message.
    last_message: String,
    transcript: Option<PathBuf>,
    /// Input tokens each assistant line's turn spends (a `usage` line after it), and their sum.
    turn_usage: Option<u64>,
    turns_spent: u64,
}

impl Turn {
    fn streaming(&self) -> bool {
        self.format == Format::StreamJson
    }

    fn emit(&mut self, v: &Value) {
        self.emit_prefixed("", v);
    }

    fn emit_prefixed(&mut self, prefix: &str, v: &Value) {
        if self.streaming() {
            self.out.line(format!("{prefix}{v}").as_bytes());
            if let Some(n) = self.turn_usage
                && v.get("type").and_then(Value::as_str) == Some("assistant")
            {
                self.turns_spent += n;
                let u = json!({"type": "usage", "usage": {"inputTokens": n, "outputTokens": 0, "cacheReadTokens": 0, "cacheWriteTokens": 0}, "session_id": self.sid});
                self.out.line(u.to_string().as_bytes());
            }
            sleep_ms(self.pause_ms);
        }
    }

    fn raw(&mut self, bytes: &[u8]) {
        if self.streaming() {
            self.out.line(bytes);
        }
    }

    fn assistant(&self, text: &str, model_call_id: Option<&str>, stamped: bool) -> Value {
        let mut v = json!({
            "type": "assistant",
            "message": {"role": "assistant", "content": [{"type": "text", "text": text}]},
            "session_id": self.sid,
        });
        if let Some(m) = model_call_id {
            v["model_call_id"] = json!(m);
        }
        if stamped {
            v["timestamp_ms"] = json!(now_ms());
        }
        v
    }

    /// One assistant message. A message before tool calls (`model_call_id` given) carries the
    /// model call id and a timestamp; the final one carries neither. With partial output the
    /// chunks go out as stamped deltas and only the final message gets its consolidated echo,
    /// unless `segment-echo` asks for the mid-turn echo live captures also show.
    fn say(&mut self, chunks: &[String], model_call_id: Option<&str>, prefix: &str) {
        let whole = chunks.concat();
        if self.partial {
            for (i, c) in chunks.iter().enumerate() {
                let v = self.assistant(c, None, true);
                self.emit_prefixed(if i == 0 { prefix } else { "" }, &v);
            }
            let echo = match model_call_id {
                None => Some(self.assistant(&whole, None, false)),
                Some(m) if self.segment_echo => Some(self.assistant(&whole, Some(m), true)),
                Some(_) => None,
            };
            if let Some(v) = echo {
                self.emit(&v);
            }
        } else {
            let v = self.assistant(&whole, model_call_id, model_call_id.is_some());
            self.emit_prefixed(prefix, &v);
        }
        self.text.push_str(&whole);
        self.last_message = whole;
    }

    fn thinking(&mut self, parts: &[&str]) {
        for p in parts {
            let v = json!({"type": "thinking", "subtype": "delta", "text": p, "session_id": self.sid,
                           "timestamp_ms": now_ms()});
            self.emit(&v);
        }
        let v = json!({"type": "thinking", "subtype": "completed", "session_id": self.sid, "timestamp_ms": now_ms()});
        self.emit(&v);
    }

    /// A started/completed pair. The bookkeeping keys sit beside the kind key inside `tool_call`,
    /// in the order the live captures show.
    fn tool(&mut self, call_id: &str, model_call_id: &str, kind: &str, started: Value, completed: Value) {
        let t0 = now_ms().to_string();
        let v = json!({
            "type": "tool_call", "subtype": "started", "call_id": call_id,
            "tool_call": {kind: started, "hookAdditionalContexts": [], "toolCallId": call_id, "startedAtMs": t0},
            "model_call_id": model_call_id, "session_id": self.sid, "timestamp_ms": now_ms(),
        });
        self.emit(&v);
        let v = json!({
            "type": "tool_call", "subtype": "completed", "call_id": call_id,
            "tool_call": {kind: completed, "hookAdditionalContexts": [], "toolCallId": call_id, "startedAtMs": t0,
                          "completedAtMs": now_ms().to_string()},
            "model_call_id": model_call_id, "session_id": self.sid, "timestamp_ms": now_ms(),
        });
        self.emit(&v);
    }

    fn result(&self, is_error: bool) -> Value {
        let ms = self.started.elapsed().as_millis() as u64;
        let usage = if self.turn_usage.is_some() {
            json!({"inputTokens": self.turns_spent, "outputTokens": 0, "cacheReadTokens": 0, "cacheWriteTokens": 0})
        } else {
            json!({
            "inputTokens": 9000 + self.input_len / 4,
            "outputTokens": 40 + self.text.len() / 4,
            "cacheReadTokens": 5888,
            "cacheWriteTokens": 0,
            })
        };
        let subtype = if is_error { "error" } else { "success" };
        // `--output-format json` orders its keys differently from the stream's `result` line.
        if self.format == Format::Json {
            json!({"type": "result", "subtype": subtype, "is_error": is_error, "duration_ms": ms,
                   "duration_api_ms": ms, "result": self.text, "session_id": self.sid,
                   "request_id": self.request_id, "usage": usage})
        } else {
            json!({"type": "result", "subtype": subtype, "duration_ms": ms, "duration_api_ms": ms,
                   "is_error": is_error, "result": self.text, "session_id": self.sid,
                   "request_id": self.request_id, "usage": usage})
        }
    }

    fn transcript(&self, line: &Value) {
        if let Some(p) = &self.transcript {
            append_line(p, &line.to_string());
        }
    }

    fn transcript_assistant(&self, content: Vec<Value>) {
        self.transcript(&json!({"role": "assistant", "message": {"content": content}}));
    }

    fn turn_ended(&self, status: &str) {
        self.transcript(&json!({"type": "turn_ended", "status": status}));
    }
}

fn text_part(text: &str) -> Value {
    json!({"type": "text", "text": text})
}

fn tool_use(name: &str, input: Value) -> Value {
    json!({"type": "tool_use", "name": name, "input": input})
}

fn main() {
    let argv: Vec<String> = std::env::args_os().skip(1).map(|a| a.to_string_lossy().into_owned()).collect();
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    let args = match parse_args(&argv) {
        Ok(Command::Run(a)) => a,
        Ok(Command::Version) => {
            println!("{VERSION}");
            return;
        }
        Ok(Command::Help) => {
            print!("{HELP}");
            return;
        }
        Ok(Command::CreateChat) => {
            let id = new_uuid();
            open_chat(&id, &cwd, false);
            println!("{id}");
            return;
        }
        Err(message) => {
            write_dump(&new_uuid(), &argv, &cwd, None);
            eprintln!("{message}");
            exit(1);
        }
    };
    let workspace = match &args.workspace {
        Some(w) => std::path::absolute(w).unwrap_or_else(|_| cwd.join(w)),
        None => cwd.clone(),
    };

    let prompt = if args.positional.is_empty() {
        let mut bytes = Vec::new();
        if !std::io::stdin().is_terminal() {
            let _ = std::io::stdin().read_to_end(&mut bytes);
        }
        String::from_utf8_lossy(&bytes).into_owned()
    } else {
        args.positional.join(" ")
    };
    let d = directives(&prompt);

    // Registering any handler is what replaces SIGTERM's default action (terminate); the flag
    // itself is never read.
    if d.ignore_sigterm
        && let Err(e) = signal_hook::flag::register(signal_hook::consts::SIGTERM, Arc::new(AtomicBool::new(false)))
    {
        eprintln!("tether-fake-agent: cannot ignore SIGTERM: {e}");
    }
    sleep_ms(d.slow_start_ms);

    // Refusals before `system/init` still leave a dump, so tests can see what was passed.
    let refuse = |sid: &str, message: &str| -> ! {
        write_dump(sid, &argv, &workspace, Some(&prompt));
        die(message)
    };
    if (!args.trust && !args.force) || d.fail.as_deref() == Some("trust") {
        refuse(
            &new_uuid(),
            &format!(
                "⚠ Workspace Trust Required\n\n\
                 Cursor Agent can read, edit and run code in this directory:\n  {}\n\n\
                 Do you trust the contents of this directory?\n\
                 Running non-interactively requires trust. Pass --trust, --yolo, or -f to trust it.",
                workspace.display()
            ),
        );
    }
    if let Some(id) = &args.resume
        && d.resume_error
    {
        refuse(&new_uuid(), &format!("Error: could not resume chat {id}"));
    }
    if let Some(id) = &args.new_session_id
        && chat_dir(id).is_some_and(|dir| dir.exists())
    {
        refuse(id, &format!("Error: Session ID \"{id}\" is already in use."));
    }

    // An unknown `--resume` id silently starts a fresh chat and still exits 0 (CLI 2026.06).
    let sid = match (&args.resume, &args.new_session_id) {
        (Some(id), _) if chat_dir(id).is_some_and(|dir| dir.exists()) => id.clone(),
        (_, Some(id)) => id.clone(),
        _ => new_uuid(),
    };
    let earlier_turns = open_chat(&sid, &workspace, true);
    let turn_number = earlier_turns + 1;

    let api_key_source = if args.api_key {
        "flag"
    } else if std::env::var_os("CURSOR_API_KEY").is_some_and(|k| !k.is_empty()) {
        "env"
    } else {
        "login"
    };
    let mut t = Turn {
        out: Out(std::io::stdout().lock()),
        format: args.format,
        partial: args.partial,
        segment_echo: d.segment_echo,
        sid: sid.clone(),
        request_id: new_uuid(),
        pause_ms: d.sleep_ms,
        turn_usage: d.turn_usage,
        turns_spent: 0,
        started: Instant::now(),
        input_len: prompt.len(),
        text: String::new(),
        last_message: String::new(),
        transcript: home().map(|h| {
            h.join(".cursor/projects")
                .join(slug(&workspace))
                .join("agent-transcripts")
                .join(&sid)
                .join(format!("{sid}.jsonl"))
        }),
    };
    let init = json!({
        "type": "system", "subtype": "init", "apiKeySource": api_key_source,
        "cwd": workspace.to_string_lossy(), "session_id": sid,
        "model": model_display(args.model.as_deref()), "permissionMode": "default",
    });
    t.emit(&init);
    write_dump(&sid, &argv, &workspace, Some(&prompt));
    let cli_json = read_lossy(&workspace.join(".cursor/cli.json"));

    match d.fail.as_deref() {
        Some("model") => die(&format!(
            "Cannot use this model: {}. Available models: {MODELS}",
            args.model.as_deref().unwrap_or("auto")
        )),
        Some("force") => die("Error: Your team administrator has disabled the 'Run Everything' option."),
        Some("limit") => die("ActionRequiredError: You've hit your usage limit for this billing cycle. \
             To keep going, set a Spend Limit in your dashboard: https://cursor.com/dashboard?tab=spending"),
        _ => {}
    }

    let user = json!({
        "type": "user",
        "message": {"role": "user", "content": [{"type": "text", "text": prompt}]},
        "session_id": sid,
    });
    t.emit(&user);
    let query = format!("<user_query>\n{}\n</user_query>", prompt.trim_end());
    t.transcript(&json!({"role": "user", "message": {"content": [text_part(&query)]}}));

    match d.fail.as_deref() {
        None | Some("trust" | "model" | "force" | "limit") => {}
        Some("network") => {
            let endpoint = "https://agentn.global.api5.cursor.sh";
            for attempt in 1..=3 {
                t.emit(&json!({"type": "connection", "subtype": "reconnecting", "session_id": sid,
                                "timestamp_ms": now_ms(), "attempt": attempt, "endpoint_url": endpoint}));
                t.emit(&json!({"type": "retry", "subtype": "starting", "session_id": sid,
                                "timestamp_ms": now_ms(), "attempt": attempt, "is_resume": false}));
                t.emit(&json!({"type": "connection", "subtype": "reconnected", "session_id": sid,
                                "timestamp_ms": now_ms()}));
            }
            t.turn_ended("error");
            die("RetriableError: [unavailable] upstream connect error or disconnect/reset before headers");
        }
        Some(_) => {
            t.turn_ended("error");
            die(&format!("Error: [internal] The agent stopped unexpectedly (request {}).", t.request_id));
        }
    }

    // The real CLI rejects every edit in print mode without --force.
    if args.force {
        for (rel, text) in &d.files {
            let path = workspace.join(rel);
            // Like the real CLI: the write tool's call, then the write, then the call completed.
            let id = format!("call-{}-w", new_uuid());
            let mc = format!("{}-w-fak3", t.request_id);
            let args = json!({"path": path.to_string_lossy(), "fileText": text.as_deref().map(|x| format!("{x}\n")), "toolCallId": id});
            let kind = if text.is_some() { "writeToolCall" } else { "deleteToolCall" };
            t.emit(&json!({"type": "tool_call", "subtype": "started", "call_id": id,
                "tool_call": {kind: {"args": args}}, "model_call_id": mc, "session_id": t.sid, "timestamp_ms": now_ms()}));
            let done = match text {
                Some(text) => path
                    .parent()
                    .map_or(Ok(()), std::fs::create_dir_all)
                    .and_then(|()| std::fs::write(&path, format!("{text}\n"))),
                None => std::fs::remove_file(&path),
            };
            let result = match &done {
                Ok(()) => {
                    json!({"success": {"path": path.to_string_lossy(), "linesCreated": text.as_deref().map_or(0, |x| x.lines().count()), "fileSize": text.as_deref().map_or(0, |x| x.len() + 1)}})
                }
                Err(e) => json!({"error": {"message": e.to_string()}}),
            };
            t.emit(&json!({"type": "tool_call", "subtype": "completed", "call_id": id,
                "tool_call": {kind: {"args": args, "result": result}}, "model_call_id": mc, "session_id": t.sid, "timestamp_ms": now_ms()}));
            if let Err(e) = done {
                eprintln!("tether-fake-agent: {}: {e}", path.display());
            }
        }
    }

    if d.hang {
        sleep_forever();
    }

    if d.fail_result {
        t.say(&["I started on this, but the model call failed.".to_owned()], None, "");
        t.text = "The agent run failed: internal error while calling the model.".to_owned();
        t.transcript_assistant(vec![text_part(&t.last_message)]);
        t.turn_ended("error");
        let r = t.result(true);
        match t.format {
            Format::Text => eprintln!("{}", t.text),
            _ => t.out.line(r.to_string().as_bytes()),
        }
        exit(1);
    }

    if let Some(n) = d.events {
        stream_events(&mut t, n, d.rate);
        t.transcript_assistant(vec![text_part(&t.text)]);
    } else if let Some(mb) = d.big_mb {
        stream_big(&mut t, mb);
        t.transcript_assistant(vec![text_part(&t.text)]);
    } else {
        let plan = args.mode.is_some();
        let shell_allowed = args.force && !shell_denied(cli_json.as_deref(), "cargo", "test");
        success_turn(&mut t, &workspace, turn_number, plan, shell_allowed, d.garbage);
    }
    if d.garbage && t.format == Format::Json {
        t.out.line(b"Cursor Agent v2026.10.01-fake");
    }

    // On disk before the result goes out, so whoever reacts to the result finds the turn saved.
    t.turn_ended("success");
    if let Some(dir) = chat_dir(&sid) {
        append_line(&dir.join("turns.jsonl"), &json!({"prompt": prompt, "result": t.text}).to_string());
    }
    let r = t.result(false);
    match t.format {
        Format::Text => {
            let last = t.last_message.clone();
            t.out.line(last.as_bytes());
        }
        _ => t.out.line(r.to_string().as_bytes()),
    }
    if d.hang_after_result {
        sleep_forever();
    }
}

fn success_turn(t: &mut Turn, workspace: &Path, turn: u64, plan: bool, shell_allowed: bool, garbage: bool) {
    let sid = t.sid.clone();
    let model_call_id = format!("{}-0-fak3", t.request_id);
    let call = |n: u32| format!("call-{}-{n}", new_uuid());
    let file = workspace.join("src/lib.rs").to_string_lossy().into_owned();

    t.thinking(&["Reading the code", " before changing", " anything."]);
    let opening = if turn > 1 { format!("Picking up where we left off (turn {turn}). ") } else { String::new() };
    let intro = if plan {
        format!("{opening}I'll read the code first.")
    } else {
        format!("{opening}I'll read the code, fix it, and run the tests.")
    };
    let words: Vec<String> = intro.split_inclusive(' ').map(str::to_owned).collect();
    let chunks = match words.len() {
        0..=3 => vec![intro.clone()],
        n => vec![words[..n / 3].concat(), words[n / 3..2 * n / 3].concat(), words[2 * n / 3..].concat()],
    };
    t.say(&chunks, Some(&model_call_id), "");

    let content = "pub fn add(a: i32, b: i32) -> i32 {\n    a - b\n}\n";
    let id = call(0);
    let args = json!({"path": file, "toolCallId": id});
    let result = json!({"success": {"content": content, "isEmpty": false, "exceededLimit": false,
                                    "totalLines": 3, "totalChars": content.len(), "path": file}});
    t.tool(&id, &model_call_id, "readToolCall", json!({"args": args}), json!({"args": args, "result": result}));
    let mut used = vec![text_part(&t.last_message), tool_use("Read", json!({"path": file}))];

    if !plan {
        let id = call(1);
        let args = json!({"path": file, "strReplace": {"oldText": "a - b", "newText": "a + b"}, "toolCallId": id});
        let result = json!({"success": {"path": file, "linesAdded": 1, "linesRemoved": 1,
                                        "diffString": "-    a - b\n+    a + b\n"}});
        t.tool(&id, &model_call_id, "editToolCall", json!({"args": args}), json!({"args": args, "result": result}));
        used.push(tool_use("StrReplace", json!({"path": file, "old_string": "a - b", "new_string": "a + b"})));

        // Live call ids carry a literal newline between the call and the function-call id.
        let id = format!("call-{}-2\nfc_{}_0", new_uuid(), new_uuid());
        let args = json!({
            "command": "cargo test", "workingDirectory": "", "timeout": 30000, "toolCallId": id,
            "simpleCommands": ["cargo"], "hasInputRedirect": false, "hasOutputRedirect": false,
            "parsingResult": {"parsingFailed": false, "executableCommands": [{"name": "cargo",
                "args": [{"type": "word", "value": "test"}], "fullText": "cargo test"}],
                "hasRedirects": false, "hasCommandSubstitution": false, "redirects": []},
            "fileOutputThresholdBytes": "40000", "isBackground": false, "skipApproval": false,
            "timeoutBehavior": "TIMEOUT_BEHAVIOR_BACKGROUND", "hardTimeout": 86_400_000,
            "description": "Run the test suite", "closeStdin": true, "conversationId": sid,
            "adminCommandDenylist": [], "requestId": t.request_id,
        });
        let started = json!({"args": args, "description": "Run the test suite"});
        // A rejected call's completion carries only the result, as captured.
        let completed = if shell_allowed {
            let stdout = "running 3 tests\ntest result: ok. 3 passed; 0 failed\n";
            json!({"args": args, "result": {"success": {"command": "cargo test", "workingDirectory": "",
                "exitCode": 0, "signal": "", "stdout": stdout, "stderr": "   Compiling app v0.1.0\n",
                "executionTime": 1230, "interleavedOutput": stdout, "localExecutionTimeMs": 264},
                "isBackground": false}, "description": "Run the test suite"})
        } else {
            json!({"result": {"rejected": {"command": "cargo test",
                "workingDirectory": workspace.to_string_lossy(), "reason": "", "isReadonly": false}}})
        };
        t.tool(&id, &model_call_id, "shellToolCall", started, completed);
        used.push(tool_use("Shell", json!({"command": "cargo test"})));
    }
    t.transcript_assistant(used);

    let mut prefix = "";
    if garbage {
        emit_garbage(t, &model_call_id);
        prefix = "stdout: ";
    }
    let closing = match (plan, shell_allowed) {
        (true, _) => "Plan: change `a - b` to `a + b` in src/lib.rs, then run `cargo test`.",
        (false, true) => "Fixed `add` in src/lib.rs; `cargo test` passes.",
        (false, false) => "Fixed `add` in src/lib.rs, but running `cargo test` was rejected.",
    };
    let (a, b) = closing.split_at(closing.find(' ').unwrap_or(closing.len()));
    t.say(&[a.to_owned(), b.to_owned()], None, prefix);
    t.transcript_assistant(vec![text_part(&t.last_message)]);
}

fn emit_garbage(t: &mut Turn, model_call_id: &str) {
    t.raw(b"   ___ _   _ ___  ___  ___  ___     _   ___ ___ _  _ _____   v2026.10.01-fake");
    t.raw(&[0xff, 0xfe, 0x41]);
    t.raw(br#"{"type":"assistant","message":{"role":"assistant","content":[{"type":"te"#);
    let v = json!({"type": "telemetry", "subtype": "x", "session_id": t.sid, "timestamp_ms": now_ms()});
    t.emit(&v);
    let id = format!("call-{}-9", new_uuid());
    t.tool(&id, model_call_id, "fooToolCall", json!({"args": {}}), json!({"args": {}, "result": {"success": {}}}));
}

/// `#<seq> @<unix ms>` deltas, paced against a fixed schedule so a slow write does not slow the
/// rest of the run down.
fn stream_events(t: &mut Turn, n: u64, rate: Option<f64>) {
    let start = Instant::now();
    let mut all = String::new();
    for seq in 1..=n {
        if let Some(r) = rate {
            let due = start + Duration::from_secs_f64((seq - 1) as f64 / r);
            if let Some(wait) = due.checked_duration_since(Instant::now()) {
                std::thread::sleep(wait);
            }
        }
        let ms = now_ms();
        let text = format!("#{seq} @{ms}");
        let v = json!({
            "type": "assistant",
            "message": {"role": "assistant", "content": [{"type": "text", "text": text}]},
            "session_id": t.sid, "timestamp_ms": ms,
        });
        t.emit(&v);
        all.push_str(&text);
    }
    if t.partial {
        let echo = t.assistant(&all, None, false);
        t.emit(&echo);
    }
    t.text.push_str(&all);
    t.last_message = all;
}

fn stream_big(t: &mut Turn, mb: f64) {
    const LINE: usize = 4096;
    let total = (mb * 1024.0 * 1024.0) as usize;
    let filler = "lorem ipsum dolor sit amet ".repeat(LINE / 27 + 1);
    let mut all = String::with_capacity(total);
    let mut seq = 0;
    while all.len() < total {
        seq += 1;
        let mut chunk = format!("[chunk {seq}] ");
        let body = LINE.min(total - all.len()).saturating_sub(chunk.len() + 1);
        chunk.push_str(&filler[..body]);
        chunk.push('\n');
        let v = t.assistant(&chunk, None, t.partial);
        t.emit(&v);
        all.push_str(&chunk);
    }
    if t.partial {
        let echo = t.assistant(&all, None, false);
        t.emit(&echo);
    }
    t.text.push_str(&all);
    t.last_message = all;
}

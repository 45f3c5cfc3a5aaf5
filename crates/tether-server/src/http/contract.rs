//! What the route table ([`super::routes`]) declares about each route beyond its path: the type
//! its handler answers with (checked by the compiler: a handler whose answer is not the declared
//! type does not build), and the TypeScript the GUI's client is generated from
//! (`ui/src/gen/api.ts`, written by `scripts/gen-types` through [`client_ts`]). It knows the
//! route table's shapes and ts-rs; it must not depend on any handler or operation.

use std::collections::BTreeMap;
use std::future::Future;

use axum::Json;
use axum::response::Response;

use ts_rs::TypeVisitor;

use super::error::{ApiError, ApiResult};

/// A file to download (`Content-Disposition`, CSV, JSON lines): the client gets its URL.
pub struct Download;
/// A Server-Sent Events stream: the client gets its URL.
pub struct EventStream;
/// `202 Accepted` with no body.
pub struct Accepted;
/// `R` as JSON, or the same as a file when the query asks (the usage report's CSV).
pub struct JsonOrFile<R>(std::marker::PhantomData<R>);

/// An answer a handler may give for a route declared to answer `R`.
pub trait Reply<R> {}
impl<R> Reply<R> for ApiResult<R> {}
impl<R> Reply<R> for Json<R> {}
impl Reply<Download> for Result<Response, ApiError> {}
impl Reply<EventStream> for Result<Response, ApiError> {}
impl Reply<EventStream> for Response {}
impl Reply<Accepted> for Result<Response, ApiError> {}
impl<R> Reply<JsonOrFile<R>> for Result<Response, ApiError> {}

/// A handler (an async fn of its extractors) whose answer is a [`Reply<R>`].
pub trait Answers<Args, R> {}

macro_rules! answers {
    ($($a:ident),*) => {
        impl<F, Fut, R, $($a,)*> Answers<($($a,)*), R> for F
        where
            F: Fn($($a),*) -> Fut,
            Fut: Future,
            Fut::Output: Reply<R>,
        {
        }
    };
}
answers!();
answers!(A1);
answers!(A1, A2);
answers!(A1, A2, A3);
answers!(A1, A2, A3, A4);
answers!(A1, A2, A3, A4, A5);

/// The handler itself, once the compiler has checked that it answers `R`.
pub fn answering<R, Args, H: Answers<Args, R>>(h: H) -> H {
    h
}

/// A TypeScript type the client names, and what it imports for it (name → file in ui/src).
#[derive(Debug, Clone)]
pub struct TsType {
    pub name: String,
    pub imports: Vec<(String, String)>,
}

impl TsType {
    /// A type ts-rs describes: imported from the file it is exported to (`./core` …), or, for a
    /// list or an option of such, the types inside.
    pub fn of<T: ts_rs::TS + 'static + ?Sized>() -> Self {
        let mut named = Named(Vec::new());
        named.visit::<T>();
        T::visit_generics(&mut named);
        Self { name: T::name(), imports: named.0 }
    }

    /// A type ts-rs cannot describe: a hand-kept one in `from` (relative to ui/src/gen), or,
    /// with no `from`, a marker of the table ([`Download`], [`EventStream`], [`Accepted`]) or a
    /// literal TypeScript type.
    pub fn named(name: &str, from: &str) -> Self {
        let imports = if from.is_empty() { Vec::new() } else { vec![(name.into(), from.into())] };
        Self { name: name.into(), imports }
    }
}

/// The exported types a type names (itself, or those inside a list or an option), with the
/// file each is in.
struct Named(Vec<(String, String)>);

impl ts_rs::TypeVisitor for Named {
    fn visit<T: ts_rs::TS + 'static + ?Sized>(&mut self) {
        if let Some(p) = T::output_path() {
            self.0.push((T::ident(), format!("./{}", p.with_extension("").display())));
        }
    }
}

/// One route as the client sees it.
#[derive(Debug, Clone)]
pub struct Route {
    pub method: &'static str,
    pub path: &'static str,
    /// The handler's path in `http::api` (`tasks::list`): the client's function is named after it.
    pub handler: &'static str,
    pub query: Option<TsType>,
    pub body: Option<TsType>,
    /// The field of the body the path fills in (`run` of `/runs/{id}/merge`).
    pub fill: Option<&'static str>,
    pub answer: TsType,
}

/// `tasks :: list` → `tasksList`.
fn function_name(handler: &str) -> String {
    let mut out = String::new();
    let words = handler.split("::").flat_map(|p| p.trim().split('_')).filter(|w| !w.is_empty());
    for (i, w) in words.enumerate() {
        if i == 0 {
            out.push_str(w);
        } else {
            let mut c = w.chars();
            out.extend(c.next().map(|f| f.to_ascii_uppercase()));
            out.push_str(c.as_str());
        }
    }
    out
}

/// `/api/tasks/{id}` → (`` `/api/tasks/${enc(id)}` ``, [`id`]).
fn template(path: &str) -> (String, Vec<String>) {
    let mut params = Vec::new();
    let mut out = String::from("`");
    for (i, piece) in path.split('{').enumerate() {
        if i == 0 {
            out.push_str(piece);
            continue;
        }
        let (name, rest) = piece.split_once('}').expect("a `{` closes in a route's path");
        out.push_str(&format!("${{enc({name})}}{rest}"));
        params.push(name.to_owned());
    }
    out.push('`');
    (out, params)
}

/// The GUI's client, from the route table: one function per route, calling through the
/// `call` (JSON answers) and `url` (downloads and event streams) the hand-kept `ui/src/api.ts`
/// gives it (auth headers, errors, the base URL stay there).
pub fn client_ts(routes: &[Route]) -> String {
    let mut imports: BTreeMap<String, std::collections::BTreeSet<String>> = BTreeMap::new();
    let mut fns = String::new();
    for r in routes {
        for t in r.query.iter().chain(&r.body).chain([&r.answer]) {
            for (name, file) in &t.imports {
                imports.entry(file.clone()).or_default().insert(name.clone());
            }
        }
        let (url, params) = template(r.path);
        let mut args: Vec<String> = params.iter().map(|p| format!("{p}: string")).collect();
        if let Some(b) = &r.body {
            let ty = match r.fill {
                Some(f) => format!("Omit<{}, \"{f}\">", b.name),
                None => b.name.clone(),
            };
            args.push(format!("body: {ty}"));
        }
        if let Some(q) = &r.query {
            // Any key of a query string may be left out: the server says which it needs.
            args.push(format!("query?: Partial<{}>", q.name));
        }
        let opts = |with_signal: bool| {
            let mut o = Vec::new();
            if r.query.is_some() {
                o.push("query");
            }
            if r.body.is_some() {
                o.push("body");
            }
            if with_signal {
                o.push("signal");
            }
            if o.is_empty() { "{}".to_owned() } else { format!("{{ {} }}", o.join(", ")) }
        };
        let name = function_name(r.handler);
        let doc = format!("    /** `{} {}` */\n", r.method.to_uppercase(), r.path);
        fns.push_str(&doc);
        match r.answer.name.as_str() {
            "Download" | "EventStream" => {
                let q = if r.query.is_some() { ", query" } else { "" };
                fns.push_str(&format!("    {name}: ({}): string => url({url}{q}),\n", args.join(", ")));
            }
            answer => {
                let answer = if answer == "Accepted" { "void" } else { answer };
                let get = r.method == "get";
                if get {
                    args.push("signal?: AbortSignal".into());
                }
                fns.push_str(&format!(
                    "    {name}: ({}) => call<{answer}>('{}', {url}, {}),\n",
                    args.join(", "),
                    r.method.to_uppercase(),
                    opts(get),
                ));
            }
        }
    }
    let mut out = String::from(
        "// The GUI's client of the daemon's API, generated by scripts/gen-types from the route table\n\
         // (crates/tether-server/src/http/routes.rs): one function per route, named after its handler.\n\
         // Do not edit: ui/src/api.ts wraps it (auth, errors, the base URL).\n\n",
    );
    for (file, names) in &imports {
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        out.push_str(&format!("import type {{ {} }} from \"{file}\";\n", names.join(", ")));
    }
    out.push_str(
        "\n/** Sends a request and answers its JSON (or nothing for `void`). */\n\
         export type Call = <T>(method: string, path: string, opts: { query?: object; body?: unknown; signal?: AbortSignal }) => Promise<T>;\n\
         /** A URL of the API with its query. */\n\
         export type Url = (path: string, query?: object) => string;\n\n\
         const enc = encodeURIComponent;\n\n\
         export function client(call: Call, url: Url) {\n  return {\n",
    );
    out.push_str(&fns);
    out.push_str("  };\n}\n\nexport type Client = ReturnType<typeof client>;\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_paths_read_as_typescript() {
        assert_eq!(function_name("tasks :: list"), "tasksList");
        assert_eq!(function_name("sse::run_events"), "sseRunEvents");
        assert_eq!(template("/api/runs/{id}/merge"), ("`/api/runs/${enc(id)}/merge`".into(), vec!["id".into()]));
        assert_eq!(template("/api/tasks"), ("`/api/tasks`".into(), vec![]));
    }
}

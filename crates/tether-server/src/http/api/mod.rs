//! The GUI's JSON API (contract: docs/api.md, route table: [`super::routes`]): one file per area,
//! each handler mapping its path, query and body onto one operation and its result back. The
//! person is the principal on every route ([`super::auth::Person`]).

pub mod agents;
pub mod changes;
pub mod runs;
pub mod sessions;
pub mod settings;
pub mod signals;
pub mod system;
pub mod tasks;
pub mod usage;

/// `?x=1`, `?x=true`, `?x=yes`.
pub(crate) fn flag(v: &Option<String>) -> bool {
    matches!(v.as_deref(), Some("1" | "true" | "yes"))
}

/// A parameter that may repeat (`?status=todo&status=done`, or `status=todo,done`): serde's
/// query parser keeps only one, so it is read from the raw query.
pub(crate) fn repeated(uri: &axum::http::Uri, name: &str) -> Vec<String> {
    let key = format!("{name}=");
    uri.query()
        .unwrap_or("")
        .split('&')
        .filter_map(|kv| kv.strip_prefix(key.as_str()))
        .flat_map(|v| v.split(','))
        .filter(|v| !v.is_empty())
        .map(str::to_owned)
        .collect()
}

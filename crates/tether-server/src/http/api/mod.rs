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
pub mod team;
pub mod trace;
pub mod usage;

/// `?x=1`, `?x=true`, `?x=yes`.
pub(crate) fn flag(v: &Option<String>) -> bool {
    matches!(v.as_deref(), Some("1" | "true" | "yes"))
}

/// A parameter that may repeat (`?status=todo&status=done`, or `status=todo,done`, percent-encoded
/// or not): serde's query parser keeps only one, so the pairs are read whole.
pub(crate) fn repeated(uri: &axum::http::Uri, name: &str) -> Vec<String> {
    let pairs = axum::extract::Query::<Vec<(String, String)>>::try_from_uri(uri).map(|q| q.0).unwrap_or_default();
    pairs
        .into_iter()
        .filter(|(k, _)| k == name)
        .flat_map(|(_, v)| v.split(',').map(str::to_owned).collect::<Vec<_>>())
        .filter(|v| !v.is_empty())
        .collect()
}

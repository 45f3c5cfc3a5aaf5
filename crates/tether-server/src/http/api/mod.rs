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

/// The values of a parameter that may repeat (`?status=todo&status=done`) or list several with
/// commas (`status=todo,done`), each read as a `T` (an unknown one is the caller's `400`).
pub(crate) fn listed<T>(values: &[String]) -> tether_core::Result<Vec<T>>
where
    T: std::str::FromStr<Err = tether_core::Error>,
{
    values.iter().flat_map(|v| v.split(',')).filter(|v| !v.is_empty()).map(str::parse).collect()
}

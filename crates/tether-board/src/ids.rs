//! The board's ids, spelled one way: `T-12`, `S-4`, `R-3`, `SH-2` (a bare number, or a lower-case
//! prefix, is read too). One parse and one format for every kind; the kind is in the type,
//! so a signal id cannot be passed where a run id is wanted.
//!
//! The bottom of the board: depends on nothing but errors.

use std::fmt;
use std::marker::PhantomData;
use std::str::FromStr;

use crate::error::{Error, Result};

/// What kind of thing an [`Id`] names.
pub trait Kind: Copy + Eq + Ord + std::hash::Hash + fmt::Debug + Send + Sync + 'static {
    const PREFIX: &'static str;
    /// Another prefix people type (`#12` for a task, as issue trackers write it).
    const ALT: Option<&'static str> = None;
    /// The error for an id that names nothing (also for one that does not parse).
    fn not_found(given: &str) -> Error;
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TaskKind;
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SignalKind;
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct RunKind;
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SharedKind;

impl Kind for TaskKind {
    const PREFIX: &'static str = "T-";
    const ALT: Option<&'static str> = Some("#");
    fn not_found(given: &str) -> Error {
        Error::TaskNotFound(given.to_owned())
    }
}

impl Kind for SignalKind {
    const PREFIX: &'static str = "S-";
    fn not_found(given: &str) -> Error {
        Error::SignalNotFound(given.to_owned())
    }
}

impl Kind for RunKind {
    const PREFIX: &'static str = "R-";
    fn not_found(given: &str) -> Error {
        Error::RunNotFound(given.to_owned())
    }
}

impl Kind for SharedKind {
    const PREFIX: &'static str = "SH-";
    fn not_found(given: &str) -> Error {
        Error::NotFound(format!("no chat shared with the team as {given:?} (see `tether sessions list --team`)"))
    }
}

/// A board id: a positive number of a kind.
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Id<K: Kind>(i64, PhantomData<K>);

pub type TaskId = Id<TaskKind>;
pub type SignalId = Id<SignalKind>;
pub type RunId = Id<RunKind>;
/// A chat shared with the team.
pub type SharedId = Id<SharedKind>;

impl<K: Kind> Id<K> {
    pub fn new(num: i64) -> Self {
        Id(num, PhantomData)
    }

    /// The row number in the store.
    pub fn num(self) -> i64 {
        self.0
    }

    /// `T-12` (or `S-`, `R-`) or a bare number.
    pub fn parse(s: &str) -> Result<Self> {
        let t = s.trim();
        let lower = K::PREFIX.to_ascii_lowercase();
        let n = t
            .strip_prefix(K::PREFIX)
            .or_else(|| t.strip_prefix(lower.as_str()))
            .or_else(|| K::ALT.and_then(|a| t.strip_prefix(a)))
            .unwrap_or(t);
        n.parse::<i64>().ok().filter(|n| *n > 0).map(Self::new).ok_or_else(|| K::not_found(s))
    }
}

impl<K: Kind> fmt::Display for Id<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", K::PREFIX, self.0)
    }
}

impl<K: Kind> fmt::Debug for Id<K> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl<K: Kind> FromStr for Id<K> {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        Self::parse(s)
    }
}

impl<K: Kind> serde::Serialize for Id<K> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de, K: Kind> serde::Deserialize<'de> for Id<K> {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Self::parse(&s).map_err(serde::de::Error::custom)
    }
}

impl<K: Kind> schemars::JsonSchema for Id<K> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        format!("{}id", K::PREFIX.trim_end_matches('-')).into()
    }

    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({"type": "string", "description": format!("e.g. {}3", K::PREFIX)})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ids_read_every_spelling_and_write_one() {
        for s in ["T-12", "t-12", "12", " T-12 ", "#12"] {
            assert_eq!(TaskId::parse(s).unwrap().to_string(), "T-12");
        }
        assert_eq!(RunId::parse("R-3").unwrap().num(), 3);
        for bad in ["T-0", "S-1x", "", "T--1", "R-3"] {
            assert_eq!(TaskId::parse(bad).unwrap_err().code(), crate::error::ErrorCode::NotFound, "{bad}");
        }
        assert!(matches!(SignalId::parse("nope").unwrap_err(), Error::SignalNotFound(s) if s == "nope"));
        let json = serde_json::to_string(&RunId::new(7)).unwrap();
        assert_eq!(json, "\"R-7\"");
        assert_eq!(serde_json::from_str::<RunId>(&json).unwrap(), RunId::new(7));
    }
}

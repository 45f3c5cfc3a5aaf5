//! Prices per million tokens by model: the table Tether ships (`prices.json`, dated, with its
//! source) under the person's overrides (`usage.prices`).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::board::runs::event::Usage;
use crate::error::{Error, Result};
use crate::settings::UsageSettings;

/// US dollars per million tokens of each kind.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct Price {
    pub input: f64,
    pub output: f64,
    #[serde(default)]
    pub cache_read: f64,
    #[serde(default)]
    pub cache_write: f64,
    /// Other ids Cursor uses for the same model.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(optional, as = "Option<Vec<String>>")]
    pub aliases: Vec<String>,
}

impl Price {
    /// What `u` costs at this price, US dollars.
    pub fn cost(&self, u: &Usage) -> f64 {
        (u.input_tokens as f64 * self.input
            + u.output_tokens as f64 * self.output
            + u.cache_read_tokens as f64 * self.cache_read
            + u.cache_write_tokens as f64 * self.cache_write)
            / 1e6
    }

    pub(crate) fn check(&self, model: &str) -> Result<()> {
        for v in [self.input, self.output, self.cache_read, self.cache_write] {
            if !v.is_finite() || !(0.0..=10_000.0).contains(&v) {
                return Err(Error::invalid("price", format!("{model}: {v} is not a price per million tokens")));
            }
        }
        Ok(())
    }
}

/// The prices in force: the shipped table with the person's overrides.
#[derive(Debug, Clone, Serialize, PartialEq, ts_rs::TS)]
#[ts(export, export_to = "core.ts")]
pub struct PriceTable {
    /// When the shipped table was checked, and where its figures come from.
    pub as_of: String,
    pub source: String,
    pub models: BTreeMap<String, Price>,
    /// Models whose price comes from the settings.
    pub overridden: Vec<String>,
}

#[derive(Deserialize)]
struct Shipped {
    as_of: String,
    source: String,
    models: BTreeMap<String, Price>,
}

impl PriceTable {
    /// The shipped table under `settings`' overrides.
    pub fn new(settings: &UsageSettings) -> Self {
        let shipped: Shipped = serde_json::from_str(include_str!("prices.json")).expect("prices.json is valid");
        let mut models = shipped.models;
        for (m, p) in &settings.prices {
            let key = m.to_ascii_lowercase();
            let mut p = p.clone();
            if p.aliases.is_empty()
                && let Some(old) = models.get(&key)
            {
                p.aliases = old.aliases.clone();
            }
            models.insert(key, p);
        }
        Self {
            as_of: shipped.as_of,
            source: shipped.source,
            models,
            overridden: settings.prices.keys().cloned().collect(),
        }
    }

    /// The price of a model by its id, one of its aliases, or its display name (`Claude 4.5
    /// Sonnet` reads as `claude-4.5-sonnet`); a dated snapshot id (`claude-sonnet-4-5-20250929`,
    /// as Claude Code records it) is its model's.
    pub fn get(&self, model: &str) -> Option<&Price> {
        let key = model.trim().to_ascii_lowercase().replace(' ', "-");
        if key.is_empty() {
            return None;
        }
        let find =
            |k: &str| self.models.get(k).or_else(|| self.models.values().find(|p| p.aliases.iter().any(|a| a == k)));
        find(&key).or_else(|| {
            let (base, date) = key.rsplit_once('-')?;
            (date.len() == 8 && date.bytes().all(|b| b.is_ascii_digit())).then(|| find(base)).flatten()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_setting_overrides_the_shipped_price_and_aliases_find_a_model() {
        let shipped = PriceTable::new(&UsageSettings::default());
        assert!(!shipped.as_of.is_empty() && !shipped.source.is_empty());
        let sonnet = shipped.get("Claude 4.5 Sonnet").expect("a display name is found").clone();
        assert_eq!(shipped.get("sonnet-4.5"), Some(&sonnet));
        assert_eq!(shipped.get("no-such-model"), None);
        assert_eq!(shipped.get("claude-sonnet-4-5-20250929"), Some(&sonnet), "a dated snapshot is its model");
        assert_eq!(shipped.get("claude-sonnet-4-5-2025"), None, "only a whole date");
        let u = Usage { input_tokens: 1_000_000, output_tokens: 100_000, cache_read_tokens: 0, cache_write_tokens: 0 };
        assert!((sonnet.cost(&u) - 4.5).abs() < 1e-9, "{}", sonnet.cost(&u));
        let mut s = UsageSettings::default();
        s.prices.insert(
            "claude-4.5-sonnet".into(),
            Price { input: 1.0, output: 1.0, cache_read: 0.0, cache_write: 0.0, aliases: vec![] },
        );
        let t = PriceTable::new(&s);
        assert!((t.get("sonnet-4.5").unwrap().cost(&u) - 1.1).abs() < 1e-9, "the shipped aliases still lead to it");
        assert_eq!(t.overridden, ["claude-4.5-sonnet"]);
    }
}

//! The bounds of settings that both a flag and the config can set, checked by one function
//! each: the flag's clap value parser and config validation call the same check, so a value
//! the flag refuses is refused in `arev.toml` too (validation parity, docs/architecture.md).

pub use super::error::LimitError;
use super::{Config, ConfigError};
use std::ops::RangeInclusive;
use std::time::Duration;

/// `--passes` / `[review] passes`.
pub const PASSES: RangeInclusive<u32> = 1..=16;
/// `--max-rounds` / `[review] max_rounds`.
pub const MAX_ROUNDS: RangeInclusive<u32> = 1..=50;

fn in_range(v: u32, range: &RangeInclusive<u32>) -> Result<u32, LimitError> {
    if range.contains(&v) {
        Ok(v)
    } else {
        Err(LimitError::OutOfRange {
            value: v,
            min: *range.start(),
            max: *range.end(),
        })
    }
}

/// Enthusiast passes per round.
pub fn check_passes(v: u32) -> Result<u32, LimitError> {
    in_range(v, &PASSES)
}

/// Round ceiling.
pub fn check_max_rounds(v: u32) -> Result<u32, LimitError> {
    in_range(v, &MAX_ROUNDS)
}

/// A spend limit in USD: a positive, finite number.
pub fn check_budget_usd(v: f64) -> Result<f64, LimitError> {
    if v > 0.0 && v.is_finite() {
        Ok(v)
    } else {
        Err(LimitError::NotPositive(v))
    }
}

/// A spend limit in tokens: positive.
pub fn check_budget_tokens(v: u64) -> Result<u64, LimitError> {
    if v > 0 {
        Ok(v)
    } else {
        Err(LimitError::Zero)
    }
}

fn parse<T: std::str::FromStr>(s: &str) -> Result<T, LimitError> {
    s.trim()
        .parse::<T>()
        .map_err(|_| LimitError::NotANumber(s.to_string()))
}

/// clap value parser of `--passes`.
pub fn parse_passes(s: &str) -> Result<u32, LimitError> {
    check_passes(parse(s)?)
}

/// clap value parser of `--max-rounds`.
pub fn parse_max_rounds(s: &str) -> Result<u32, LimitError> {
    check_max_rounds(parse(s)?)
}

/// clap value parser of `--budget-usd`.
pub fn parse_budget_usd(s: &str) -> Result<f64, LimitError> {
    check_budget_usd(parse(s)?)
}

/// clap value parser of `--budget-tokens`.
pub fn parse_budget_tokens(s: &str) -> Result<u64, LimitError> {
    check_budget_tokens(parse(s)?)
}

/// The same checks on the config's values (0 there means "not set": by mode / no limit).
pub(crate) fn check(config: &Config) -> Result<(), ConfigError> {
    let invalid = |key: &str, source: LimitError| ConfigError::Limit {
        key: key.into(),
        source,
    };
    let r = &config.review;
    if r.passes != 0 {
        check_passes(r.passes).map_err(|m| invalid("review.passes", m))?;
    }
    if r.max_rounds != 0 {
        check_max_rounds(r.max_rounds).map_err(|m| invalid("review.max_rounds", m))?;
    }
    let b = &config.budget;
    if b.usd != 0.0 {
        check_budget_usd(b.usd).map_err(|m| invalid("budget.usd", m))?;
    }
    for (model, price) in &config.prices {
        check_price(price).map_err(|source| ConfigError::Price {
            model: model.clone(),
            source,
        })?;
    }
    Ok(())
}

/// The dearest price per million tokens a `[prices]` entry may name.
pub const MAX_PRICE: f64 = 10_000.0;

/// A `[prices]` entry: every rate a finite number of USD per million tokens in
/// 0..=`MAX_PRICE`, input or output above 0.
pub fn check_price(p: &super::ModelPrice) -> Result<(), LimitError> {
    let named = [
        ("input", Some(p.input)),
        ("output", Some(p.output)),
        ("cache_read", p.cache_read),
        ("cache_write", p.cache_write),
    ];
    for (key, v) in named {
        if let Some(v) = v.filter(|v| !(0.0..=MAX_PRICE).contains(v)) {
            return Err(LimitError::Rate {
                key,
                value: v,
                max: MAX_PRICE,
            });
        }
    }
    if p.input <= 0.0 && p.output <= 0.0 {
        return Err(LimitError::Free);
    }
    Ok(())
}

/// A humantime duration, greater than zero (`key` names the setting in the error).
pub(super) fn parse_duration(key: &str, s: &str) -> Result<Duration, ConfigError> {
    let d = humantime::parse_duration(s).map_err(|e| ConfigError::Invalid {
        key: key.into(),
        message: format!("`{s}` is not a duration ({e}); use e.g. \"10m\" or \"30s\""),
    })?;
    if d.is_zero() {
        return Err(ConfigError::Invalid {
            key: key.into(),
            message: "must be greater than zero".into(),
        });
    }
    Ok(d)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn flag_parsers_and_checks_agree() {
        assert_eq!(parse_passes("16"), Ok(16));
        assert!(parse_passes("0").is_err() && parse_passes("17").is_err());
        assert_eq!(parse_max_rounds("50"), Ok(50));
        assert!(parse_max_rounds("1000000").is_err());
        assert!(parse_max_rounds("x").is_err());
        assert_eq!(parse_budget_usd("0.5"), Ok(0.5));
        for bad in ["nan", "NaN", "-1", "0", "inf", "-inf"] {
            assert!(parse_budget_usd(bad).is_err(), "{bad}");
        }
        assert!(parse_budget_tokens("0").is_err());
        assert_eq!(parse_budget_tokens("10"), Ok(10));
    }
}

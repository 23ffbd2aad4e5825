//! How a spend reads when some of its tokens have no known price (docs/configuration.md
//! "Budgets and `[prices]`"): the known part and "price unknown", never `$0` for tokens
//! that were not priced.

/// What a renderer writes for spend it could not price.
pub const PRICE_UNKNOWN: &str = "price unknown";

/// `usd` as `fmt` writes it, when `unpriced` of the `tokens` it was spent on had no known
/// price: `$0.0500 + price unknown` (the known part), `price unknown` when no token was
/// priced, and `fmt(usd)` alone when every token was.
pub fn usd_or_unknown(usd: f64, tokens: u64, unpriced: u64, fmt: impl Fn(f64) -> String) -> String {
    match unpriced {
        0 => fmt(usd),
        u if u >= tokens && usd == 0.0 => PRICE_UNKNOWN.to_string(),
        _ => format!("{} + {PRICE_UNKNOWN}", fmt(usd)),
    }
}

/// `$0.0500`: four decimals, the reports' and progress lines' form.
pub fn usd4(usd: f64) -> String {
    format!("${usd:.4}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unpriced_tokens_never_read_as_zero_dollars() {
        assert_eq!(usd_or_unknown(0.05, 750, 0, usd4), "$0.0500");
        assert_eq!(usd_or_unknown(0.0, 0, 0, usd4), "$0.0000", "nothing spent");
        assert_eq!(
            usd_or_unknown(0.05, 1050, 300, usd4),
            "$0.0500 + price unknown"
        );
        assert_eq!(usd_or_unknown(0.0, 300, 300, usd4), "price unknown");
        // A priced part that cost nothing (a self-hosted model) is still a known part.
        assert_eq!(
            usd_or_unknown(0.0, 900, 300, usd4),
            "$0.0000 + price unknown"
        );
    }
}

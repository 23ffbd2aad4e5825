//! What an agent's tokens cost (docs/contracts.md §19.1, §19.3): a model's price, from
//! `[prices]` or its backend's built-in list prices, and what a usage costs at it.

use super::spec::ModelPrice;
use super::EventFormat;
use crate::records::Usage;
use std::collections::BTreeMap;

/// The price of `model`, run by an agent printing `format`: its `[prices]` entry (the
/// model string as given, else ignoring ASCII case); else its backend's built-in list price
/// by family (Claude Code's: one of no known family as the first, the dearest, so that a
/// budget errs on the safe side). None: a model of a backend without list prices (Codex,
/// Gemini) and without an entry, whose spend cannot be priced.
pub fn price_of(
    format: EventFormat,
    model: &str,
    prices: &BTreeMap<String, ModelPrice>,
) -> Option<ModelPrice> {
    let listed = prices.get(model).or_else(|| {
        prices
            .iter()
            .find(|(m, _)| m.eq_ignore_ascii_case(model))
            .map(|(_, p)| p)
    });
    if let Some(p) = listed {
        return Some(*p);
    }
    let list = format.profile().list_prices;
    let lower = model.to_ascii_lowercase();
    list.iter()
        .find(|(family, _)| lower.contains(family))
        .or(list.first())
        .map(|(_, p)| *p)
}

/// What `usage` costs at `price`: 0 without one, which the dispatch then records as
/// `unpriced` (unknown, never $0: docs/configuration.md "Budgets and `[prices]`").
pub fn cost_usd(price: Option<&ModelPrice>, usage: &Usage) -> f64 {
    let Some(price) = price else {
        return 0.0;
    };
    let [input, output, read, write] = price.rates();
    let per_million = |n: u64, usd: f64| n as f64 * usd / 1e6;
    per_million(usage.input_tokens, input)
        + per_million(usage.output_tokens, output)
        + per_million(usage.cache_creation_input_tokens, write)
        + per_million(usage.cache_read_input_tokens, read)
}

/// What `usage` costs at the built-in list price of `model`, an agent of `format` (no
/// `[prices]` table): a Claude model by family, 0 for a Codex or Gemini model.
pub fn list_price_usd(format: EventFormat, model: &str, usage: &Usage) -> f64 {
    cost_usd(price_of(format, model, &BTreeMap::new()).as_ref(), usage)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backends::{decode_all, Fold};
    use crate::records::ProcessEnd;
    use serde_json::Value;

    fn tally(format: EventFormat, stream: &[u8]) -> Usage {
        decode_all(format, stream, "m").usage
    }

    const READ: &str = r#"{"type":"assistant","message":{"id":"msg_1","content":[{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"/x"}}],"usage":{"input_tokens":0,"cache_creation_input_tokens":3578,"cache_read_input_tokens":0,"output_tokens":1}}}"#;
    const THINK: &str = r#"{"type":"assistant","message":{"id":"msg_2","content":[{"type":"text","text":"let me see"}],"usage":{"input_tokens":5,"cache_creation_input_tokens":27,"cache_read_input_tokens":3578,"output_tokens":1}}}"#;
    const GREP: &str = r#"{"type":"assistant","message":{"id":"msg_2","content":[{"type":"tool_use","id":"t2","name":"Grep","input":{"pattern":"fn"}}],"usage":{"input_tokens":5,"cache_creation_input_tokens":27,"cache_read_input_tokens":3578,"output_tokens":1}}}"#;
    const RESULT: &str = r#"{"type":"result","subtype":"success","is_error":false,"result":"{}","total_cost_usd":0.02,"usage":{"input_tokens":5,"cache_creation_input_tokens":3605,"cache_read_input_tokens":3578,"output_tokens":24}}"#;

    #[test]
    fn claude_messages_count_once_by_id_with_their_blocks_as_output() {
        let stream = format!("{READ}\n{THINK}\n{GREP}\n");
        let u = tally(EventFormat::Claude, stream.as_bytes());
        assert_eq!(u.input_tokens, 5, "msg_2's two blocks count once");
        assert_eq!(u.cache_creation_input_tokens, 3578 + 27);
        assert_eq!(u.cache_read_input_tokens, 3578);
        // Each message's output: its blocks' bytes / 4, not the `1` of message_start.
        let block = |line: &str| {
            let v: Value = serde_json::from_str(line).unwrap();
            v["message"]["content"].to_string().len() as u64
        };
        let expected = block(READ).div_ceil(4) + (block(THINK) + block(GREP)).div_ceil(4);
        assert_eq!(u.output_tokens, expected);
    }

    #[test]
    fn a_result_replaces_the_messages_before_it() {
        let stream = format!("{READ}\n{THINK}\n{RESULT}\n{READ}");
        let mut t = Fold::new(EventFormat::Claude, "m", None);
        // Fed in pieces that split lines: only complete lines count until the end.
        for chunk in stream.as_bytes().chunks(37) {
            t.feed(chunk);
        }
        assert_eq!(
            t.usage().cache_creation_input_tokens,
            3605,
            "{:?}",
            t.usage()
        );
        let u = t.finish(&ProcessEnd::Exited { code: 0 }, b"").usage;
        assert_eq!(u.cache_creation_input_tokens, 3605 + 3578);
        assert_eq!(u.cache_read_input_tokens, 3578);
        assert!(u.output_tokens > 24);
    }

    #[test]
    fn a_request_sent_and_not_answered_counts_from_its_tool_results() {
        let tool_result = r#"{"type":"user","message":{"role":"user","content":[{"tool_use_id":"t1","type":"tool_result","content":"1\tfn main() {}"}]}}"#;
        let read = tally(EventFormat::Claude, READ.as_bytes());
        let stream = format!("{READ}\n{tool_result}\n");
        let u = tally(EventFormat::Claude, stream.as_bytes());
        let results: Value = serde_json::from_str(tool_result).unwrap();
        let results = results["message"]["content"].to_string().len() as u64;
        // The first request's, then the second: its prefix read back, the answer and the
        // tool result written.
        assert_eq!(u.cache_read_input_tokens, 3578);
        assert_eq!(
            u.cache_creation_input_tokens,
            3578 + read.output_tokens + results.div_ceil(4)
        );
        // Its message replaces the estimate.
        let stream = format!("{READ}\n{tool_result}\n{THINK}\n");
        let u = tally(EventFormat::Claude, stream.as_bytes());
        assert_eq!(u.cache_creation_input_tokens, 3578 + 27);
        // A user event before any message (the prompt) is no request of its own.
        let u = tally(EventFormat::Claude, format!("{tool_result}\n").as_bytes());
        assert_eq!(u, Usage::default());
    }

    #[test]
    fn garbage_and_odd_shapes_count_nothing() {
        let stream = "not json\n{\"type\":\"assistant\",\"message\":[1]}\n{\"type\":\"assistant\",\"message\":{\"usage\":{\"input_tokens\":\"x\",\"output_tokens\":-1}}}\n";
        let u = tally(EventFormat::Claude, stream.as_bytes());
        assert_eq!(u, Usage::default());
    }

    #[test]
    fn codex_turns_add_up_and_gemini_reports_once() {
        let turn = r#"{"type":"turn.completed","usage":{"input_tokens":300,"cached_input_tokens":30,"output_tokens":60}}"#;
        let u = tally(EventFormat::Codex, format!("{turn}\n{turn}\n").as_bytes());
        assert_eq!(
            (u.input_tokens, u.cache_read_input_tokens, u.output_tokens),
            (540, 60, 120)
        );
        let result = r#"{"type":"result","status":"success","stats":{"total_tokens":360,"input_tokens":300,"output_tokens":60,"cached":10}}"#;
        let u = tally(EventFormat::Gemini, result.as_bytes());
        assert_eq!(
            (u.input_tokens, u.cache_read_input_tokens, u.output_tokens),
            (290, 10, 60)
        );
    }

    #[test]
    fn claude_models_are_priced_by_family() {
        let u = Usage {
            input_tokens: 1_000_000,
            output_tokens: 1_000_000,
            cache_creation_input_tokens: 1_000_000,
            cache_read_input_tokens: 1_000_000,
        };
        let opus = list_price_usd(EventFormat::Claude, "claude-opus-5-5", &u);
        assert!((opus - (4.0 + 20.0 + 5.0 + 0.2)).abs() < 1e-9, "{opus}");
        let sonnet = list_price_usd(EventFormat::Claude, "sonnet", &u);
        assert!((sonnet - (2.0 + 10.0 + 2.5 + 0.1)).abs() < 1e-9, "{sonnet}");
        assert_eq!(
            list_price_usd(EventFormat::Claude, "mystery", &u),
            opus,
            "unknown: the dearest"
        );
        assert_eq!(list_price_usd(EventFormat::Codex, "gpt-5", &u), 0.0);
    }
}

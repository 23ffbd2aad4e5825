//! What an agent has spent, summed from the per-message usage in its event stream (SPEC
//! §19.1, §19.3): the running spend of an agent while its events arrive, and the recorded
//! spend of a dispatch that printed no result (failed, timed out, cancelled), priced at
//! the model's list price.
//!
//! Claude Code prints each content block of a message as an `assistant` event carrying the
//! message's usage as it stood when the message started (input and cache tokens exact,
//! `output_tokens` 1): the tally keeps each message once (by `message.id`) and counts its
//! output as the larger of the reported count and the blocks' size (≈ 4 bytes a token). A
//! `user` event after the last message (its tool results) means the CLI has sent the next
//! request: until its message arrives, that request counts as the last one's input read
//! back from the cache plus the last answer and the tool results written to it (≈ 4 bytes
//! a token) — the API bills a request once it is sent, also when the agent is stopped
//! before the answer. A `result` event's `usage` is the session's total so far and
//! replaces the messages before it. Codex reports usage per `turn.completed`, Gemini once
//! in its `result` `stats`.

use super::claude::ClaudeUsage;
use super::events::{lax, lax_object, EventLines};
use super::{EventFormat, Usage};
use crate::config::ModelPrice;
use serde::Deserialize;
use serde_json::Value;
use std::collections::BTreeMap;

/// The running usage of one agent, fed its stdout as it arrives.
#[derive(Debug)]
pub struct UsageTally {
    format: EventFormat,
    /// The usage up to the last `result` (Claude, Gemini) or the sum of the completed turns
    /// (Codex).
    settled: Usage,
    /// Claude messages since the last `result`, by message id.
    messages: BTreeMap<String, Message>,
    /// The id of the last Claude message.
    last: Option<String>,
    /// Bytes of the `user` events (tool results) since the last Claude message: the CLI
    /// has sent a request not answered yet (None: no such request).
    pending: Option<u64>,
    /// The unfinished last line.
    partial: Vec<u8>,
}

/// One Claude message: its usage (the largest count seen per field) and the bytes of its
/// content blocks.
#[derive(Debug, Default)]
struct Message {
    usage: Usage,
    content_bytes: u64,
}

impl Message {
    /// Every input token of its request, however billed.
    fn input(&self) -> u64 {
        self.usage.input_tokens
            + self.usage.cache_creation_input_tokens
            + self.usage.cache_read_input_tokens
    }

    fn usage(&self) -> Usage {
        Usage {
            output_tokens: self.usage.output_tokens.max(self.content_bytes.div_ceil(4)),
            ..self.usage.clone()
        }
    }
}

/// The lines of a Claude stream the tally reads.
#[derive(Debug, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum ClaudeLine {
    Assistant {
        #[serde(default, deserialize_with = "lax_object")]
        message: Option<ClaudeMessage>,
    },
    User {
        #[serde(default, deserialize_with = "lax_object")]
        message: Option<UserMessage>,
    },
    Result {
        #[serde(default, deserialize_with = "lax_object")]
        usage: Option<ClaudeUsage>,
    },
    #[serde(other)]
    Other,
}

#[derive(Debug, Deserialize)]
struct UserMessage {
    /// Verbatim: only its size counts.
    #[serde(default)]
    content: Value,
}

#[derive(Debug, Deserialize)]
struct ClaudeMessage {
    #[serde(default, deserialize_with = "lax")]
    id: Option<String>,
    #[serde(default, deserialize_with = "lax_object")]
    usage: Option<ClaudeUsage>,
    /// Verbatim: only its size counts.
    #[serde(default)]
    content: Value,
}

fn max_into(total: &mut Usage, u: &Usage) {
    total.input_tokens = total.input_tokens.max(u.input_tokens);
    total.output_tokens = total.output_tokens.max(u.output_tokens);
    total.cache_creation_input_tokens = total
        .cache_creation_input_tokens
        .max(u.cache_creation_input_tokens);
    total.cache_read_input_tokens = total.cache_read_input_tokens.max(u.cache_read_input_tokens);
}

impl UsageTally {
    pub fn new(format: EventFormat) -> Self {
        Self {
            format,
            settled: Usage::default(),
            messages: BTreeMap::new(),
            last: None,
            pending: None,
            partial: Vec::new(),
        }
    }

    /// The usage of a whole event stream.
    pub fn of(format: EventFormat, events: &[u8]) -> Usage {
        let mut t = Self::new(format);
        t.feed(events);
        t.finish();
        t.usage()
    }

    /// More of the stream: each complete line is read; the rest waits for its newline.
    pub fn feed(&mut self, bytes: &[u8]) {
        self.partial.extend_from_slice(bytes);
        let Some(end) = self.partial.iter().rposition(|b| *b == b'\n') else {
            return;
        };
        let lines: Vec<u8> = self.partial.drain(..=end).collect();
        for line in lines.split(|b| *b == b'\n') {
            self.line(line);
        }
    }

    /// The stream ended: its last line counts without a newline.
    pub fn finish(&mut self) {
        let last = std::mem::take(&mut self.partial);
        self.line(&last);
    }

    fn line(&mut self, line: &[u8]) {
        if line.trim_ascii().is_empty() {
            return;
        }
        match self.format {
            EventFormat::Claude => self.claude_line(line),
            EventFormat::Codex => {
                if let Some(u) = super::codex::turn_usage(line) {
                    self.settled += &u;
                }
            }
            EventFormat::Gemini => {
                if let Some(u) = super::gemini::result_usage(line) {
                    self.settled = u;
                }
            }
        }
    }

    fn claude_line(&mut self, line: &[u8]) {
        match EventLines::<ClaudeLine>::new(line).next() {
            Some(ClaudeLine::Assistant { message: Some(m) }) => {
                // A message without an id cannot be told from the others: each counts.
                let id = m.id.unwrap_or_else(|| format!("#{}", self.messages.len()));
                let entry = self.messages.entry(id.clone()).or_default();
                max_into(&mut entry.usage, &m.usage.unwrap_or_default().into());
                entry.content_bytes += size(&m.content);
                self.last = Some(id);
                self.pending = None;
            }
            Some(ClaudeLine::User { message: Some(m) }) if self.last.is_some() => {
                *self.pending.get_or_insert(0) += size(&m.content);
            }
            Some(ClaudeLine::Result { usage }) => {
                self.settled = usage.unwrap_or_default().into();
                self.messages.clear();
                (self.last, self.pending) = (None, None);
            }
            Some(
                ClaudeLine::Assistant { message: None }
                | ClaudeLine::User { .. }
                | ClaudeLine::Other,
            )
            | None => {}
        }
    }

    /// The usage so far.
    pub fn usage(&self) -> Usage {
        let mut u = self.settled.clone();
        for m in self.messages.values() {
            u += &m.usage();
        }
        if let Some(sent) = self.unanswered() {
            u += &sent;
        }
        u
    }

    /// The request the CLI sent after the last message and that has no answer yet: the
    /// last request's input read from the cache, the last answer and the tool results
    /// written to it.
    fn unanswered(&self) -> Option<Usage> {
        let tool_results = self.pending?;
        let last = self.messages.get(self.last.as_deref()?)?;
        Some(Usage {
            cache_read_input_tokens: last.input(),
            cache_creation_input_tokens: last.usage().output_tokens + tool_results.div_ceil(4),
            ..Usage::default()
        })
    }
}

/// Bytes of a JSON value as sent (0 for an absent one).
fn size(v: &Value) -> u64 {
    match v {
        Value::Null => 0,
        v => v.to_string().len() as u64,
    }
}

/// List prices in USD per million tokens: (family, input, output, cache write, cache
/// read). Claude Code 2.1.330's own table for the models the tier aliases resolve to
/// (`claude-opus-5-5`, `claude-sonnet-5-5`, `claude-haiku-5-5`), which gives the
/// `total_cost_usd` of every answered dispatch: checked against the real CLI by
/// tests/integration/real_claude.rs (`list_prices_are_the_clis_own`).
const CLAUDE_PRICES: &[(&str, [f64; 4])] = &[
    ("opus", [4.0, 20.0, 5.0, 0.2]),
    ("sonnet", [2.0, 10.0, 2.5, 0.1]),
    ("haiku", [0.1, 0.5, 0.125, 0.01]),
];

/// The price of `model`, run by an agent printing `format`: its `[prices]` entry (the
/// model string as given, else ignoring ASCII case); else, for a Claude model, its
/// family's (one of no known family as Opus, the dearest: a budget errs on the safe side).
/// None: a Codex or Gemini model without an entry, whose spend cannot be priced.
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
    if format != EventFormat::Claude {
        return None;
    }
    let lower = model.to_ascii_lowercase();
    let [input, output, write, read] = CLAUDE_PRICES
        .iter()
        .find(|(family, _)| lower.contains(family))
        .map_or(CLAUDE_PRICES[0].1, |(_, p)| *p);
    Some(ModelPrice {
        input,
        output,
        cache_read: Some(read),
        cache_write: Some(write),
    })
}

/// What `usage` costs at `price` (0 without one).
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

    const READ: &str = r#"{"type":"assistant","message":{"id":"msg_1","content":[{"type":"tool_use","id":"t1","name":"Read","input":{"file_path":"/x"}}],"usage":{"input_tokens":0,"cache_creation_input_tokens":3578,"cache_read_input_tokens":0,"output_tokens":1}}}"#;
    const THINK: &str = r#"{"type":"assistant","message":{"id":"msg_2","content":[{"type":"text","text":"let me see"}],"usage":{"input_tokens":5,"cache_creation_input_tokens":27,"cache_read_input_tokens":3578,"output_tokens":1}}}"#;
    const GREP: &str = r#"{"type":"assistant","message":{"id":"msg_2","content":[{"type":"tool_use","id":"t2","name":"Grep","input":{"pattern":"fn"}}],"usage":{"input_tokens":5,"cache_creation_input_tokens":27,"cache_read_input_tokens":3578,"output_tokens":1}}}"#;
    const RESULT: &str = r#"{"type":"result","subtype":"success","is_error":false,"result":"{}","total_cost_usd":0.02,"usage":{"input_tokens":5,"cache_creation_input_tokens":3605,"cache_read_input_tokens":3578,"output_tokens":24}}"#;

    #[test]
    fn claude_messages_count_once_by_id_with_their_blocks_as_output() {
        let stream = format!("{READ}\n{THINK}\n{GREP}\n");
        let u = UsageTally::of(EventFormat::Claude, stream.as_bytes());
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
        let mut t = UsageTally::new(EventFormat::Claude);
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
        t.finish();
        let u = t.usage();
        assert_eq!(u.cache_creation_input_tokens, 3605 + 3578);
        assert_eq!(u.cache_read_input_tokens, 3578);
        assert!(u.output_tokens > 24);
    }

    #[test]
    fn a_request_sent_and_not_answered_counts_from_its_tool_results() {
        let tool_result = r#"{"type":"user","message":{"role":"user","content":[{"tool_use_id":"t1","type":"tool_result","content":"1\tfn main() {}"}]}}"#;
        let read = UsageTally::of(EventFormat::Claude, READ.as_bytes());
        let stream = format!("{READ}\n{tool_result}\n");
        let u = UsageTally::of(EventFormat::Claude, stream.as_bytes());
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
        let u = UsageTally::of(EventFormat::Claude, stream.as_bytes());
        assert_eq!(u.cache_creation_input_tokens, 3578 + 27);
        // A user event before any message (the prompt) is no request of its own.
        let u = UsageTally::of(EventFormat::Claude, format!("{tool_result}\n").as_bytes());
        assert_eq!(u, Usage::default());
    }

    #[test]
    fn garbage_and_odd_shapes_count_nothing() {
        let stream = "not json\n{\"type\":\"assistant\",\"message\":[1]}\n{\"type\":\"assistant\",\"message\":{\"usage\":{\"input_tokens\":\"x\",\"output_tokens\":-1}}}\n";
        let u = UsageTally::of(EventFormat::Claude, stream.as_bytes());
        assert_eq!(u, Usage::default());
    }

    #[test]
    fn codex_turns_add_up_and_gemini_reports_once() {
        let turn = r#"{"type":"turn.completed","usage":{"input_tokens":300,"cached_input_tokens":30,"output_tokens":60}}"#;
        let u = UsageTally::of(EventFormat::Codex, format!("{turn}\n{turn}\n").as_bytes());
        assert_eq!(
            (u.input_tokens, u.cache_read_input_tokens, u.output_tokens),
            (540, 60, 120)
        );
        let result = r#"{"type":"result","status":"success","stats":{"total_tokens":360,"input_tokens":300,"output_tokens":60,"cached":10}}"#;
        let u = UsageTally::of(EventFormat::Gemini, result.as_bytes());
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

    #[test]
    fn a_prices_table_prices_any_model_and_wins_over_the_family() {
        let (config, _) = crate::config::load(&crate::config::ConfigSources::default()).unwrap();
        let prices = &config.prices;
        let u = Usage {
            input_tokens: 1_000_000,
            output_tokens: 1_000_000,
            cache_creation_input_tokens: 0,
            cache_read_input_tokens: 1_000_000,
        };
        // The default tier maps' Codex and Gemini models have a default price.
        for backend in [
            crate::config::BackendKind::Codex,
            crate::config::BackendKind::Gemini,
        ] {
            let models = crate::config::default_models(backend);
            let format = backend.native_format().unwrap();
            for tier in [
                crate::findings::Tier::Haiku,
                crate::findings::Tier::Sonnet,
                crate::findings::Tier::Opus,
            ] {
                let m = models.get(tier);
                let p = price_of(format, m, prices).unwrap_or_else(|| panic!("{m}: no price"));
                assert!(cost_usd(Some(&p), &u) > 0.0, "{m}");
            }
        }
        let gpt = price_of(EventFormat::Codex, "GPT-5.5", prices).unwrap();
        assert!((cost_usd(Some(&gpt), &u) - (5.0 + 30.0 + 0.5)).abs() < 1e-9);
        assert_eq!(
            price_of(EventFormat::Gemini, "gemini-9-ultra", prices),
            None
        );
        assert_eq!(cost_usd(None, &u), 0.0);
        // An entry wins, for a Claude model too; its cache prices default to input.
        let mut mine = BTreeMap::new();
        let cheap = ModelPrice {
            input: 1.0,
            output: 2.0,
            cache_read: None,
            cache_write: None,
        };
        mine.insert("opus".to_string(), cheap);
        mine.insert("local-coder".to_string(), cheap);
        let opus = price_of(EventFormat::Claude, "opus", &mine).unwrap();
        assert!((cost_usd(Some(&opus), &u) - (1.0 + 2.0 + 1.0)).abs() < 1e-9);
        assert!(price_of(EventFormat::Codex, "local-coder", &mine).is_some());
        assert!(
            price_of(EventFormat::Claude, "sonnet", &mine).is_some(),
            "by family"
        );
    }
}

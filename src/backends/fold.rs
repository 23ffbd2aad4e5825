//! The one fold over an agent's events as they arrive: its stdout, fed in chunks straight
//! from the supervisor's pipe reader, is split into lines, each decoded by the backend's
//! [`Decoder`] into [`AgentEvent`]s, folded into the tool uses (for the gates), the running
//! usage (for the budget), the first retry of a permanent error (the early stop), and once
//! the agent has ended the result and its fault.
//!
//! Lines are read as `backends::lines` says (blank ones skipped, those that are no JSON
//! object counted as malformed); the text after the last newline is a line once the stream
//! has ended.

use super::event::{AgentEvent, Decoder};
use super::lines::{line, Line};
use super::price::cost_usd;
use super::spec::ModelPrice;
use super::EventFormat;
use crate::records::{Fault, FaultClass, ProcessEnd, ResultEvent, StreamedSpend, ToolUse, Usage};
use std::collections::HashSet;

/// The fold of one agent's stream.
pub struct Fold {
    decoder: Box<dyn Decoder>,
    reports_cost: bool,
    price: Option<ModelPrice>,
    /// The unfinished last line.
    partial: Vec<u8>,
    seen: HashSet<String>,
    tool_uses: Vec<ToolUse>,
    usage: Usage,
    result: Option<(ResultEvent, Option<Fault>)>,
    /// The last retry or error the CLI reported.
    last_error: Option<Fault>,
    permanent_retry: Option<Fault>,
    malformed: u64,
    events: Vec<AgentEvent>,
}

/// What a whole stream folded into.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Folded {
    /// Tool uses, the first of each id, in order.
    pub tool_uses: Vec<ToolUse>,
    /// The result (priced at the model's price for a CLI that reports no cost).
    pub result: Option<ResultEvent>,
    /// The fault the events (and exit) name.
    pub fault: Option<Fault>,
    /// The usage the events show.
    pub usage: Usage,
    /// Without a result: what the events show was spent.
    pub streamed: Option<StreamedSpend>,
    /// The model has no price and the CLI reports no cost: the cost is unknown.
    pub unpriced: bool,
    /// Lines that were not a JSON object.
    pub malformed: u64,
    /// The first retry of a permanent API error, if the CLI started one.
    pub permanent_retry: Option<Fault>,
}

impl Fold {
    /// The fold of a stream in `format` by `model`, priced at `price`.
    pub fn new(format: EventFormat, model: &str, price: Option<ModelPrice>) -> Self {
        let backend = format.backend();
        Self {
            decoder: backend.decoder(model),
            reports_cost: backend.profile().reports_cost,
            price,
            partial: Vec::new(),
            seen: HashSet::new(),
            tool_uses: Vec::new(),
            usage: Usage::default(),
            result: None,
            last_error: None,
            permanent_retry: None,
            malformed: 0,
            events: Vec::new(),
        }
    }

    /// More of the stream: each complete line is decoded; the rest waits for its newline.
    pub fn feed(&mut self, bytes: &[u8]) {
        let Some(end) = bytes.iter().rposition(|b| *b == b'\n') else {
            self.partial.extend_from_slice(bytes);
            return;
        };
        let mut first = std::mem::take(&mut self.partial);
        let (complete, rest) = bytes.split_at(end + 1);
        let mut lines = complete.split(|b| *b == b'\n');
        if let Some(head) = lines.next() {
            first.extend_from_slice(head);
            self.line(&first);
        }
        for line in lines {
            self.line(line);
        }
        self.partial.extend_from_slice(rest);
    }

    /// The usage so far.
    pub fn usage(&self) -> &Usage {
        &self.usage
    }

    /// Its running spend: the usage so far at the model's price; None without a price
    /// (the spend is unknown, never $0).
    pub fn spend_usd(&self) -> Option<f64> {
        self.price.as_ref().map(|p| cost_usd(Some(p), &self.usage))
    }

    /// Whether its cost is unknown: the model has no price and the CLI reports none.
    fn unpriced(&self) -> bool {
        self.price.is_none() && !self.reports_cost
    }

    /// The first retry of a permanent API error: the agent should be stopped now instead of
    /// waiting out the CLI's own retries.
    pub fn permanent_retry(&self) -> Option<&Fault> {
        self.permanent_retry.as_ref()
    }

    /// The stream has ended and the process with `end` (its `stderr`).
    pub fn finish(mut self, end: &ProcessEnd, stderr: &[u8]) -> Folded {
        let last = std::mem::take(&mut self.partial);
        self.line(&last);
        let mut events = std::mem::take(&mut self.events);
        self.decoder.end(end, stderr, &mut events);
        self.absorb(events);
        let unpriced = self.unpriced();
        let (result, fault) = match self.result {
            Some((mut r, fault)) => {
                if !self.reports_cost {
                    r.total_cost_usd = cost_usd(self.price.as_ref(), &r.usage);
                }
                (Some(r), fault)
            }
            None => (None, self.last_error),
        };
        let streamed = (result.is_none() && self.usage.total() > 0).then(|| StreamedSpend {
            cost_usd: cost_usd(self.price.as_ref(), &self.usage),
            usage: self.usage.clone(),
        });
        Folded {
            unpriced,
            tool_uses: self.tool_uses,
            result,
            fault,
            usage: self.usage,
            streamed,
            malformed: self.malformed,
            permanent_retry: self.permanent_retry,
        }
    }

    fn line(&mut self, raw: &[u8]) {
        let object = match line(raw) {
            Line::Blank => return,
            Line::Malformed => {
                self.malformed += 1;
                return;
            }
            Line::Object(object) => object,
        };
        let mut events = std::mem::take(&mut self.events);
        self.decoder.event(object, &mut events);
        self.absorb(std::mem::take(&mut events));
        self.events = events;
    }

    fn absorb(&mut self, events: Vec<AgentEvent>) {
        for e in events {
            match e {
                AgentEvent::ToolUse(t) => {
                    if self.seen.insert(t.id.clone()) {
                        self.tool_uses.push(t);
                    }
                }
                AgentEvent::Usage(u) => self.usage = u,
                AgentEvent::Retry(f) => {
                    if f.class == FaultClass::Permanent && self.permanent_retry.is_none() {
                        self.permanent_retry = Some(f.clone());
                    }
                    self.last_error = Some(f);
                }
                AgentEvent::Error(f) => self.last_error = Some(f),
                AgentEvent::Text(_) => {}
                AgentEvent::Result { result, fault } => self.result = Some((result, fault)),
            }
        }
    }
}

/// A whole stream in `format`, by `model`, unpriced, its process ended with exit code 0.
pub fn decode_all(format: EventFormat, stdout: &[u8], model: &str) -> Folded {
    decode_ended(format, stdout, model, &ProcessEnd::Exited { code: 0 }, b"")
}

/// A whole stream in `format`, by `model`, unpriced, its process ended with `end`.
pub fn decode_ended(
    format: EventFormat,
    stdout: &[u8],
    model: &str,
    end: &ProcessEnd,
    stderr: &[u8],
) -> Folded {
    let mut fold = Fold::new(format, model, None);
    fold.feed(stdout);
    fold.finish(end, stderr)
}

/// The tool uses, result and count of malformed lines of a whole stream (the tests' view).
#[cfg(test)]
pub(crate) fn parse_events(
    format: EventFormat,
    stdout: &[u8],
) -> (Vec<ToolUse>, Option<ResultEvent>, u64) {
    let f = decode_all(format, stdout, "m");
    (f.tool_uses, f.result, f.malformed)
}

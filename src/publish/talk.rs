//! The conversation on arev's own inline threads (pure): what the forge says people did —
//! replies, 👎 reactions, resolution — turned into dispositions (a finding dismissed by
//! whom, how and why), and arev's own earlier replies found by their marker so that no event
//! is answered twice. Everything here came from the forge: logins are validated, reasons
//! are cut to one short line without control characters, and only people allowed to
//! dismiss (write access by default, `[publish] dismiss_by`) count.

use serde::{Deserialize, Serialize};

pub use crate::config::DismissBy;

impl From<&Dismissal> for super::model::DismissalRecord {
    fn from(d: &Dismissal) -> Self {
        Self {
            fingerprint: d.fingerprint.clone(),
            by: d.by.clone(),
            kind: d.kind.as_str().to_string(),
            reason: d.reason.clone(),
        }
    }
}

/// How a finding was dismissed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DismissKind {
    /// `arev: false-positive <reason>`.
    FalsePositive,
    /// `arev: wont-fix <reason>`.
    WontFix,
    /// `arev: ack`.
    Ack,
    /// A 👎 reaction on arev's comment.
    ThumbsDown,
    /// The thread resolved (by someone else than arev) while the finding is still raised.
    Resolved,
}

impl DismissKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::FalsePositive => "false-positive",
            Self::WontFix => "wont-fix",
            Self::Ack => "ack",
            Self::ThumbsDown => "thumbs-down",
            Self::Resolved => "resolved",
        }
    }
}

/// A dismissal read from the forge.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Dismissal {
    pub fingerprint: String,
    /// The login of the person who dismissed it (validated).
    pub by: String,
    pub kind: DismissKind,
    /// One line, at most [`MAX_REASON_CHARS`] characters, no control characters.
    pub reason: String,
}

/// A person as the forge names them, and whether they may dismiss.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Voice {
    pub login: String,
    pub allowed: bool,
}

/// A reply in one of arev's threads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    pub author: Voice,
    /// Written by the identity arev publishes as.
    pub mine: bool,
    pub body: String,
}

/// What the forge reports about one of arev's threads besides its first comment.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Talk {
    /// GitHub's review-thread node id (GraphQL) / GitLab's discussion id: what resolving
    /// names. None when the forge did not say (the thread is then never resolved by arev).
    pub thread: Option<String>,
    pub replies: Vec<Reply>,
    /// Those who reacted 👎 to arev's comment.
    pub thumbs_down: Vec<Voice>,
    pub resolved: bool,
    /// Who resolved it (None: unknown, or arev itself).
    pub resolved_by: Option<Voice>,
}

/// An event arev answers in a thread, once.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event {
    /// The finding is gone and the forge's diff changed its line: "Fixed in <sha>".
    Fixed,
    /// Someone allowed dismissed it.
    Dismissed,
}

impl Event {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Fixed => "fixed",
            Self::Dismissed => "dismissed",
        }
    }
}

/// The marker ending each of arev's replies: `<!-- arev:reply=<event> fp=<fingerprint> -->`.
pub fn reply_marker(event: Event, fingerprint: &str) -> String {
    format!("<!-- arev:reply={} fp={fingerprint} -->", event.as_str())
}

impl Talk {
    /// Whether arev already answered `event` in this thread (its own reply with the marker).
    pub fn answered(&self, event: Event, fingerprint: &str) -> bool {
        let m = reply_marker(event, fingerprint);
        self.replies.iter().any(|r| r.mine && r.body.contains(&m))
    }

    /// The dismissal this thread holds for `fingerprint`, if anyone allowed dismissed it: the
    /// first `arev:` command reply, else the first 👎, else a resolution by someone else.
    pub fn dismissal(&self, fingerprint: &str) -> Option<Dismissal> {
        let make = |v: &Voice, kind, reason: String| Dismissal {
            fingerprint: fingerprint.to_string(),
            by: v.login.clone(),
            kind,
            reason,
        };
        for r in self.replies.iter().filter(|r| !r.mine && r.author.allowed) {
            if let Some((kind, reason)) = parse_command(&r.body) {
                return Some(make(&r.author, kind, reason));
            }
        }
        if let Some(v) = self.thumbs_down.iter().find(|v| v.allowed) {
            return Some(make(v, DismissKind::ThumbsDown, "👎".into()));
        }
        match &self.resolved_by {
            Some(v) if self.resolved && v.allowed => {
                Some(make(v, DismissKind::Resolved, "resolved the thread".into()))
            }
            _ => None,
        }
    }
}

/// The longest reason kept from a reply.
pub const MAX_REASON_CHARS: usize = 200;

/// The most characters of a reply arev reads for a command.
const MAX_COMMAND_CHARS: usize = 1_000;

/// One line of forge text made safe to keep: control characters and line breaks become
/// spaces, whitespace is collapsed, at most `max` characters (an ellipsis when cut).
pub fn one_line(s: &str, max: usize) -> String {
    let flat: String = s
        .chars()
        .take(max.saturating_mul(4))
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    let words = flat.split_whitespace().collect::<Vec<_>>().join(" ");
    if words.chars().count() > max {
        let mut cut: String = words.chars().take(max.saturating_sub(1)).collect();
        cut.push('…');
        cut
    } else {
        words
    }
}

/// A dismissal command at the start of a reply: `arev: false-positive <reason>`,
/// `arev: wont-fix <reason>` (a reason is required) or `arev: ack [<note>]`.
pub fn parse_command(body: &str) -> Option<(DismissKind, String)> {
    let head: String = body.chars().take(MAX_COMMAND_CHARS).collect();
    let first = head.trim_start().lines().next()?.trim();
    let rest = first.strip_prefix("arev:")?.trim_start();
    let (word, reason) = match rest.split_once(char::is_whitespace) {
        Some((w, r)) => (w, one_line(r, MAX_REASON_CHARS)),
        None => (rest, String::new()),
    };
    match word.to_ascii_lowercase().as_str() {
        "false-positive" if !reason.is_empty() => Some((DismissKind::FalsePositive, reason)),
        "wont-fix" | "won't-fix" if !reason.is_empty() => Some((DismissKind::WontFix, reason)),
        "ack" => Some((
            DismissKind::Ack,
            if reason.is_empty() {
                "acknowledged".into()
            } else {
                reason
            },
        )),
        _ => None,
    }
}

/// A GitHub login as GitHub allows it (1-39 letters, digits and inner hyphens; an app's
/// `name[bot]`), else None.
pub fn github_login(s: &str) -> Option<String> {
    let name = s.strip_suffix("[bot]").unwrap_or(s);
    let ok = (1..=39).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-');
    ok.then(|| s.to_string())
}

/// A GitLab username (1-255 letters, digits, `_`, `-`, `.`), else None.
pub fn gitlab_username(s: &str) -> Option<String> {
    let ok = (1..=255).contains(&s.len())
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'));
    ok.then(|| s.to_string())
}

/// The text of arev's reply for `event` (ending with its marker).
pub fn reply_body(
    event: Event,
    fingerprint: &str,
    head_sha: &str,
    d: Option<&Dismissal>,
) -> String {
    let short: String = head_sha.chars().take(12).collect();
    let text = match (event, d) {
        (Event::Fixed, _) => format!(
            "✅ **Fixed in {short}**: this line changed and a later arev review no longer finds it. Resolving this thread."
        ),
        (Event::Dismissed, Some(d)) => format!(
            "🔕 **Dismissed** by {} ({}): {} — arev will neither post nor gate this finding again on this pull request while its code is unchanged.",
            crate::report::md_text(&format!("@{}", d.by), crate::report::MdContext::Inline),
            d.kind.as_str(),
            crate::report::md_text(&d.reason, crate::report::MdContext::Inline)
        ),
        (Event::Dismissed, None) => "🔕 **Dismissed**.".to_string(),
    };
    format!("{text}\n\n{}", reply_marker(event, fingerprint))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn voice(login: &str, allowed: bool) -> Voice {
        Voice {
            login: login.into(),
            allowed,
        }
    }

    fn reply(login: &str, allowed: bool, body: &str) -> Reply {
        Reply {
            author: voice(login, allowed),
            mine: false,
            body: body.into(),
        }
    }

    #[test]
    fn commands_parse_only_at_the_start_with_a_reason() {
        assert_eq!(
            parse_command("arev: false-positive parse() is checked above\nmore"),
            Some((
                DismissKind::FalsePositive,
                "parse() is checked above".into()
            ))
        );
        assert_eq!(
            parse_command("  arev:  wont-fix legacy API"),
            Some((DismissKind::WontFix, "legacy API".into()))
        );
        assert_eq!(
            parse_command("arev: ack"),
            Some((DismissKind::Ack, "acknowledged".into()))
        );
        assert_eq!(parse_command("arev: false-positive"), None, "no reason");
        assert_eq!(parse_command("I think arev: false-positive x"), None);
        assert_eq!(parse_command("arev: delete-repo now"), None);
        // Control characters never survive; the reason is capped.
        let (_, r) = parse_command("arev: wont-fix a\u{1b}[31mred\u{7}").unwrap();
        assert!(!r.chars().any(char::is_control), "{r:?}");
        let (_, r) = parse_command(&format!("arev: wont-fix {}", "x".repeat(5000))).unwrap();
        assert_eq!(r.chars().count(), MAX_REASON_CHARS);
    }

    #[test]
    fn only_allowed_voices_dismiss_and_arev_never_answers_twice() {
        let mut t = Talk {
            replies: vec![reply("mallory", false, "arev: false-positive trust me")],
            ..Talk::default()
        };
        assert_eq!(t.dismissal("fp"), None, "no write access");
        t.thumbs_down.push(voice("mallory", false));
        assert_eq!(t.dismissal("fp"), None);
        t.thumbs_down.push(voice("maint", true));
        assert_eq!(t.dismissal("fp").unwrap().kind, DismissKind::ThumbsDown);
        t.replies
            .push(reply("owner", true, "arev: false-positive checked above"));
        let d = t.dismissal("fp").unwrap();
        assert_eq!(
            (d.kind, d.by.as_str(), d.reason.as_str()),
            (DismissKind::FalsePositive, "owner", "checked above")
        );
        let resolved = Talk {
            resolved: true,
            resolved_by: Some(voice("maint", true)),
            ..Talk::default()
        };
        assert_eq!(
            resolved.dismissal("fp").unwrap().kind,
            DismissKind::Resolved
        );
        assert!(!resolved.answered(Event::Fixed, "fp"));
        let answered = Talk {
            replies: vec![Reply {
                author: voice("bot", false),
                mine: true,
                body: reply_body(Event::Fixed, "fp", "abc", None),
            }],
            ..Talk::default()
        };
        assert!(answered.answered(Event::Fixed, "fp"));
        assert!(!answered.answered(Event::Fixed, "other"));
        assert!(!answered.answered(Event::Dismissed, "fp"));
        // Someone else quoting arev's reply is not arev's answer.
        let quoted = Talk {
            replies: vec![reply("x", true, &reply_body(Event::Fixed, "fp", "a", None))],
            ..Talk::default()
        };
        assert!(!quoted.answered(Event::Fixed, "fp"));
    }

    #[test]
    fn logins_are_validated() {
        assert_eq!(github_login("octo-cat").as_deref(), Some("octo-cat"));
        assert_eq!(
            github_login("github-actions[bot]").as_deref(),
            Some("github-actions[bot]")
        );
        for bad in ["", "-x", "a/b", "a b", &"a".repeat(40), "x\u{1b}"] {
            assert_eq!(github_login(bad), None, "{bad:?}");
        }
        assert_eq!(gitlab_username("jane.doe_1").as_deref(), Some("jane.doe_1"));
        assert_eq!(gitlab_username("../x"), None);
        assert_eq!(gitlab_username("a/b"), None);
    }

    #[test]
    fn a_dismissal_reply_names_who_without_pinging() {
        let d = Dismissal {
            fingerprint: "fp".into(),
            by: "owner".into(),
            kind: DismissKind::FalsePositive,
            reason: "<b>checked</b>".into(),
        };
        let b = reply_body(Event::Dismissed, "fp", "0123456789abcdef", Some(&d));
        assert!(!b.contains("@owner"), "{b}");
        assert!(!b.contains("<b>"), "{b}");
        assert!(b.ends_with(&reply_marker(Event::Dismissed, "fp")));
        assert!(reply_body(Event::Fixed, "fp", "0123456789abcdef", None)
            .contains("Fixed in 0123456789ab"));
    }
}

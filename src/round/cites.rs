//! The context-citation steps of a round (docs/contracts.md §22.2): each finding's, map
//! entry's and ruling's citations checked against the context scope, the dropped ones
//! counted (`context_cite_invalid`), a map entry left without its evidence dropped before
//! the Judge, and a dismissal resting on a dropped guard not upheld. No I/O but the cited
//! lines' reads, no async.

use super::{RoundError, RoundRecord};
use crate::findings::{AdversaryOutput, JudgeOutput, PassFinding};
use crate::gates::{check_cites, ContextSource, DroppedCite};
use crate::records::ContextCite;
use std::collections::{BTreeMap, BTreeSet};

/// Count the citations dropped from `who` (`context_cite_invalid`, one per citation) and say
/// which, at most five of them, in the decision's reasons.
fn count_dropped(who: &str, dropped: &[DroppedCite], rec: &mut RoundRecord) {
    if dropped.is_empty() {
        return;
    }
    rec.counts.context_cite_invalid += dropped.len() as u32;
    rec.errors.extend(std::iter::repeat_n(
        RoundError::ContextCiteInvalid,
        dropped.len(),
    ));
    let shown: Vec<String> = dropped.iter().take(5).map(ToString::to_string).collect();
    let more = match dropped.len().saturating_sub(5) {
        0 => String::new(),
        n => format!(" and {n} more"),
    };
    rec.decision.reasons.push(format!(
        "context citations of {who} dropped: {}{more}",
        shown.join("; ")
    ));
}

/// An agent's id as a reason names it (cut short: agent text).
pub(super) fn id_of(id: &str) -> String {
    id.trim().chars().take(40).collect()
}

/// The citation gate on the passes' findings (docs/contracts.md §22.2): each finding keeps the
/// context citations that hold; the others are dropped and counted. The finding itself stays
/// (it names a target line the anchor gate checked).
pub(super) fn gate_finding_cites(
    findings: &mut [PassFinding],
    src: &dyn ContextSource,
    rec: &mut RoundRecord,
) {
    for pf in findings
        .iter_mut()
        .filter(|pf| !pf.finding.context.is_empty())
    {
        let dropped = check_cites(&mut pf.finding.context, src);
        let who = format!("pass {} finding {}", pf.pass, id_of(&pf.finding.id));
        count_dropped(&who, &dropped, rec);
    }
}

/// The citation gate on the Adversary's map: every heuristic and safe zone keeps the context
/// citations that hold; an entry that carried citations and kept none is dropped from the map
/// before the Judge sees it (a caller's guard is mapped only with a citation that holds),
/// recorded in the reasons and counted in `map_entries_dropped`. Returns the ids dropped
/// (those no remaining entry shares): a ruling may not rest on them.
pub(super) fn gate_map(
    map: &mut AdversaryOutput,
    src: &dyn ContextSource,
    rec: &mut RoundRecord,
) -> BTreeSet<String> {
    let mut gone: Vec<String> = vec![];
    let mut gate = |kind: &str, id: &str, context: &mut Vec<ContextCite>| -> bool {
        if context.is_empty() {
            return true;
        }
        let dropped = check_cites(context, src);
        let who = format!("Adversary {kind} {}", id_of(id));
        count_dropped(&who, &dropped, rec);
        if !context.is_empty() {
            return true;
        }
        rec.counts.map_entries_dropped += 1;
        rec.decision.reasons.push(format!(
            "{who} dropped from the map before the Judge: none of its context citations held"
        ));
        gone.push(id.trim().to_string());
        false
    };
    map.heuristics
        .retain_mut(|h| gate("heuristic", &h.id, &mut h.context));
    map.safe_zones
        .retain_mut(|z| gate("safe zone", &z.id, &mut z.context));
    let left: BTreeSet<&str> = map
        .heuristics
        .iter()
        .map(|h| h.id.trim())
        .chain(map.safe_zones.iter().map(|z| z.id.trim()))
        .collect();
    gone.into_iter()
        .filter(|id| !left.contains(id.as_str()))
        .collect()
}

/// The citation gate on the Judge's accepted answer: each ruling keeps the context citations
/// that hold (the others dropped and counted); a confirming ruling loses cites of entries
/// dropped from the map (a non-confirming one that rests on one is unresolved by
/// [`cite_problems`]); then each ruling gains the surviving citations of the map entries it
/// cites, up to five in all, so the report shows the line that decided it.
pub(super) fn gate_ruling_cites(
    j: &mut JudgeOutput,
    map: &AdversaryOutput,
    dropped_ids: &BTreeSet<String>,
    src: &dyn ContextSource,
    rec: &mut RoundRecord,
) {
    for r in &mut j.rulings {
        let dropped = check_cites(&mut r.context, src);
        let who = format!("the ruling on {}", id_of(&r.finding_id));
        count_dropped(&who, &dropped, rec);
        if r.is_confirmed() {
            r.cites.retain(|c| !dropped_ids.contains(c.trim()));
        }
        for id in &r.cites {
            let id = id.trim();
            let from_map = map
                .heuristics
                .iter()
                .filter(|h| h.id.trim() == id)
                .flat_map(|h| &h.context)
                .chain(
                    map.safe_zones
                        .iter()
                        .filter(|z| z.id.trim() == id)
                        .flat_map(|z| &z.context),
                );
            for c in from_map {
                if r.context.len() < crate::records::MAX_CONTEXT_CITES && !r.context.contains(c) {
                    r.context.push(c.clone());
                }
            }
        }
    }
}

/// The re-prompt note for rulings whose cites do not hold (None when all hold).
pub(super) fn cites_note(problems: &BTreeMap<String, Vec<String>>) -> Option<String> {
    if problems.is_empty() {
        return None;
    }
    let list: Vec<String> = problems
        .iter()
        .map(|(id, why)| format!("{id}: {}", why.join("; ")))
        .collect();
    Some(format!(
        "the `cites` of {} ruling(s) do not hold ({}). A cite must be the id of a heuristic \
         or safe zone of the Adversary's map whose range covers the ruling's file and line; \
         cite nothing when no map entry decides the ruling; a `context` citation quotes a line of \
         the repository as it is. A ruling whose cites still do not hold is left unresolved",
        problems.len(),
        list.join(" · ")
    ))
}

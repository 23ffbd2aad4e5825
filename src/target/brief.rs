//! CONTEXT_BRIEF: a ≤ 2 KB summary of the target computed from the target bytes only.

//! The `arev` binary: parse, run, exit with the documented code.
fn main() {}

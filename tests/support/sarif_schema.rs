//! SARIF checks shared by the unit tests (`src/report/sarif.rs`) and the integration tests:
//! validation against the official SARIF 2.1.0 schema kept in the repository
//! (`tests/fixtures/sarif/`), and, when `AREV_SARIF_OUT_DIR` is set, a copy of every checked
//! document in that directory so that CI can run Microsoft's SARIF Multitool over them too.
//! Included with `#[path]` by both test crates; test code only.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// Where CI wants a copy of every SARIF document the tests validate (`.ci/run` sets it).
pub const OUT_DIR_ENV: &str = "AREV_SARIF_OUT_DIR";

/// The official SARIF 2.1.0 schema, a fixture of this repository (source and licence in the
/// README beside it).
pub fn schema_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/sarif/sarif-schema-2.1.0.json")
}

/// The schema compiled once per test binary, with format checks (uri, date-time) on.
pub fn validator() -> &'static jsonschema::Validator {
    static VALIDATOR: OnceLock<jsonschema::Validator> = OnceLock::new();
    VALIDATOR.get_or_init(|| {
        let path = schema_path();
        let text = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("read {}: {e}", path.display()));
        let schema: Value = serde_json::from_str(&text).expect("the SARIF schema is JSON");
        jsonschema::options()
            .should_validate_formats(true)
            .build(&schema)
            .expect("the SARIF schema compiles")
    })
}

/// Every schema violation of `sarif`, with the instance path it was found at.
pub fn errors(sarif: &Value) -> Vec<String> {
    validator()
        .iter_errors(sarif)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect()
}

/// Assert that `text` is valid SARIF 2.1.0 and return it parsed; hand it to CI's second
/// validator too: its exact bytes are written as `<name>-<unique>.sarif` into
/// `$AREV_SARIF_OUT_DIR` when that is set. `name` says which test produced it, so that a
/// Multitool error points back at the test.
pub fn assert_valid(text: &str, name: &str) -> Value {
    let sarif: Value = serde_json::from_str(text)
        .unwrap_or_else(|e| panic!("SARIF ({name}) is not JSON: {e}\n{text}"));
    let errors = errors(&sarif);
    assert!(errors.is_empty(), "invalid SARIF ({name}): {errors:#?}");
    if let Some(dir) = std::env::var_os(OUT_DIR_ENV) {
        let dir = PathBuf::from(dir);
        std::fs::create_dir_all(&dir).expect("create $AREV_SARIF_OUT_DIR");
        let mut file = tempfile::Builder::new()
            .prefix(&format!("{name}-"))
            .suffix(".sarif")
            .tempfile_in(&dir)
            .expect("a file in $AREV_SARIF_OUT_DIR");
        std::io::Write::write_all(&mut file, text.as_bytes()).expect("write the SARIF copy");
        file.keep().expect("keep the SARIF copy");
    }
    sarif
}

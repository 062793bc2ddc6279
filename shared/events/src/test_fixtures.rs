//! The event fixtures under `events/` (also used with `cargo lambda invoke --data-file`), read
//! by the parsers' tests.

/// The repository's `events/` directory, found from this package's directory as cargo gives it
/// when the test runs (the compile-time value would be another clone's when cargo reuses a test
/// binary from a target dir shared between clones).
pub(crate) fn events_dir() -> String {
    let package = std::env::var("CARGO_MANIFEST_DIR")
        .unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").to_owned());
    format!("{package}/../../events")
}

/// The JSON of `events/{path}`.
///
/// # Panics
/// If the file is missing or is not JSON: the message names it.
pub(crate) fn fixture(path: &str) -> serde_json::Value {
    let full = format!("{}/{path}", events_dir());
    let text = std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("read {full}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{full} is not JSON: {e}"))
}

//! The event fixtures under `events/` (also used with `cargo lambda invoke --data-file`), read
//! by the parsers' tests.

/// The JSON of `events/{path}`.
///
/// # Panics
/// If the file is missing or is not JSON: the message names it.
pub(crate) fn fixture(path: &str) -> serde_json::Value {
    let full = format!("{}/../../events/{path}", env!("CARGO_MANIFEST_DIR"));
    let text = std::fs::read_to_string(&full).unwrap_or_else(|e| panic!("read {full}: {e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{full} is not JSON: {e}"))
}

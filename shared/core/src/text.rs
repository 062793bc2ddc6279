//! Bounds on what headroom quotes back: an error message names the offending input, but a 5 MB
//! alarm name or a 200 MB trace row must not travel whole into logs, answers and failure queues.

use std::borrow::Cow;

/// The most characters of an input an error message quotes.
pub const QUOTE_LIMIT: usize = 200;

/// `text` cut to [`QUOTE_LIMIT`] characters, with an ellipsis and the full length when cut.
pub fn cut(text: &str) -> Cow<'_, str> {
    cut_to(text, QUOTE_LIMIT)
}

/// `text` cut to `max` characters (never inside a UTF-8 character), with an ellipsis and the
/// full length when cut.
pub fn cut_to(text: &str, max: usize) -> Cow<'_, str> {
    match text.char_indices().nth(max) {
        None => Cow::Borrowed(text),
        Some((end, _)) => Cow::Owned(format!(
            "{}… ({} characters in all)",
            &text[..end],
            text.chars().count()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_text_is_quoted_whole_and_long_text_is_cut_with_an_ellipsis() {
        assert_eq!(cut("burst"), "burst");
        let long = "é".repeat(5_000);
        let quoted = cut(&long);
        assert!(quoted.starts_with(&"é".repeat(QUOTE_LIMIT)));
        assert!(quoted.contains("… (5000 characters in all)"), "{quoted}");
        assert!(quoted.chars().count() < QUOTE_LIMIT + 40);
        assert_eq!(cut(&"a".repeat(QUOTE_LIMIT)), "a".repeat(QUOTE_LIMIT));
    }
}

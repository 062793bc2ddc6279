//! Human durations in plan files: `90s`, `25m`, `2h`, `1d`, or combinations such as `1h30m`.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

/// A non-negative span of whole seconds, written the way operators write them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Span(pub i64);

impl Span {
    pub const fn seconds(s: i64) -> Self {
        Self(s)
    }
    pub const fn minutes(m: i64) -> Self {
        Self(m * 60)
    }
    pub const fn hours(h: i64) -> Self {
        Self(h * 3600)
    }
    pub fn as_secs(self) -> i64 {
        self.0
    }
    pub fn to_chrono(self) -> chrono::Duration {
        chrono::Duration::seconds(self.0)
    }

    /// Parses with `humantime`, restricted to what a plan means by a duration: whole numbers of
    /// `s`, `m`, `h` and `d`, combined (`1h30m`, `1h 30m`). humantime alone would also read
    /// fractions, `ms`, weeks, months (`1M`) and years, none of which a plan wants (a month is
    /// no unit of lead time, and `1M` next to `1m` invites a typo), and its messages do not say
    /// which units to use; the checks and messages before and after it are ours.
    pub fn parse(text: &str) -> Result<Self, String> {
        let text = text.trim();
        if text.is_empty() {
            return Err("a duration is empty: write it like `90s`, `25m`, `2h` or `1h30m`".into());
        }
        let unit_error = |unit: &str| {
            format!("duration {text:?} has unit {unit:?}: use s, m, h or d (e.g. `25m`)")
        };
        for unit in text.split(|c: char| c.is_ascii_digit() || c == ' ') {
            if !unit.is_empty() && !matches!(unit, "s" | "m" | "h" | "d") {
                return Err(match unit.chars().next() {
                    Some(c) if unit.len() == 1 => unit_error(&c.to_string()).replace('"', "'"),
                    _ => unit_error(unit),
                });
            }
        }
        if text.ends_with(|c: char| c.is_ascii_digit()) {
            return Err(format!(
                "duration {text:?} ends without a unit: write `{text}m` or `{text}s`"
            ));
        }
        let span = humantime::parse_duration(text).map_err(|e| match e {
            humantime::DurationError::NumberExpected(_) => {
                format!("duration {text:?} has a unit without a number before it")
            }
            humantime::DurationError::NumberOverflow => format!("duration {text:?} is too large"),
            other => format!("duration {text:?}: {other}"),
        })?;
        i64::try_from(span.as_secs())
            .map(Self)
            .map_err(|_| format!("duration {text:?} is too large"))
    }
}

impl fmt::Display for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut rest = self.0;
        if rest == 0 {
            return f.write_str("0s");
        }
        for (unit, size) in [("d", 86_400), ("h", 3600), ("m", 60), ("s", 1)] {
            if rest >= size {
                write!(f, "{}{unit}", rest / size)?;
                rest %= size;
            }
        }
        Ok(())
    }
}

impl Serialize for Span {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Span {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(SpanVisitor)
    }
}

/// Reads a duration string; a bare number (`hold = 20`) is told how to write it.
struct SpanVisitor;

impl serde::de::Visitor<'_> for SpanVisitor {
    type Value = Span;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a duration in quotes, like \"25m\"")
    }

    fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<Span, E> {
        Span::parse(text).map_err(E::custom)
    }

    fn visit_i64<E: serde::de::Error>(self, n: i64) -> Result<Span, E> {
        match u64::try_from(n) {
            Ok(n) => self.visit_u64(n),
            Err(_) => Err(E::custom(format!(
                "a duration is not negative ({n}): write it in quotes with a unit, like \"25m\""
            ))),
        }
    }

    fn visit_u64<E: serde::de::Error>(self, n: u64) -> Result<Span, E> {
        Err(E::custom(format!(
            "a duration is a string with a unit: write \"{n}m\" or \"{n}s\", in quotes"
        )))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_and_prints_spans() {
        assert_eq!(Span::parse("25m").unwrap(), Span::minutes(25));
        assert_eq!(Span::parse("1h30m").unwrap(), Span::minutes(90));
        assert_eq!(Span::parse("90s").unwrap().to_string(), "1m30s");
        assert_eq!(Span::parse("1d").unwrap(), Span::hours(24));
        assert!(Span::parse("25").unwrap_err().contains("without a unit"));
        assert!(Span::parse("5w").unwrap_err().contains("unit 'w'"));
        assert!(Span::parse("").is_err());
    }

    #[test]
    fn a_bare_number_in_a_file_is_told_to_write_a_unit_in_quotes() {
        #[derive(Debug, serde::Deserialize)]
        struct Hold {
            #[allow(dead_code)]
            hold: Span,
        }
        let err = toml::from_str::<Hold>("hold = 20").unwrap_err().to_string();
        assert!(err.contains(r#"write "20m" or "20s", in quotes"#), "{err}");
        let err = toml::from_str::<Hold>("hold = 1.5")
            .unwrap_err()
            .to_string();
        assert!(err.contains(r#"a duration in quotes, like "25m""#), "{err}");
        let err = toml::from_str::<Hold>("hold = -5").unwrap_err().to_string();
        assert!(err.contains("a duration is not negative (-5)"), "{err}");
        let ok = toml::from_str::<Hold>(r#"hold = "20m""#).expect("a duration");
        assert_eq!(ok.hold, Span::minutes(20));
    }

    #[test]
    fn only_whole_seconds_minutes_hours_and_days() {
        assert_eq!(Span::parse("1h 30m").unwrap(), Span::minutes(90));
        assert_eq!(
            Span::parse("2d3h4m5s").unwrap().as_secs(),
            2 * 86_400 + 3 * 3600 + 245
        );
        for (text, says) in [
            ("1M", "unit 'M'"),
            ("250ms", "unit \"ms\""),
            ("1.5h", "unit '.'"),
            ("2w", "unit 'w'"),
            ("m", "without a number"),
            ("0", "without a unit"),
            ("99999999999999999999d", "too large"),
        ] {
            let err = Span::parse(text).unwrap_err();
            assert!(err.contains(says), "{text}: {err}");
        }
    }
}

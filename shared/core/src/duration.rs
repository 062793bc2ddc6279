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

    pub fn parse(text: &str) -> Result<Self, String> {
        let text = text.trim();
        if text.is_empty() {
            return Err("a duration is empty: write it like `90s`, `25m`, `2h` or `1h30m`".into());
        }
        let mut total: i64 = 0;
        let mut number = String::new();
        for c in text.chars() {
            if c.is_ascii_digit() {
                number.push(c);
                continue;
            }
            let unit = match c {
                's' => 1,
                'm' => 60,
                'h' => 3600,
                'd' => 86_400,
                _ => {
                    return Err(format!(
                        "duration {text:?} has unit {c:?}: use s, m, h or d (e.g. `25m`)"
                    ))
                }
            };
            let value: i64 = number
                .parse()
                .map_err(|_| format!("duration {text:?} has a unit without a number before it"))?;
            total = value
                .checked_mul(unit)
                .and_then(|v| total.checked_add(v))
                .ok_or_else(|| format!("duration {text:?} is too large"))?;
            number.clear();
        }
        if !number.is_empty() {
            return Err(format!(
                "duration {text:?} ends without a unit: write `{text}m` or `{text}s`"
            ));
        }
        Ok(Self(total))
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
        let raw = String::deserialize(deserializer)?;
        Span::parse(&raw).map_err(serde::de::Error::custom)
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
}

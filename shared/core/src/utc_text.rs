//! UTC instants as claim reasons quote them, written without chrono's `format`, which parses its
//! format string at every call: every reconcile writes the reason of each live peak and forecast
//! claim, and in the simulator's 100-target week that parsing was a tenth of the run.

use std::fmt;

use chrono::{DateTime, Datelike, Timelike, Utc};

/// `2026-03-14T09:30Z`, as `format("%Y-%m-%dT%H:%MZ")` writes it.
pub struct Minute(pub DateTime<Utc>);

impl fmt::Display for Minute {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let t = self.0;
        write!(
            f,
            "{:04}-{:02}-{:02}T{:02}:{:02}Z",
            t.year(),
            t.month(),
            t.day(),
            t.hour(),
            t.minute()
        )
    }
}

/// `09:30Z`, as `format("%H:%MZ")` writes it.
pub struct Clock(pub DateTime<Utc>);

impl fmt::Display for Clock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:02}:{:02}Z", self.0.hour(), self.0.minute())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn they_write_what_chrono_writes() {
        for s in [
            "2026-03-14T09:30:59Z",
            "2026-12-31T23:59:00Z",
            "0999-01-02T00:05:00Z",
            "2027-07-04T12:00:00Z",
        ] {
            let t: DateTime<Utc> = s.parse().unwrap();
            assert_eq!(
                Minute(t).to_string(),
                t.format("%Y-%m-%dT%H:%MZ").to_string()
            );
            assert_eq!(Clock(t).to_string(), t.format("%H:%MZ").to_string());
        }
    }
}

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
        // chrono writes a year outside 0-9999 with its sign and at least five characters.
        match t.year() {
            y @ 0..=9999 => write!(f, "{y:04}")?,
            y => write!(f, "{y:+05}")?,
        }
        write!(
            f,
            "-{:02}-{:02}T{:02}:{:02}Z",
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
        use chrono::TimeZone;
        for (y, mo, d, h, mi, sec) in [
            (2026, 3, 14, 9, 30, 59),
            (2026, 12, 31, 23, 59, 0),
            (999, 1, 2, 0, 5, 0),
            (2027, 7, 4, 12, 0, 0),
            (-1, 6, 1, 8, 15, 0),
            (10_000, 1, 1, 0, 0, 0),
        ] {
            let t = Utc.with_ymd_and_hms(y, mo, d, h, mi, sec).unwrap();
            assert_eq!(
                Minute(t).to_string(),
                t.format("%Y-%m-%dT%H:%MZ").to_string()
            );
            assert_eq!(Clock(t).to_string(), t.format("%H:%MZ").to_string());
        }
    }
}

//! Five-field cron expressions (`minute hour day-of-month month day-of-week`) evaluated in an IANA
//! time zone, with the daylight-saving rules of Vixie cron, which operators already know:
//! - a wall-clock time skipped when clocks go forward fires at the moment of the change;
//! - a wall-clock time that occurs twice when clocks go back fires once, at its first occurrence.
//!
//! headroom asks one question of a schedule: which occurrences fall in a window of UTC time.

use chrono::{DateTime, Datelike, Duration, LocalResult, NaiveDate, NaiveDateTime, TimeZone, Utc};
use chrono_tz::Tz;

/// A parsed cron expression: one bit per allowed value of each field.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cron {
    minutes: u64,
    hours: u32,
    days_of_month: u32,
    months: u16,
    days_of_week: u8,
    /// Vixie cron: when both day fields are restricted, a day matches if either matches.
    dom_restricted: bool,
    dow_restricted: bool,
    source: String,
}

const MONTHS: [&str; 12] = [
    "JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC",
];
const WEEKDAYS: [&str; 7] = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];

impl Cron {
    pub fn parse(expr: &str) -> Result<Self, String> {
        let fields: Vec<&str> = expr.split_whitespace().collect();
        if fields.len() != 5 {
            return Err(format!(
                "cron {:?} has {} fields; write five: minute hour day-of-month month \
                 day-of-week, e.g. \"0 9 * * MON-FRI\"",
                crate::text::cut(expr),
                fields.len()
            ));
        }
        let minutes = parse_field(fields[0], "minute", 0, 59, &[])?;
        let hours = parse_field(fields[1], "hour", 0, 23, &[])?;
        let dom = parse_field(fields[2], "day-of-month", 1, 31, &[])?;
        let months = parse_field(fields[3], "month", 1, 12, &MONTHS)?;
        let mut dow = parse_field(fields[4], "day-of-week", 0, 7, &WEEKDAYS)?;
        if dow & (1 << 7) != 0 {
            dow = (dow | 1) & !(1 << 7); // 7 is Sunday too
        }
        Ok(Self {
            minutes,
            hours: hours as u32,
            days_of_month: dom as u32,
            months: months as u16,
            days_of_week: dow as u8,
            dom_restricted: fields[2] != "*",
            dow_restricted: fields[4] != "*",
            source: expr.to_owned(),
        })
    }

    pub fn source(&self) -> &str {
        &self.source
    }

    /// The days of the week it fires on (Monday first), when it is a weekly rhythm: every month,
    /// and no day of the month named. `None` for a schedule a week of history cannot show (the
    /// first of the month, December only).
    pub fn weekly_days(&self) -> Option<[bool; 7]> {
        const EVERY_MONTH: u16 = 0b1_1111_1111_1110;
        if self.dom_restricted || self.months != EVERY_MONTH {
            return None;
        }
        // Bit 0 is Sunday.
        Some(std::array::from_fn(|monday_first| {
            self.days_of_week & (1 << ((monday_first + 1) % 7)) != 0
        }))
    }

    fn matches_date(&self, date: NaiveDate) -> bool {
        if self.months & (1 << date.month()) == 0 {
            return false;
        }
        let dom = self.days_of_month & (1 << date.day()) != 0;
        let dow = self.days_of_week & (1 << date.weekday().num_days_from_sunday()) != 0;
        match (self.dom_restricted, self.dow_restricted) {
            (true, true) => dom || dow,
            (true, false) => dom,
            (false, true) => dow,
            (false, false) => true,
        }
    }

    /// Every occurrence in `[from, to)`, in order, resolved to UTC instants.
    pub fn occurrences(
        &self,
        tz: Tz,
        from: DateTime<Utc>,
        to: DateTime<Utc>,
    ) -> Vec<DateTime<Utc>> {
        let mut out = Vec::new();
        if to <= from {
            return out;
        }
        // One day of slack either side covers any UTC offset.
        let first = from.with_timezone(&tz).date_naive() - Duration::days(1);
        let last = to.with_timezone(&tz).date_naive() + Duration::days(1);
        // A zone's offset lies within a day of UTC, so a wall-clock time a day or more outside
        // [from, to) in UTC terms cannot fall inside it: skipped before the zone lookup, which
        // is most of the cost (peaks are derived at every reconcile).
        let (near_from, near_to) = (
            from.naive_utc() - Duration::days(1),
            to.naive_utc() + Duration::days(1),
        );
        let mut date = first;
        while date <= last {
            if self.matches_date(date) {
                for hour in bits(self.hours as u64, 24) {
                    for minute in bits(self.minutes, 60) {
                        let Some(local) = date.and_hms_opt(hour, minute, 0) else {
                            continue;
                        };
                        if local < near_from || local >= near_to {
                            continue;
                        }
                        let at = resolve_local(tz, local);
                        if at >= from && at < to && out.last() != Some(&at) {
                            out.push(at);
                        }
                    }
                }
            }
            date += Duration::days(1);
        }
        out.sort();
        out.dedup();
        out
    }
}

/// Wall-clock time to an instant, with Vixie cron's rules for the two daylight-saving edges.
fn resolve_local(tz: Tz, local: NaiveDateTime) -> DateTime<Utc> {
    match tz.from_local_datetime(&local) {
        LocalResult::Single(t) => t.with_timezone(&Utc),
        LocalResult::Ambiguous(first, _) => first.with_timezone(&Utc),
        LocalResult::None => {
            // Skipped by a forward change: the first wall-clock minute that exists again is the
            // moment of the change. Gaps are at most a few hours in every zone.
            let mut probe = local;
            for _ in 0..(4 * 60) {
                probe += Duration::minutes(1);
                if let Some(t) = tz.from_local_datetime(&probe).earliest() {
                    return t.with_timezone(&Utc);
                }
            }
            Utc.from_utc_datetime(&local)
        }
    }
}

fn bits(mask: u64, width: u32) -> impl Iterator<Item = u32> {
    (0..width).filter(move |i| mask & (1u64 << i) != 0)
}

fn parse_field(text: &str, name: &str, min: u32, max: u32, names: &[&str]) -> Result<u64, String> {
    let mut mask = 0u64;
    for part in text.split(',') {
        let (range, step) = match part.split_once('/') {
            Some((range, step)) => {
                // A step beyond the field's largest value could only ever fire once; a huge one
                // would overflow the walk below.
                let step: u32 = step
                    .parse()
                    .ok()
                    .filter(|s| (1..=max).contains(s))
                    .ok_or_else(|| {
                        format!(
                            "cron {name} field {:?}: step {:?} must be a number from 1 to {max}",
                            crate::text::cut(text),
                            crate::text::cut(step)
                        )
                    })?;
                (range, step)
            }
            None => (part, 1),
        };
        let (lo, hi) = if range == "*" {
            (min, max)
        } else if let Some((a, b)) = range.split_once('-') {
            (
                value(a, name, min, max, names)?,
                value(b, name, min, max, names)?,
            )
        } else {
            let v = value(range, name, min, max, names)?;
            // `5/15` means from 5 to the end in steps of 15, as in Vixie cron.
            (v, if step > 1 { max } else { v })
        };
        if lo > hi {
            return Err(format!(
                "cron {name} field {:?}: range {lo}-{hi} runs backwards",
                crate::text::cut(text)
            ));
        }
        let mut v = lo;
        while v <= hi {
            mask |= 1 << v;
            let Some(next) = v.checked_add(step) else {
                break;
            };
            v = next;
        }
    }
    Ok(mask)
}

fn value(text: &str, name: &str, min: u32, max: u32, names: &[&str]) -> Result<u32, String> {
    let upper = text.to_ascii_uppercase();
    if let Some(i) = names.iter().position(|n| *n == upper) {
        // Month names start at 1, weekday names at 0 (Sunday).
        return Ok(i as u32 + min);
    }
    let v: u32 = text.parse().map_err(|_| {
        format!(
            "cron {name} field: {:?} is not a number{}",
            crate::text::cut(text),
            hint(names)
        )
    })?;
    if v < min || v > max {
        return Err(format!("cron {name} field: {v} is outside {min}-{max}"));
    }
    Ok(v)
}

fn hint(names: &[&str]) -> String {
    if names.is_empty() {
        String::new()
    } else {
        format!(" or one of {}", names.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono_tz::{America::New_York, Europe::Berlin};

    fn utc(s: &str) -> DateTime<Utc> {
        s.parse().unwrap()
    }

    #[test]
    fn a_weekly_rhythm_says_its_days_and_other_schedules_say_none() {
        let days = |expr: &str| Cron::parse(expr).unwrap().weekly_days();
        let (t, f) = (true, false);
        assert_eq!(days("0 9 * * MON-FRI"), Some([t, t, t, t, t, f, f]));
        assert_eq!(days("0 9 * * SAT,SUN"), Some([f, f, f, f, f, t, t]));
        assert_eq!(days("0 9 * * 0"), Some([f, f, f, f, f, f, t]));
        assert_eq!(days("0 9 * * 7"), Some([f, f, f, f, f, f, t]));
        assert_eq!(days("30 13 * 1-12 *"), Some([t; 7]));
        assert_eq!(days("0 9 1 * *"), None);
        assert_eq!(days("0 9 * 12 *"), None);
        assert_eq!(days("0 9 15 * MON"), None);
    }

    #[test]
    fn weekday_mornings_in_berlin_follow_summer_time() {
        let cron = Cron::parse("0 9 * * MON-FRI").unwrap();
        // Winter: 09:00 CET is 08:00 UTC. Summer: 09:00 CEST is 07:00 UTC.
        let winter = cron.occurrences(
            Berlin,
            utc("2026-01-05T00:00:00Z"),
            utc("2026-01-06T00:00:00Z"),
        );
        assert_eq!(winter, vec![utc("2026-01-05T08:00:00Z")]);
        let summer = cron.occurrences(
            Berlin,
            utc("2026-07-06T00:00:00Z"),
            utc("2026-07-07T00:00:00Z"),
        );
        assert_eq!(summer, vec![utc("2026-07-06T07:00:00Z")]);
        let weekend = cron.occurrences(
            Berlin,
            utc("2026-07-04T00:00:00Z"),
            utc("2026-07-06T00:00:00Z"),
        );
        assert!(weekend.is_empty());
    }

    #[test]
    fn skipped_time_fires_at_the_change_and_repeated_time_fires_once() {
        let cron = Cron::parse("30 2 * * *").unwrap();
        // 2026-03-08: New York skips 02:00-03:00 local; the change is at 07:00 UTC.
        let spring = cron.occurrences(
            New_York,
            utc("2026-03-08T00:00:00Z"),
            utc("2026-03-09T00:00:00Z"),
        );
        assert_eq!(spring, vec![utc("2026-03-08T07:00:00Z")]);
        let cron = Cron::parse("30 1 * * *").unwrap();
        // 2026-11-01: 01:30 happens twice in New York (EDT then EST); fire at the first only.
        let autumn = cron.occurrences(
            New_York,
            utc("2026-11-01T00:00:00Z"),
            utc("2026-11-02T00:00:00Z"),
        );
        assert_eq!(autumn, vec![utc("2026-11-01T05:30:00Z")]);
    }

    #[test]
    fn lists_ranges_steps_and_names() {
        let cron = Cron::parse("*/20 8-9 1,15 JAN,jul 7").unwrap();
        let tz = chrono_tz::UTC;
        // 2026-07-01 is a Wednesday, matched by day-of-month (Vixie OR with Sunday).
        let hits = cron.occurrences(tz, utc("2026-07-01T00:00:00Z"), utc("2026-07-02T00:00:00Z"));
        assert_eq!(hits.len(), 6);
        assert_eq!(hits[0], utc("2026-07-01T08:00:00Z"));
        assert_eq!(hits[5], utc("2026-07-01T09:40:00Z"));
        // 2026-07-05 is a Sunday: matched by day-of-week.
        let sunday = cron.occurrences(tz, utc("2026-07-05T00:00:00Z"), utc("2026-07-06T00:00:00Z"));
        assert_eq!(sunday.len(), 6);
    }

    #[test]
    fn midnight_crossing_windows_find_yesterdays_occurrence() {
        let cron = Cron::parse("0 23 * * *").unwrap();
        let hits = cron.occurrences(
            chrono_tz::UTC,
            utc("2026-05-01T22:00:00Z"),
            utc("2026-05-02T01:00:00Z"),
        );
        assert_eq!(hits, vec![utc("2026-05-01T23:00:00Z")]);
    }

    #[test]
    fn errors_name_the_field_and_the_fix() {
        assert!(Cron::parse("0 9 * *").unwrap_err().contains("five"));
        assert!(Cron::parse("61 9 * * *")
            .unwrap_err()
            .contains("minute field: 61 is outside 0-59"));
        assert!(Cron::parse("0 9 * * FUNDAY").unwrap_err().contains("MON"));
        assert!(Cron::parse("0 9-7 * * *")
            .unwrap_err()
            .contains("backwards"));
        assert!(Cron::parse("*/0 * * * *")
            .unwrap_err()
            .contains("from 1 to 59"));
    }

    #[test]
    fn a_step_beyond_the_field_is_refused_not_overflowed() {
        let err = Cron::parse("30/4294967295 * * * *").unwrap_err();
        assert!(
            err.contains("step \"4294967295\" must be a number from 1 to 59"),
            "{err}"
        );
        assert!(Cron::parse("30/60 * * * *").is_err());
        // The largest step fires once per field cycle.
        let cron = Cron::parse("30/59 * * * *").unwrap();
        let hits = cron.occurrences(
            chrono_tz::UTC,
            utc("2026-05-01T10:00:00Z"),
            utc("2026-05-01T11:00:00Z"),
        );
        assert_eq!(hits, vec![utc("2026-05-01T10:30:00Z")]);
    }
}

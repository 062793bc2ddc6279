//! Traffic traces: CSV `timestamp,requests`, one row per interval, RFC 3339 UTC timestamps giving
//! the start of the interval, equally spaced from 10 s to 1 h. Every bad row is reported with its
//! line number (not just the first), so a trace is fixed in one pass.
//!
//! `requests` is a non-negative number, not only a whole one: a CloudWatch export writes a sum
//! of `Invocations` as `156.0`, and a trace resampled to another spacing holds fractions. A gap
//! stays an error rather than being read as zero demand or as the row before it: the file
//! cannot say which it was (CloudWatch leaves out the periods without a datapoint; a collector
//! that stopped leaves out periods that had traffic), and a simulation run on the wrong guess
//! would look as sound as one on the truth. The message says how to write the rows.

use headroom_core::text::cut;
use std::fmt;

use chrono::{DateTime, Utc};

/// The simulator's step: the resolution of SageMaker's high-resolution metrics, and the finest
/// trace spacing accepted.
pub const STEP_SECS: i64 = 10;
/// The coarsest trace spacing accepted.
pub const MAX_INTERVAL_SECS: i64 = 3600;
/// The most requests one row may hold: far above any endpoint's traffic, and far enough below
/// `f64::MAX` that a world's `trace_scale` and the simulator's sums stay finite.
pub const MAX_REQUESTS: f64 = 1e15;
/// Problems reported before giving up on listing more.
const MAX_REPORTED: usize = 20;

/// A parsed trace: request counts per interval.
#[derive(Debug, Clone, PartialEq)]
pub struct Trace {
    /// Where the trace came from (a path, or the embedded scenario's name), for messages.
    pub source: String,
    pub start: DateTime<Utc>,
    pub interval_secs: i64,
    /// Requests in each interval (a count; fractional when the trace was resampled).
    pub counts: Vec<f64>,
}

/// One bad line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceIssue {
    pub line: usize,
    pub problem: String,
}

/// A trace that cannot be used, with every problem found (up to a limit).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct TraceError {
    pub source_name: String,
    pub issues: Vec<TraceIssue>,
}

impl fmt::Display for TraceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "trace {} is invalid:", self.source_name)?;
        for issue in &self.issues {
            if issue.line == 0 {
                write!(f, "\n  - {}", issue.problem)?;
            } else {
                write!(f, "\n  - line {}: {}", issue.line, issue.problem)?;
            }
        }
        Ok(())
    }
}

impl Trace {
    /// Parses a trace. `source` only names it in errors.
    pub fn parse(source: &str, text: &str) -> Result<Self, TraceError> {
        let mut issues = Vec::new();
        // (line, data-row index, instant, count): the index counts bad rows too, so the rows
        // around a bad one are still checked for their spacing.
        let mut rows: Vec<(usize, usize, DateTime<Utc>, f64)> = Vec::new();
        let mut data_rows = 0;
        let mut saw_header = false;
        // A spreadsheet's export may start with a byte-order mark.
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        for (i, raw) in text.lines().enumerate() {
            let line = i + 1;
            let row = raw.trim();
            if row.is_empty() || row.starts_with('#') {
                continue;
            }
            if !saw_header {
                saw_header = true;
                let header: Vec<&str> = row.split(',').map(str::trim).collect();
                if header != ["timestamp", "requests"] {
                    issues.push(TraceIssue {
                        line,
                        problem: format!(
                            "the header is {:?}; it must be `timestamp,requests`",
                            cut(row)
                        ),
                    });
                }
                continue;
            }
            match parse_row(row) {
                Ok((at, n)) => rows.push((line, data_rows, at, n)),
                Err(problem) => issues.push(TraceIssue { line, problem }),
            }
            data_rows += 1;
            if issues.len() >= MAX_REPORTED {
                issues.push(TraceIssue {
                    line: 0,
                    problem: format!("stopped after {MAX_REPORTED} problems"),
                });
                return Err(TraceError {
                    source_name: source.to_owned(),
                    issues,
                });
            }
        }
        if data_rows < 2 && issues.is_empty() {
            issues.push(TraceIssue {
                line: 0,
                problem:
                    "a trace needs at least two rows (the spacing between them is the interval)"
                        .into(),
            });
        }
        // Order first. Rows out of order or repeated are reported alone: sorting is the fix, and
        // a "gap" beside them would be advice to write rows the file already has.
        let mut spacing: Vec<TraceIssue> = rows
            .windows(2)
            .filter_map(|pair| {
                let gap = (pair[1].2 - pair[0].2).num_seconds();
                (gap <= 0).then(|| TraceIssue {
                    line: pair[1].0,
                    problem: out_of_order(gap, pair[0].0),
                })
            })
            .collect();
        // The interval: the spacing of the first two good rows that follow each other.
        let interval = spacing
            .is_empty()
            .then(|| {
                rows.windows(2)
                    .find(|p| p[1].1 == p[0].1 + 1)
                    .map(|p| (p[1].0, (p[1].2 - p[0].2).num_seconds()))
            })
            .flatten();
        if let Some((line, interval)) = interval {
            if !(STEP_SECS..=MAX_INTERVAL_SECS).contains(&interval) || interval % STEP_SECS != 0 {
                spacing.push(TraceIssue {
                    line,
                    problem: format!(
                        "the spacing is {interval} s; it must be a multiple of {STEP_SECS} s from {STEP_SECS} s to {MAX_INTERVAL_SECS} s"
                    ),
                });
            } else {
                for pair in rows.windows(2) {
                    let gap = (pair[1].2 - pair[0].2).num_seconds();
                    let expected = interval * (pair[1].1 - pair[0].1) as i64;
                    if gap != expected {
                        spacing.push(TraceIssue {
                            line: pair[1].0,
                            problem: format!(
                                "{} is {gap} s after the row on line {}; rows must be {interval} s apart, in order, with no gaps (where the source left out periods without data, write each as a row, with 0 if it had no requests)",
                                pair[1].2.to_rfc3339_opts(chrono::SecondsFormat::Secs, true),
                                pair[0].0
                            ),
                        });
                    }
                }
            }
        }
        let room = MAX_REPORTED.saturating_sub(issues.len());
        if spacing.len() > room {
            spacing.truncate(room);
            spacing.push(TraceIssue {
                line: 0,
                problem: format!("stopped after {MAX_REPORTED} problems"),
            });
        }
        issues.extend(spacing);
        if let Some(&(line, _, at, _)) = rows.first() {
            if at.timestamp() % STEP_SECS != 0 {
                issues.push(TraceIssue {
                    line,
                    problem: format!("the first timestamp must fall on a multiple of {STEP_SECS} s past the minute"),
                });
            }
        }
        if !issues.is_empty() {
            return Err(TraceError {
                source_name: source.to_owned(),
                issues,
            });
        }
        let (Some(&(_, _, start, _)), Some((_, interval_secs))) = (rows.first(), interval) else {
            return Err(TraceError {
                source_name: source.to_owned(),
                issues: vec![TraceIssue {
                    line: 0,
                    problem: "no two consecutive good rows give the spacing".into(),
                }],
            });
        };
        Ok(Self {
            source: source.to_owned(),
            start,
            interval_secs,
            counts: rows.into_iter().map(|(_, _, _, n)| n).collect(),
        })
    }

    /// The instant the trace ends (exclusive).
    pub fn end(&self) -> DateTime<Utc> {
        self.start + chrono::Duration::seconds(self.interval_secs * self.counts.len() as i64)
    }

    /// Number of simulator steps the trace spans.
    pub fn steps(&self) -> usize {
        self.counts.len() * (self.interval_secs / STEP_SECS) as usize
    }

    /// Requests arriving in each 10-second step, scaled by `scale`. Modelling assumption: the
    /// requests of an interval arrive evenly spread over it (the trace says nothing finer).
    pub fn per_step(&self, scale: f64) -> Vec<f64> {
        let per = (self.interval_secs / STEP_SECS) as usize;
        let mut out = Vec::with_capacity(self.counts.len() * per);
        for &n in &self.counts {
            let each = n * scale / per as f64;
            out.extend(std::iter::repeat_n(each, per));
        }
        out
    }

    /// The first `rows` rows (for quick runs and tests).
    pub fn truncated(&self, rows: usize) -> Self {
        Self {
            counts: self.counts[..rows.min(self.counts.len())].to_vec(),
            ..self.clone()
        }
    }
}

/// What is wrong with a row `gap` seconds (zero or less) after the row on line `before`.
fn out_of_order(gap: i64, before: usize) -> String {
    let what = if gap == 0 {
        format!("this row repeats the timestamp of the row on line {before}")
    } else {
        format!("this row is {} s before the row on line {before}", -gap)
    };
    format!("{what}; rows must be in time order, oldest first, one per timestamp")
}

fn parse_row(row: &str) -> Result<(DateTime<Utc>, f64), String> {
    let mut fields = row.split(',');
    let (Some(ts), Some(n), None) = (fields.next(), fields.next(), fields.next()) else {
        return Err(format!(
            "{:?} must have exactly two fields: timestamp,requests",
            cut(row)
        ));
    };
    let ts = ts.trim();
    let at = DateTime::parse_from_rfc3339(ts).map_err(|e| {
        format!(
            "timestamp {:?} is not RFC 3339 ({e}); write e.g. 2026-03-14T09:00:00Z",
            cut(ts)
        )
    })?;
    if at.offset().local_minus_utc() != 0 {
        return Err(format!(
            "timestamp {:?} is not in UTC; write it with a `Z`",
            cut(ts)
        ));
    }
    let n = n.trim();
    let count = n
        .parse::<f64>()
        .ok()
        .filter(|c| c.is_finite() && *c >= 0.0)
        .ok_or_else(|| format!("requests {:?} is not a non-negative number", cut(n)))?;
    if count > MAX_REQUESTS {
        return Err(format!(
            "requests {:?} is more than a trace row can hold (at most {MAX_REQUESTS:e})",
            cut(n)
        ));
    }
    Ok((at.with_timezone(&Utc), count))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_trace_and_spreads_intervals_over_steps() {
        let t = Trace::parse(
            "t.csv",
            "timestamp,requests\n2026-01-01T00:00:00Z,60\n2026-01-01T00:01:00Z,0\n",
        )
        .unwrap();
        assert_eq!(t.interval_secs, 60);
        assert_eq!(t.steps(), 12);
        let steps = t.per_step(1.0);
        assert_eq!(steps.len(), 12);
        assert!((steps[0] - 10.0).abs() < 1e-9 && steps[6] == 0.0);
        assert_eq!(t.end().to_rfc3339(), "2026-01-01T00:02:00+00:00");
    }

    #[test]
    fn every_bad_row_is_named_by_line() {
        let text = "timestamp,requests\n2026-01-01T00:00:00Z,1\n2026-01-01T00:00:10Z,2\n2026-01-01T00:00:20Z,-3\nyesterday,4\n2026-01-01T00:00:40+01:00,5\n2026-01-01T00:01:10Z,6\n";
        let err = Trace::parse("bad.csv", text).unwrap_err();
        let msg = err.to_string();
        assert!(msg.contains("line 4: requests \"-3\""), "{msg}");
        assert!(msg.contains("line 5: timestamp \"yesterday\""), "{msg}");
        assert!(
            msg.contains("line 6: timestamp") && msg.contains("not in UTC"),
            "{msg}"
        );
        // 00:01:10 is four rows after 00:00:10 but 60 s later instead of 40 s.
        assert!(msg.contains("line 7:") && msg.contains("no gaps"), "{msg}");
    }

    #[test]
    fn refuses_bad_headers_and_spacings() {
        let err = Trace::parse(
            "h.csv",
            "time,count\n2026-01-01T00:00:00Z,1\n2026-01-01T00:00:10Z,1\n",
        )
        .unwrap_err();
        assert!(err.to_string().contains("line 1: the header"), "{err}");
        let err = Trace::parse(
            "s.csv",
            "timestamp,requests\n2026-01-01T00:00:00Z,1\n2026-01-01T00:00:05Z,1\n",
        )
        .unwrap_err();
        assert!(err.to_string().contains("spacing is 5 s"), "{err}");
        let err = Trace::parse(
            "l.csv",
            "timestamp,requests\n2026-01-01T00:00:00Z,1\n2026-01-01T02:00:00Z,1\n",
        )
        .unwrap_err();
        assert!(err.to_string().contains("spacing is 7200 s"), "{err}");
        // Rows out of order, or twice over, say so rather than naming a negative spacing.
        let err = Trace::parse(
            "o.csv",
            "timestamp,requests\n2026-01-01T00:05:00Z,1\n2026-01-01T00:00:00Z,1\n",
        )
        .unwrap_err();
        assert!(
            err.to_string().contains(
                "line 3: this row is 300 s before the row on line 2; rows must be in time order"
            ),
            "{err}"
        );
        let err = Trace::parse(
            "d.csv",
            "timestamp,requests\n2026-01-01T00:05:00Z,1\n2026-01-01T00:05:00Z,1\n",
        )
        .unwrap_err();
        assert!(
            err.to_string()
                .contains("line 3: this row repeats the timestamp of the row on line 2"),
            "{err}"
        );
        // Further down too: two rows swapped, and a row written twice.
        let err = Trace::parse(
            "s.csv",
            "timestamp,requests\n2026-01-01T00:00:00Z,1\n2026-01-01T00:01:00Z,1\n\n2026-01-01T00:03:00Z,1\n2026-01-01T00:02:00Z,1\n2026-01-01T00:02:00Z,1\n",
        )
        .unwrap_err()
        .to_string();
        assert!(
            err.contains(
                "line 6: this row is 60 s before the row on line 5; rows must be in time order"
            ) && err.contains("line 7: this row repeats the timestamp of the row on line 6"),
            "{err}"
        );
        // ... and alone: no gap advice to write rows the file already has (00:01 to 00:03).
        assert!(!err.contains("with 0 if it had no requests"), "{err}");
        // A file running backwards after its first rows: reported up to the cap, then a note.
        let backwards: String = std::iter::once(
            "timestamp,requests\n2026-01-01T00:00:00Z,1\n2026-01-02T00:00:00Z,1\n".to_owned(),
        )
        .chain((0..40).map(|i| format!("2026-01-01T{:02}:00:00Z,1\n", 23 - i % 24)))
        .collect();
        let err = Trace::parse("b.csv", &backwards).unwrap_err();
        assert_eq!(err.issues.len(), MAX_REPORTED + 1, "{err}");
        assert!(
            err.to_string().ends_with("stopped after 20 problems"),
            "{err}"
        );
        // A first pair out of order still lets every later row be checked.
        let err = Trace::parse(
            "f.csv",
            "timestamp,requests\n2026-01-01T00:01:00Z,1\n2026-01-01T00:00:00Z,1\n2026-01-01T00:02:00Z,1\n2026-01-01T00:02:00Z,1\n",
        )
        .unwrap_err();
        assert_eq!(err.issues.len(), 2, "{err}");
        assert_eq!((err.issues[0].line, err.issues[1].line), (3, 5), "{err}");
        // A gap says how to write the rows the source left out.
        let err = Trace::parse(
            "g.csv",
            "timestamp,requests\n2026-01-01T00:00:00Z,1\n2026-01-01T00:01:00Z,1\n2026-01-01T00:03:00Z,1\n",
        )
        .unwrap_err();
        assert!(
            err.to_string().contains("line 4:")
                && err.to_string().contains("with 0 if it had no requests"),
            "{err}"
        );
        let err =
            Trace::parse("one.csv", "timestamp,requests\n2026-01-01T00:00:00Z,1\n").unwrap_err();
        assert!(err.to_string().contains("at least two rows"), "{err}");
    }

    #[test]
    fn a_count_may_be_a_decimal_a_bad_one_says_so_and_a_bom_is_skipped() {
        let row = |n: &str| {
            Trace::parse(
                "t.csv",
                &format!("timestamp,requests\n2026-01-01T00:00:00Z,1\n2026-01-01T00:01:00Z,{n}\n"),
            )
            .unwrap_err()
            .to_string()
        };
        let bom = "\u{feff}timestamp,requests\n2026-01-01T00:00:00Z,1\n2026-01-01T00:01:00Z,2\n";
        assert_eq!(
            Trace::parse("bom.csv", bom)
                .expect("a BOM is skipped")
                .counts,
            [1.0, 2.0]
        );
        let ok = |n: &str| {
            Trace::parse(
                "t.csv",
                &format!("timestamp,requests\n2026-01-01T00:00:00Z,1\n2026-01-01T00:01:00Z,{n}\n"),
            )
            .expect(n)
            .counts[1]
        };
        // A CloudWatch export's sum, a resampled row's fraction, the largest count.
        assert_eq!(ok("156.0"), 156.0);
        assert_eq!(ok("12.5"), 12.5);
        assert_eq!(ok("1e15"), 1e15);
        let err = row("99999999999999999999999");
        assert!(
            err.contains("more than a trace row can hold (at most 1e15)"),
            "{err}"
        );
        for bad in ["-3", "-0.5", "many", "NaN", "inf", ""] {
            let err = row(bad);
            assert!(err.contains("is not a non-negative number"), "{bad}: {err}");
        }
    }

    #[test]
    fn a_huge_bad_row_is_quoted_cut_not_whole() {
        // GIVEN a trace whose bad rows are megabytes long
        let huge = "x".repeat(2 * 1024 * 1024);
        let text = format!(
            "timestamp,requests\n2026-01-01T00:00:00Z,1\n{huge}\n{huge},1\n2026-01-01T00:00:20Z,{huge}\n"
        );
        let err = Trace::parse("big.csv", &text).unwrap_err().to_string();
        // THEN each is named by line, quoted at most 200 characters with an ellipsis
        assert!(err.len() < 2_000, "the message is {} bytes", err.len());
        assert!(
            err.contains("line 3:") && err.contains("line 4:") && err.contains("line 5:"),
            "{err}"
        );
        assert!(err.contains('…'), "{err}");
    }
}

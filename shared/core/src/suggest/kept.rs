//! Which of the operator's written peaks a suggestion replaces, and which it keeps as written.
//!
//! A suggestion replaces what the history could have shown: a weekly peak on kinds of day that
//! each had [`MIN_DAYS_PER_KIND`] whole days of history. Everything else is what the operator
//! knows and the history cannot, and dropping it would lose it without a word:
//! - a one-time peak (`at`): a launch or an announced event is in no history;
//! - a schedule that is not weekly (the first of the month, December only): a week or two of
//!   history cannot show it;
//! - a weekly peak on some days of a kind only (Mondays, Friday and Saturday): suggestions are
//!   per kind of day, from what most of its days did, and a Monday-only surge never shows there;
//! - a weekly peak on a kind of day with too little history (a weekend peak from a week's
//!   trace, which holds two weekend days).
//!
//! A kept peak composes with the suggested ones and the forecast as any claim does (the largest
//! live claim wins).

use crate::cron::Cron;
use crate::plan::file::PeakFile;
use crate::suggest::{TargetSuggestion, MIN_DAYS_PER_KIND};

/// Why `peak` stays as written beside `suggestion`, or `None` when the suggestion replaces it.
pub fn kept_because(peak: &PeakFile, suggestion: &TargetSuggestion) -> Option<String> {
    if peak.at.is_some() {
        return Some("a one-time event, which no history shows".to_owned());
    }
    let cron = peak.cron.as_deref().unwrap_or_default();
    let Some(days) = Cron::parse(cron).ok().and_then(|c| c.weekly_days()) else {
        return Some(format!(
            "`{cron}` is not a weekly schedule, which a week or two of history cannot show"
        ));
    };
    let (weekdays, weekend) = days.split_at(5);
    // A suggestion is per kind of day (MON-FRI, SAT,SUN), from what most days of it did: a
    // Monday-only surge is one weekday in five and never shows in it.
    let partly = |fires: &[bool]| fires.contains(&true) && fires.contains(&false);
    if partly(weekdays) || partly(weekend) {
        return Some(format!(
            "`{cron}` fires on some days of a kind only, and suggestions are for every weekday \
             or every weekend day"
        ));
    }
    let short = |fires: &[bool], had: usize| fires.contains(&true) && had < MIN_DAYS_PER_KIND;
    if short(weekdays, suggestion.weekdays) {
        return Some(format!(
            "it fires on weekdays, and the history holds {} whole weekday(s) ({MIN_DAYS_PER_KIND} \
             needed to call a window recurring)",
            suggestion.weekdays
        ));
    }
    if short(weekend, suggestion.weekend_days) {
        return Some(format!(
            "it fires on weekends, and the history holds {} whole weekend day(s) \
             ({MIN_DAYS_PER_KIND} needed to call a window recurring)",
            suggestion.weekend_days
        ));
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::duration::Span;

    fn suggestion(weekdays: usize, weekend_days: usize) -> TargetSuggestion {
        TargetSuggestion {
            peaks: Vec::new(),
            days: weekdays + weekend_days,
            weekdays,
            weekend_days,
            notes: Vec::new(),
        }
    }

    fn recurring(cron: &str) -> PeakFile {
        PeakFile {
            name: "written".into(),
            cron: Some(cron.into()),
            timezone: None,
            at: None,
            duration: Span::hours(2),
            floor: 10,
            suspend_scale_in: false,
        }
    }

    #[test]
    fn what_the_history_could_show_is_replaced_and_the_rest_kept() {
        // (peak, weekdays, weekend days of history, kept?)
        let one_time = PeakFile {
            cron: None,
            at: Some("2026-11-27T14:00:00Z".into()),
            ..recurring("")
        };
        let table = [
            (recurring("0 9 * * MON-FRI"), 5, 2, false),
            (recurring("0 9 * * MON-FRI"), 2, 0, true),
            (recurring("0 9 * * SAT,SUN"), 5, 2, true),
            (recurring("0 9 * * SAT,SUN"), 10, 4, false),
            (recurring("0 9 * * *"), 5, 2, true),
            (recurring("0 9 * * *"), 10, 4, false),
            (recurring("0 9 1 * *"), 20, 8, true),
            (recurring("0 9 * 12 MON-FRI"), 20, 8, true),
            (recurring("0 9 * * MON"), 20, 8, true),
            (recurring("0 9 * * FRI,SAT"), 20, 8, true),
            (recurring("0 9 * * SUN"), 20, 8, true),
            (recurring("0 9 * * 1-7"), 20, 8, false),
            (one_time.clone(), 20, 8, true),
        ];
        for (peak, weekdays, weekend, kept) in table {
            let why = kept_because(&peak, &suggestion(weekdays, weekend));
            assert_eq!(
                why.is_some(),
                kept,
                "{:?}/{:?} with {weekdays}+{weekend} days: {why:?}",
                peak.cron,
                peak.at
            );
        }
        // The reason names what the history lacked.
        let why = kept_because(&recurring("0 9 * * SAT,SUN"), &suggestion(5, 2)).unwrap();
        assert!(why.contains("2 whole weekend day(s)"), "{why}");
        let why = kept_because(&one_time, &suggestion(5, 2)).unwrap();
        assert!(why.contains("one-time"), "{why}");
    }
}

//! The schedule-review step of the tick over the in-memory review store: one review per planned
//! peak, written only when a verdict changes.
#![allow(clippy::unwrap_used)] // a test that cannot unwrap has failed

use chrono::{DateTime, Utc};
use headroom_core::forecast::schedule_review::{PeakReview, Verdict};
use headroom_core::ids::ScalableTargetId;
use headroom_core::plan::Plan;
use headroom_core::usecase::schedule_reviews::open_schedule_reviews;

use headroom_core::memory::{block_on, MemoryReviewStore};
use headroom_core::parse_plan;
use headroom_core::review::ReviewStatus;

fn plan() -> Plan {
    parse_plan(
        "t.toml",
        "version = 1\n[[target]]\nresource_id = \"endpoint/shop/variant/AllTraffic\"\nmin_capacity = 1\nmax_capacity = 80\n[[target.peak]]\nname = \"morning\"\ncron = \"0 9 * * MON-FRI\"\nduration = \"2h\"\nfloor = 20\n[[target.peak]]\nname = \"evening\"\ncron = \"0 18 * * *\"\nduration = \"1h\"\nfloor = 4\n",
    )
    .unwrap()
}

fn verdicts(morning: Verdict, evening: Verdict) -> Vec<(ScalableTargetId, Vec<PeakReview>)> {
    let v = |peak: &str, verdict| PeakReview {
        peak: peak.into(),
        verdict,
        occurrences: 5,
        evidence: format!("{verdict:?}"),
    };
    let id = plan().targets[0].id.clone();
    vec![(id, vec![v("morning", morning), v("evening", evening)])]
}

#[test]
fn a_verdict_opens_one_review_per_peak_and_the_next_refresh_writes_nothing() {
    let store = MemoryReviewStore::default();
    let plan = plan();
    let now: DateTime<Utc> = "2026-03-09T10:00:00Z".parse().unwrap();
    let first = block_on(open_schedule_reviews(
        &store,
        &plan,
        &verdicts(Verdict::Wasteful, Verdict::Ok),
        now,
    ));
    assert_eq!(first.written.len(), 1, "{first:?}");
    assert_eq!(first.written[0].1, "opened");
    let writes = store.writes.load(std::sync::atomic::Ordering::SeqCst);
    let again = block_on(open_schedule_reviews(
        &store,
        &plan,
        &verdicts(Verdict::Wasteful, Verdict::Ok),
        now + chrono::Duration::hours(1),
    ));
    assert!(again.written.is_empty(), "{again:?}");
    assert_eq!(
        store.writes.load(std::sync::atomic::Ordering::SeqCst),
        writes
    );
    let changed = block_on(open_schedule_reviews(
        &store,
        &plan,
        &verdicts(Verdict::Insufficient, Verdict::Shifted),
        now + chrono::Duration::hours(2),
    ));
    assert_eq!(
        changed.written.iter().map(|w| w.1).collect::<Vec<_>>(),
        ["updated", "opened"]
    );
    let all = store.schedule_all();
    assert_eq!(all.len(), 2, "one review per peak: {all:?}");
    assert!(all.iter().all(|r| r.status == ReviewStatus::Open));
}

#[test]
fn without_a_store_nothing_is_written() {
    let plan = plan();
    let now: DateTime<Utc> = "2026-03-09T10:00:00Z".parse().unwrap();
    let report = block_on(open_schedule_reviews(
        &(),
        &plan,
        &verdicts(Verdict::Wasteful, Verdict::Wasteful),
        now,
    ));
    assert!(report.written.is_empty() && report.errors.is_empty());
}

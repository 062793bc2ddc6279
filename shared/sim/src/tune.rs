//! The backtest behind `plan suggest --budget`: every setting of the tuning grid
//! (`headroom_core::suggest::tune`) applied to the suggested plan and simulated over the history
//! before `--until` against target tracking alone; each target keeps the setting the rules
//! choose, and the evidence says what it, the setting as written and the base plan as it stands
//! cost. Only the history is simulated: the walk-forward rule of the suggestion holds for its
//! tuning too.

use chrono::{DateTime, Utc};
use headroom_core::forecast::profile::DayKind;
use headroom_core::plan::forecast::DEFAULT_MIN_HISTORY;
use headroom_core::plan::PlanFile;
use headroom_core::suggest::plan::{instant, SuggestError};
use headroom_core::suggest::tune::{
    backtest_ceiling, choose, describe_base, grid, week_weighted, Backtest, Knobs, Stretch,
    BACKTEST_COST_ERROR, MIN_BACKTEST, WEEK_WEIGHTING,
};
use headroom_core::Span;

use crate::engine::{run_reactive, RunOptions, Strategy, StrategyResult};
use crate::stats::{Quarter, QUARTER_SECS};
use crate::suggest::suggest_untuned;
use crate::trace::Trace;
use crate::world::World;
use crate::Scenario;

/// The suggested plan, each target at the grid setting chosen for `budget`.
pub fn tuned(
    base: (&str, &str),
    trace: &Trace,
    world: &World,
    until: Option<DateTime<Utc>>,
    budget: f64,
) -> Result<String, SuggestError> {
    let grid = match backtest_grid(base, trace, world, until)? {
        Ok(grid) => grid,
        Err(untuned) => return Ok(untuned),
    };
    let Grid {
        suggested,
        file,
        settings,
        results,
        base_results,
        span,
        warm_up,
        interval_secs,
    } = grid;
    let scored = if warm_up == 0 {
        format!(
            "scored from its start (too short to leave out the forecast's warm-up and keep {} to score)",
            MIN_BACKTEST
        )
    } else {
        format!(
            "scored after the first {:.1} (the forecast's warm-up, never shorter than its default)",
            (warm_up as i64 * interval_secs) as f64 / 86_400.0
        )
    };
    let mut lines = vec![format!(
        "Tuned to at most {budget:.2}x target tracking's instance-hours (a setting's backtest at \
         most {:.2}x, leaving {BACKTEST_COST_ERROR}x for what a week's backtest misprices): {} \
         settings simulated over the {:.1} day(s) of history{}, {scored}, {WEEK_WEIGHTING}.",
        backtest_ceiling(budget),
        settings.len(),
        span.num_minutes() as f64 / 1440.0,
        until.map_or(String::new(), |u| format!(" before {}", instant(u))),
    )];
    let mut kept: Vec<Knobs> = Vec::with_capacity(file.targets.len());
    for (i, target) in file.targets.iter().enumerate() {
        let measured: Vec<(usize, Backtest)> = results
            .iter()
            .enumerate()
            .filter_map(|(k, r)| r.get(i).copied().flatten().map(|b| (k, b)))
            .collect();
        let backtests: Vec<Backtest> = measured.iter().map(|(_, b)| *b).collect();
        let Some(choice) = choose(&backtests, budget) else {
            lines.push(format!(
                "  {}: not simulated by the world: as written",
                target.resource_id
            ));
            kept.push(Knobs::AS_WRITTEN);
            continue;
        };
        let (k, chosen) = measured[choice.index];
        let knobs = settings[k].acting_on(target);
        let as_written = measured
            .iter()
            .find(|(k, _)| *k == 0)
            .map_or(String::new(), |(_, b)| {
                format!(
                    "; as written ({}): {}",
                    Knobs::AS_WRITTEN.describe(target),
                    b.describe()
                )
            });
        let base_plan = base_results
            .get(i)
            .and_then(Option::as_ref)
            .map_or(String::new(), |(what, b)| {
                format!("; the base plan ({what}): {}", b.describe())
            });
        let verdict = if choice.within_ceiling {
            "kept".to_owned()
        } else {
            format!(
                "no setting backtests within {:.2}x, kept the cheapest",
                backtest_ceiling(budget)
            )
        };
        lines.push(format!(
            "  {}: {verdict}: {}: {}{as_written}{base_plan}",
            target.resource_id,
            knobs.describe(target),
            chosen.describe()
        ));
        if target.forecast.as_ref().is_some_and(|f| !f.is_active()) {
            let tuned = if target.guard.is_some() {
                "only the guard's hold was tuned"
            } else {
                "nothing was tuned"
            };
            lines.push(format!(
                "  {}: the forecast stays forecast_only, as the base plan has it: it claims \
                 nothing, so {tuned}; to tune the forecast, set its mode to \"active\" in the \
                 base plan and suggest again",
                target.resource_id
            ));
        }
        kept.push(knobs);
    }
    let mut f = file.clone();
    for (t, knobs) in f.targets.iter_mut().zip(&kept) {
        knobs.apply(t);
    }
    with_evidence(&suggested, &lines, &f)
}

/// Every grid setting's backtest of the suggested plan, and the base plan's own.
pub struct Grid {
    /// The untuned suggestion (evidence and plan).
    pub suggested: String,
    /// Its plan, read back.
    pub file: PlanFile,
    pub settings: Vec<Knobs>,
    /// `results[setting][target]`.
    pub results: Vec<Vec<Option<Backtest>>>,
    /// The base plan's own backtest, per target of [`Grid::file`] (what the base plan gives the
    /// target, as `describe_base` says it, and what it measured): beside the suggestion in the
    /// evidence, so that an operator sees what adopting it changes. Not a candidate: a week's
    /// backtest favours what does not learn over a forecast that improves with history
    /// (`headroom_core::suggest::tune`'s module doc, "Left out as well").
    pub base_results: Vec<Option<(String, Backtest)>>,
    /// The history simulated.
    pub span: chrono::Duration,
    /// Trace rows of it left unscored (the forecast's warm-up).
    pub warm_up: usize,
    pub interval_secs: i64,
}

/// The suggestion, every grid setting's backtest and the base plan's over the history before
/// `until`; or
/// `Err(suggestion)`, the untuned suggestion with the reason in its evidence, when the history
/// is too short to backtest or the plan has no target.
pub fn backtest_grid(
    base: (&str, &str),
    trace: &Trace,
    world: &World,
    until: Option<DateTime<Utc>>,
) -> Result<Result<Grid, String>, SuggestError> {
    let suggested = suggest_untuned(base, trace, world, until, &[])?;
    let history = match until {
        Some(u) => {
            let rows = ((u - trace.start).num_seconds() / trace.interval_secs.max(1)).max(0);
            trace.truncated(rows as usize)
        }
        None => trace.clone(),
    };
    let span = history.end() - history.start;
    // The settings apply to the suggested plan (its forecast section is the suggestion's).
    let file: PlanFile = toml::from_str(body(&suggested)).map_err(|e| SuggestError::Base {
        file: "the suggested plan".into(),
        problem: format!("cannot be read back as TOML (a headroom bug, please report it): {e}"),
    })?;
    if span < MIN_BACKTEST.to_chrono() || file.targets.is_empty() {
        let why = format!(
            "Not tuned to the budget: {:.1} day(s) of history, the backtest needs at least {}.",
            span.num_minutes() as f64 / 1440.0,
            MIN_BACKTEST
        );
        return with_evidence(&suggested, &[why], &file).map(Err);
    }
    // The backtest scores the history after the longest forecast warm-up of the plan, when at
    // least a day is left after it.
    let warm_up = warm_up_rows(&file, &history);
    let settings = grid(Span::seconds(history.interval_secs));
    let mut plans: Vec<PlanFile> = settings
        .iter()
        .map(|knobs| {
            let mut f = file.clone();
            for t in &mut f.targets {
                knobs.apply(t);
            }
            f
        })
        .collect();
    // The base plan as it stands, last (it parsed before the suggestion was made).
    let base_file: Option<PlanFile> = toml::from_str(base.1).ok();
    plans.extend(base_file.clone());
    // Every plan's days are told apart in the suggested targets' forecast time zones (a base
    // target without a forecast has no forecast zone), so the base plan is scored on the same
    // days as the settings.
    let zones = time_zones(&file);
    let mut results = backtest_all(&plans, world, &history, warm_up, &zones);
    let base_results = match base_file {
        Some(b) => {
            let measured = results.pop().unwrap_or_default();
            file.targets
                .iter()
                .map(|t| {
                    let k = b
                        .targets
                        .iter()
                        .position(|bt| bt.resource_id == t.resource_id)?;
                    Some((
                        describe_base(&b.targets[k]),
                        measured.get(k).copied().flatten()?,
                    ))
                })
                .collect()
        }
        None => vec![None; file.targets.len()],
    };
    Ok(Ok(Grid {
        suggested,
        file,
        settings,
        results,
        base_results,
        span,
        warm_up,
        interval_secs: history.interval_secs,
    }))
}

/// Each forecast target's time zone in `file`, by resource id.
fn time_zones(file: &PlanFile) -> Vec<(String, chrono_tz::Tz)> {
    let Ok(text) = toml::to_string(file) else {
        return Vec::new();
    };
    let Ok(plan) = headroom_core::parse_plan("the suggested plan", &text) else {
        return Vec::new();
    };
    plan.targets
        .iter()
        .filter_map(|t| Some((t.id.to_string(), t.forecast.as_ref()?.timezone)))
        .collect()
}

/// `results[plan][target]`: what each plan did to each of its targets, the plans simulated in
/// parallel, one thread per core, each thread taking every n-th plan.
fn backtest_all(
    plans: &[PlanFile],
    world: &World,
    history: &Trace,
    warm_up: usize,
    zones: &[(String, chrono_tz::Tz)],
) -> Vec<Vec<Option<Backtest>>> {
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    let mut results: Vec<Vec<Option<Backtest>>> = vec![Vec::new(); plans.len()];
    std::thread::scope(|scope| {
        let handles: Vec<_> = (0..threads)
            .map(|k| {
                scope.spawn(move || {
                    (k..plans.len())
                        .step_by(threads)
                        .map(|i| (i, backtest(&plans[i], world, history, warm_up, zones)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        for h in handles {
            // A panicking simulation is a bug: a release build aborts on it; elsewhere its
            // thread's plans stay unmeasured.
            for (i, r) in h.join().unwrap_or_default() {
                results[i] = r;
            }
        }
    });
    results
}

/// Trace rows before every target's forecast can act (its `min_history`, at least the default
/// three days), or 0 when that would leave less than [`MIN_BACKTEST`] to score. Never less than
/// the default: the tuner prices what a setting costs once the forecast knows every kind of
/// day; scoring the first days too (a forecast from two days, borrowing weekdays for a
/// weekend) priced every setting higher and chose cheaper ones that cut less (measured).
fn warm_up_rows(file: &PlanFile, history: &Trace) -> usize {
    let longest = file
        .targets
        .iter()
        .filter_map(|t| t.forecast.as_ref())
        .map(|f| {
            f.min_history
                .unwrap_or(DEFAULT_MIN_HISTORY)
                .max(DEFAULT_MIN_HISTORY)
        })
        .max()
        .unwrap_or(Span::seconds(0));
    let rows = (longest.as_secs() / history.interval_secs.max(1)) as usize;
    let left = history.counts.len().saturating_sub(rows) as i64 * history.interval_secs;
    if left >= MIN_BACKTEST.as_secs() {
        rows
    } else {
        0
    }
}

/// The plan after the comment lines on top of `text`.
fn body(text: &str) -> &str {
    let header: usize = text
        .lines()
        .take_while(|l| l.starts_with('#') || l.is_empty())
        .map(|l| l.len() + 1)
        .sum();
    &text[header.min(text.len())..]
}

/// The suggestion's evidence, then `lines` as more evidence, then `file` as TOML: the form
/// `render_plan` writes, checked by the same validation.
fn with_evidence(
    suggested: &str,
    lines: &[String],
    file: &PlanFile,
) -> Result<String, SuggestError> {
    let evidence = &suggested[..suggested.len() - body(suggested).len()];
    let mut out = evidence.trim_end().to_owned();
    out.push_str("\n#\n");
    for line in lines {
        out.push_str("# ");
        out.push_str(line);
        out.push('\n');
    }
    out.push('\n');
    out.push_str(&toml::to_string(file).map_err(|e| {
        SuggestError::Render(headroom_core::suggest::render::RenderError::Write(
            e.to_string(),
        ))
    })?);
    headroom_core::parse_plan("the suggested plan", &out).map_err(|e| {
        SuggestError::Render(headroom_core::suggest::render::RenderError::Invalid(e))
    })?;
    Ok(out)
}

/// Each target's backtest under `file` over `history` after `warm_up` (the first rows, while the
/// forecast has too little history to act, would make every setting look alike): one run over
/// the whole history, its quarter hours after the warm-up scored, each kind of day (in the time
/// zone `zones` gives the target, else its forecast's, else UTC) weighted by its share of a
/// week (`tune::week_weighted`). `None` where the world does not simulate the target (or the plan
/// does not hold together with the world, which `simulate` reports).
fn backtest(
    file: &PlanFile,
    world: &World,
    history: &Trace,
    warm_up: usize,
    zones: &[(String, chrono_tz::Tz)],
) -> Vec<Option<Backtest>> {
    let none = || vec![None; file.targets.len()];
    let Ok(text) = toml::to_string(file) else {
        return none();
    };
    let Ok(plan) = headroom_core::parse_plan("the suggested plan", &text) else {
        return none();
    };
    let Ok(scenario) = Scenario::new("backtest", plan, world.clone(), history.clone()) else {
        return none();
    };
    let mut options = RunOptions::default();
    let tt = run_reactive(&scenario, Strategy::TargetTracking, &mut options);
    let hr = run_reactive(&scenario, Strategy::Headroom, &mut options);
    // Quarter k is the k-th clock quarter from the one holding the history's start; the first
    // scored is the first whole one after the warm-up.
    let first_quarter = history.start.timestamp().div_euclid(QUARTER_SECS);
    let scored_from = history.start.timestamp() + warm_up as i64 * history.interval_secs;
    let first = (scored_from + QUARTER_SECS - 1).div_euclid(QUARTER_SECS) - first_quarter;
    scenario
        .plan
        .targets
        .iter()
        .map(|t| {
            let id = t.id.to_string();
            let (tq, hq) = (quarters(&tt, &id)?, quarters(&hr, &id)?);
            // Days in the zone `zones` gives the target, else its forecast's, else UTC.
            let tz = zones
                .iter()
                .find(|(z, _)| *z == id)
                .map(|(_, tz)| *tz)
                .or(t.forecast.as_ref().map(|f| f.timezone))
                .unwrap_or(chrono_tz::UTC);
            let stretches: Vec<Stretch> = (first.max(0) as usize..tq.len().min(hq.len()))
                .filter_map(|q| {
                    let at =
                        DateTime::from_timestamp((first_quarter + q as i64) * QUARTER_SECS, 0)?;
                    Some(Stretch {
                        kind: DayKind::of(at.with_timezone(&tz).date_naive()),
                        seconds: QUARTER_SECS as u32,
                        breach_minutes: hq[q].breach_minutes,
                        instance_hours: hq[q].instance_seconds / 3600.0,
                        tt_breach_minutes: tq[q].breach_minutes,
                        tt_instance_hours: tq[q].instance_seconds / 3600.0,
                    })
                })
                .collect();
            Some(week_weighted(&stretches))
        })
        .collect()
}

/// Target `id`'s quarter hours in run `r`.
fn quarters<'a>(r: &'a StrategyResult, id: &str) -> Option<&'a [Quarter]> {
    r.per_target
        .iter()
        .find(|t| t.target == id)
        .map(|t| t.quarters.as_slice())
}

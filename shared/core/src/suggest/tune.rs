//! Tuning a suggested plan to a cost budget, from a backtest on the endpoint's own history.
//!
//! A forecast claim and a guard both buy fewer breach minutes with instance-hours, and on bursty
//! traffic they buy them at very different prices: one endpoint's history says which. So the
//! offline `plan suggest` (which has a world to simulate) backtests a small grid of settings over
//! the history it was given, and keeps, per target, the one with the fewest breach minutes whose
//! instance-hours stay within `budget` times what target tracking alone used on the same history,
//! less the backtest's own error ([`BACKTEST_COST_ERROR`]; ties: the cheaper). When none fits
//! that ceiling, the cheapest is kept and the evidence says so. Measured with
//! `shared/sim/examples/tunecheck.rs` when the week weighting (below) came in, a week's backtest
//! cost ratio sat 0.00-0.06x above the whole trace's on four synthetic 27-day web-like traces,
//! 0.04-0.10x above on a bursty 14-day one at 5 minutes, and 0.02x below to 0.05x above on the
//! AAPL tweets: enough to steer by, not to split hairs at the budget's edge. Measured again over
//! seventeen scenarios, the error on the cheap side is what [`BACKTEST_COST_ERROR`] keeps clear
//! of. (A cheaper end to the grid, quantile 0.2, was tried and left out: where it was chosen, on
//! thin noisy series whose other settings all backtested over budget, it cut 5-8 points of
//! breach minutes to save 0.03x.)
//!
//! Why the week weighs its days ([`week_weighted`]): the days scored after a three-day warm-up
//! are forecast from three to six days, and their mix is the accident of the trace's first
//! weekday; a weekend among them is the forecast's dearest state (it borrows the weekdays'
//! history until three weekend days exist). Unweighted, a week from a Monday scored Thursday to
//! Sunday, half weekend, and priced the single-minute settings up to 0.08x above the whole
//! trace; a weaker, cheaper setting was kept.
//!
//! Left out: a `resolution = "1m"` with a margin above 1.0 (1.2, 1.6) costs 1.16-1.38x on the
//! whole trace, since the margin multiplies slot peaks that already cover single minutes.
//!
//! Left out too: the guard's `scale_out` (every setting tried again with it on). Measured on the
//! shipped learned scenarios and six synthetic held-out ones, the tuner kept it on four of ten,
//! for 0-5 more points of breach cut; but twice the settings is twice the chances to keep one
//! whose week happened to be cheap, and two of ten (tweets-aapl, a web trace) landed at
//! 1.158-1.159x on the whole trace where every tuned plan had stayed within 1.15x. Pricing each
//! setting's day-to-day cost spread into the choice (0.3 or 0.6 standard errors) cut 1-3 points
//! elsewhere and left the web trace over. Turned on in every base plan instead (the grid as it
//! is, so no more chances), the cuts moved -2.2 to +4.9 points and three of fourteen (both
//! tweet traces, a web one) landed at 1.158-1.159x. It stays the operator's switch.
//!
//! Left out, measured: a tolerance on the choice (among the settings within budget, the cheapest
//! whose backtest cut is within 1, 2 or 3 points of the best, against the winner's curse of
//! picking the luckiest week). Over the four shipped learned scenarios and ten held-out ones,
//! at 2 points it brought the one plan over budget on its whole trace (a load-balancer-like
//! one, 1.153x) to 1.148x and the mean cost from 1.124x to 1.115x, but cut 0.7 points of breach
//! reduction on average and 3-4 on two web-like traces, whose best backtests were real gains;
//! at 1 point it left the overrun and cost 0.5 points. The budget's edge is the backtest's
//! estimation error (above), which a tolerance on the cut does not address: the margin on the
//! cost ([`BACKTEST_COST_ERROR`]) does, where it breaks the budget.
//!
//! Left out as well: the forecast off (`mode = "forecast_only"`, peaks and guard alone), at each
//! hold. On the default scenario's 7-day trace the operator's plan without a forecast cuts 72 %
//! at 1.12x where the tuned suggestion cuts 32 % at 1.13x (44 % at 1.14x since the guard keeps
//! the operator's hold until the forecast stands, `hold_without_forecast`), and this setting was
//! meant to find that. But the backtest's days are forecast from three to six days of history,
//! and the forecast improves as its history grows while peaks and a guard do not: the backtest
//! kept the forecast off where the whole trace needed it (tweets-goog -68 % to -39 %, two
//! held-out load-balancer traces -28 % to -14 % and -71 % to -37 %). The evidence prints the base
//! plan's own backtest beside the kept setting instead, for the operator to weigh.
//!
//! Measured, not adopted yet: pricing each setting on the history's last week replayed after
//! it (one run over history + that week again; breach minutes still scored on the days after
//! the warm-up, where no day is forecast from itself; instance-hours from the replayed week,
//! forecast from the whole history as in service). Over the seventeen scenarios, for the
//! settings that backtested at 1.05-1.20x, the mean absolute error of the cost against the
//! whole trace fell from 0.022x to 0.010x (per-trace medians from -0.087x..+0.027x to
//! -0.040x..+0.025x), but the figures it buys are small: with 0.01x of [`BACKTEST_COST_ERROR`]
//! (the same rule: the median error of fifteen of the seventeen) the mean cut over the
//! seventeen rose 1.0 point, every trace within 1.15x. On the thirteen held-out ones it rose
//! 1.8 points, none worse by more than 0.1; tweets-aapl lost 5.2 (it no longer kept the
//! setting that cost 1.146x over the whole trace) and nyc-taxi-july4 2.4. One more week of
//! simulated time per setting.
//!
//! The grid, in one place:
//! - the forecast's `quantile`: 0.3, 0.4 or 0.5 (the default), and its `max_margin`: 1.2 (the
//!   default) or 1.6 (on the tweet traces 2.0 chose what 1.6 did: the learned margin stays
//!   below it), unless the base plan sets them (the operator's figures are kept). A
//!   low quantile with a wide margin follows each slot's usual level and scales it, where a high
//!   quantile chases the slot's bursty days: on bursty traffic the first buys more per
//!   instance-hour;
//! - a margin learned at a higher quantile of the forecast's own errors, `margin_quantile` 0.7,
//!   0.8, 0.9 or 0.95 (default 0.6), over quantile 0.3 or 0.5 with `max_margin` 1.6. On web-like
//!   traffic the default margin is near 1.0 and every setting above costs about the same
//!   (1.04-1.05x, -52 % on a synthetic 27-day trace), while single-minute peaks (below) cost
//!   1.15-1.18x: nothing lay between. These fill the gap (there 1.08x at -63 %, 1.13x at -71 %,
//!   1.17x at -77 %), so the budget picks a point on a frontier instead of the cheap end of a
//!   cliff. On bursty 5-minute traffic they cost 1.3-1.6x and are never kept. 0.7 came last,
//!   for low traffic: at 50 requests a minute (two instances) one more instance is half as
//!   many again, and the frontier jumped from 1.10x at -70 % to 1.17x at -82 %; 0.7 lands
//!   between. Over twenty scenarios (the shipped learned ones, the held-out set and six of it
//!   resampled at a fifth of the traffic) it moved three (-68.3 % to -75.1 % at 1.100x to
//!   1.133x; -56.1 % to -59.3 % at 1.099x to 1.128x; -55.1 % to -56.0 % at 1.139x to 1.119x)
//!   and left the rest as they were. A minute-level quantile of 0.05 beside it changed one
//!   trace, for the worse, and was left out;
//! - a `forecast_only` forecast keeps its mode (the operator's decision to switch) and claims
//!   nothing, so of each setting only the guard's hold acts on it ([`Knobs::acting_on`]);
//! - the guard's `hold`: as written, or 15m or 5m when shorter than written, which then keeps the
//!   written hold as `hold_without_forecast` for the days before the forecast stands (the short
//!   hold counts on the forecast's floor: on the held-out load-balancer-like traces this took
//!   the first two days' cut from 12-16 % to 34-37 %, about 2.5 points over the run at +0.01x);
//!   a target without a guard only varies its forecast. `max_duration`, the alarms and the
//!   step-down stay as written;
//! - on minute-level history only, also `resolution` 1m at quantile 0.1 or 0.2 with no margin
//!   (`max_margin` 1.0), at each hold. Breach minutes are single minutes: a slot peak read at
//!   one minute holds the minute-to-minute noise a margin over 5-minute means only
//!   approximates. Weighted by the week they backtest 0.00-0.06x above the whole trace on the
//!   synthetic web-like traces. At 5-minute rows a 1m resolution reads the same peaks, so the
//!   grid leaves it out there.
//!
//! Pure: the caller simulates each candidate and hands back what it measured.

use crate::duration::Span;
use crate::forecast::profile::DayKind;
use crate::plan::file::TargetFile;

/// At most this many times target tracking's instance-hours, unless told otherwise: the goal a
/// capacity controller is held to (`issues show 12`, "How good").
pub const DEFAULT_BUDGET: f64 = 1.15;
pub const QUANTILES: [f64; 3] = [0.3, 0.4, 0.5];
pub const MAX_MARGINS: [f64; 2] = [1.2, 1.6];
pub const SHORTER_HOLDS: [Span; 2] = [Span::minutes(15), Span::minutes(5)];
/// On a history finer than the forecast's default resolution (minute-level data: [`grid`]), the
/// grid also tries slot peaks of single minutes at these quantiles, with no margin above them.
pub const MINUTE_QUANTILES: [f64; 2] = [0.1, 0.2];
pub const MINUTE_RESOLUTION: Span = Span::minutes(1);
pub const MINUTE_MAX_MARGIN: f64 = 1.0;
/// Margins learned at a higher quantile of the forecast's own errors than the default 0.6: the
/// settings between "the slot's usual level" and "single-minute peaks" in cost (see the grid).
pub const HIGH_MARGIN_QUANTILES: [f64; 4] = [0.7, 0.8, 0.9, 0.95];
/// The seasonal quantiles those margins scale, and the cap that leaves them room.
pub const WIDE_MARGIN_QUANTILES: [f64; 2] = [0.3, 0.5];
pub const WIDE_MAX_MARGIN: f64 = 1.6;
/// How far within the budget a setting's backtest must stay to be kept ([`choose`]): a week's
/// backtest misprices the whole run, and the price it gets wrong on the cheap side is the one
/// that breaks the budget. Measured with `tunecheck` (see the module's doc) over the four
/// shipped learned scenarios and the thirteen held-out ones, for every setting that backtested
/// at 1.08-1.16x: the whole trace cost from 0.087x less to 0.104x more than its backtest, each
/// trace's settings bunched around an error of its own (medians from -0.085x to +0.039x), and
/// 0.02x covers that median on fifteen of the seventeen. Without it the tuner kept, on
/// tweets-aapl, a 15-minute hold that backtested at 1.140x and cost 1.174x over the whole
/// trace; with it every one of the seventeen stays within 1.15x (the dearest, a
/// load-balancer-like trace, at 1.149x), and the mean cost falls from 1.125x to 1.114x. It
/// costs cut where the backtest was right: 1.2 points on average, most on the held-out
/// web-like traces with many random surges (-5.4 and -6.2 points on two of them), none on the
/// taxi and GOOG scenarios nor on calm1 and calm2 (the regime of the real web trace).
pub const BACKTEST_COST_ERROR: f64 = 0.02;

/// The dearest backtest [`choose`] keeps for a whole run within `budget`.
pub fn backtest_ceiling(budget: f64) -> f64 {
    budget - BACKTEST_COST_ERROR
}

/// Less history than this is not backtested: the suggestion is printed untuned.
pub const MIN_BACKTEST: Span = Span::hours(24);
/// Each kind of day scored for at least this long, or the backtest is not weighted by the week
/// ([`week_weighted`]).
pub const MIN_KIND_SCORED: Span = Span::hours(24);
/// How the plan's evidence states [`week_weighted`]'s rule: change it with the rule.
pub const WEEK_WEIGHTING: &str =
    "weekdays and weekend days weighed 5:2 as in a week once each has a whole day scored";

/// One setting of the grid. `None`: as the base plan writes it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Knobs {
    pub quantile: Option<f64>,
    pub max_margin: Option<f64>,
    pub hold: Option<Span>,
    pub resolution: Option<Span>,
    pub margin_quantile: Option<f64>,
}

impl Knobs {
    pub const AS_WRITTEN: Knobs = Knobs {
        quantile: None,
        max_margin: None,
        hold: None,
        resolution: None,
        margin_quantile: None,
    };

    /// "quantile 0.4, guard hold 10m", as the knobs read on `target`.
    pub fn describe(&self, target: &TargetFile) -> String {
        let mut t = target.clone();
        self.apply(&mut t);
        let f = t.forecast.as_ref();
        let q = f
            .and_then(|f| f.quantile)
            .unwrap_or(crate::plan::forecast::DEFAULT_QUANTILE);
        let m = f
            .and_then(|f| f.max_margin)
            .unwrap_or(crate::plan::forecast::DEFAULT_MAX_MARGIN);
        // The resolution is named only where it is not the default, as the plan writes it.
        let mut r = f
            .and_then(|f| f.resolution)
            .filter(|r| *r != crate::plan::forecast::DEFAULT_RESOLUTION)
            .map_or(String::new(), |r| format!(", resolution {r}"));
        // Likewise the margin's quantile.
        if let Some(mq) = f
            .and_then(|f| f.margin_quantile)
            .filter(|mq| *mq != crate::plan::forecast::DEFAULT_MARGIN_QUANTILE)
        {
            r.push_str(&format!(", margin_quantile {mq}"));
        }
        // A forecast that only records has no knob that acts (`acting_on`): it is named as such.
        let forecast = if f.is_some_and(|f| !f.is_active()) {
            "forecast_only".to_owned()
        } else {
            format!("quantile {q}, max_margin {m}{r}")
        };
        match t.guard.as_ref() {
            Some(g) => format!(
                "{forecast}, guard hold {}",
                g.hold.unwrap_or(crate::plan::DEFAULT_GUARD_HOLD)
            ),
            None => forecast,
        }
    }

    /// The knobs of these that act on `target`: a forecast that only records claims nothing,
    /// so its quantile, margins and resolution stay as written and only the guard's hold is
    /// kept (settings that differ in the rest backtest alike, and the first of them would
    /// otherwise be printed as if measured).
    pub fn acting_on(&self, target: &TargetFile) -> Knobs {
        if target.forecast.as_ref().is_some_and(|f| !f.is_active()) {
            Knobs {
                hold: self.hold,
                ..Knobs::AS_WRITTEN
            }
        } else {
            *self
        }
    }

    /// Sets the knobs on `target`, leaving what the operator wrote where the grid keeps it.
    pub fn apply(&self, target: &mut TargetFile) {
        if let Some(forecast) = target.forecast.as_mut() {
            if forecast.quantile.is_none() {
                forecast.quantile = self.quantile;
            }
            if forecast.max_margin.is_none() {
                forecast.max_margin = self.max_margin;
            }
            if forecast.resolution.is_none() {
                forecast.resolution = self.resolution;
            }
            if forecast.margin_quantile.is_none() {
                forecast.margin_quantile = self.margin_quantile;
            }
        }
        if let (Some(hold), Some(guard)) = (self.hold, target.guard.as_mut()) {
            let written = guard.hold.unwrap_or(crate::plan::DEFAULT_GUARD_HOLD);
            if hold < written {
                guard.hold = Some(hold);
                // The shorter hold counts on the forecast's floor; until the forecast stands
                // (its first days of history), the operator's hold is the one known to fit. A
                // forecast-only section never stands: its guard takes the shorter hold alone,
                // as one without a forecast does.
                let active = target.forecast.as_ref().is_some_and(|f| f.is_active());
                if active && guard.hold_without_forecast.is_none() {
                    guard.hold_without_forecast = Some(written);
                }
            }
        }
    }
}

/// "its peaks, its guard, no forecast": what a base plan gives a target, as the tuning
/// evidence names it beside the plan's own backtest. A `forecast_only` section claims nothing,
/// so it reads as no forecast.
pub fn describe_base(t: &TargetFile) -> String {
    let part = |has: bool, what: &str| {
        if has {
            format!("its {what}")
        } else {
            format!("no {what}")
        }
    };
    [
        part(!t.peaks.is_empty(), "peaks"),
        part(t.guard.is_some(), "guard"),
        part(
            t.forecast.as_ref().is_some_and(|f| f.is_active()),
            "forecast",
        ),
    ]
    .join(", ")
}

/// Every setting tried over a history at `history_period`: the as-written plan first. A
/// history finer than the forecast's default resolution also tries single-minute slot peaks
/// (at the default resolution or coarser, a 1m resolution would read the same peaks again).
pub fn grid(history_period: Span) -> Vec<Knobs> {
    let minute_level = history_period < crate::plan::forecast::DEFAULT_RESOLUTION;
    let holds = || std::iter::once(None).chain(SHORTER_HOLDS.iter().copied().map(Some));
    let mut out = vec![Knobs::AS_WRITTEN];
    for hold in holds() {
        for q in QUANTILES {
            for m in MAX_MARGINS {
                out.push(Knobs {
                    quantile: Some(q),
                    max_margin: Some(m),
                    hold,
                    resolution: None,
                    margin_quantile: None,
                });
            }
        }
        for q in WIDE_MARGIN_QUANTILES {
            for mq in HIGH_MARGIN_QUANTILES {
                out.push(Knobs {
                    quantile: Some(q),
                    max_margin: Some(WIDE_MAX_MARGIN),
                    hold,
                    resolution: None,
                    margin_quantile: Some(mq),
                });
            }
        }
    }
    if minute_level {
        for hold in holds() {
            for q in MINUTE_QUANTILES {
                out.push(Knobs {
                    quantile: Some(q),
                    max_margin: Some(MINUTE_MAX_MARGIN),
                    hold,
                    resolution: Some(MINUTE_RESOLUTION),
                    margin_quantile: None,
                });
            }
        }
    }
    out
}

/// What one setting did to one target over the history, beside target tracking alone. From the
/// simulator these are week-weighted figures ([`week_weighted`]), not plain counts: the
/// evidence's breach minutes are a week's mix of the days scored.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Backtest {
    pub breach_minutes: u64,
    pub instance_hours: f64,
    pub tt_breach_minutes: u64,
    pub tt_instance_hours: f64,
}

impl Backtest {
    pub fn cost_ratio(&self) -> f64 {
        if self.tt_instance_hours > 0.0 {
            self.instance_hours / self.tt_instance_hours
        } else {
            f64::INFINITY
        }
    }

    /// Percent fewer breach minutes than target tracking (negative: more).
    pub fn cut_percent(&self) -> f64 {
        if self.tt_breach_minutes == 0 {
            return 0.0;
        }
        100.0 * (1.0 - self.breach_minutes as f64 / self.tt_breach_minutes as f64)
    }

    /// "1.13x target tracking's instance-hours, 45 % fewer breach minutes".
    pub fn describe(&self) -> String {
        format!(
            "{:.2}x target tracking's instance-hours, {:.0} % fewer breach minutes ({} vs {})",
            self.cost_ratio(),
            self.cut_percent(),
            self.breach_minutes,
            self.tt_breach_minutes
        )
    }
}

/// One scored stretch of a backtest (the simulator's quarter hours), with its day's kind.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stretch {
    pub kind: DayKind,
    /// Its length.
    pub seconds: u32,
    pub breach_minutes: u32,
    pub instance_hours: f64,
    pub tt_breach_minutes: u32,
    pub tt_instance_hours: f64,
}

/// The backtest of `stretches`, each kind of day weighted by its share of a week (5/7 weekdays,
/// 2/7 weekends) instead of its share of the history scored.
///
/// Why: the history scored is a few days after the forecast's warm-up, and its mix of days is an
/// accident of the weekday the trace starts on. Four days after a three-day warm-up hold a
/// weekend half of the time (a week from Monday scores Thursday to Sunday), where a deployment
/// runs a weekend two days in seven. The first weekend is also the forecast's dearest state: it
/// has no weekend days of its own yet and borrows the weekdays'. Unweighted, such a week priced
/// the settings that cover single-minute peaks 0.08x above what the whole trace charged them (on
/// a synthetic 27-day web trace from a Monday), and the tuner kept a cheaper, weaker one.
///
/// A kind scored for less than [`MIN_KIND_SCORED`] is too little to stand for its share of a
/// week (two hours of a Sunday would weigh twelve times over): then every stretch counts as it
/// is.
pub fn week_weighted(stretches: &[Stretch]) -> Backtest {
    let time = |kind| {
        stretches
            .iter()
            .filter(|s| s.kind == kind)
            .map(|s| f64::from(s.seconds))
            .sum::<f64>()
    };
    let (weekdays, weekends) = (time(DayKind::Weekday), time(DayKind::Weekend));
    let total = weekdays + weekends;
    let least = MIN_KIND_SCORED.as_secs() as f64;
    let weight = |kind| {
        if weekdays < least || weekends < least {
            return 1.0;
        }
        match kind {
            DayKind::Weekday => (5.0 / 7.0) / (weekdays / total),
            DayKind::Weekend => (2.0 / 7.0) / (weekends / total),
        }
    };
    let (mut b, mut h, mut tb, mut th) = (0.0, 0.0, 0.0, 0.0);
    for s in stretches {
        let w = weight(s.kind);
        b += w * f64::from(s.breach_minutes);
        h += w * s.instance_hours;
        tb += w * f64::from(s.tt_breach_minutes);
        th += w * s.tt_instance_hours;
    }
    Backtest {
        breach_minutes: b.round() as u64,
        instance_hours: h,
        tt_breach_minutes: tb.round() as u64,
        tt_instance_hours: th,
    }
}

/// The setting kept for one target, and whether its backtest is within the budget's
/// [`backtest_ceiling`] (when not, it is the cheapest).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Choice {
    pub index: usize,
    pub within_ceiling: bool,
}

/// The fewest breach minutes among the backtests within [`backtest_ceiling`] of `budget` (ties:
/// the cheaper, then the earlier in the grid); when nothing fits, the cheapest. `None` for no
/// results.
pub fn choose(results: &[Backtest], budget: f64) -> Option<Choice> {
    let ceiling = backtest_ceiling(budget);
    let fits = |b: &Backtest| b.cost_ratio() <= ceiling + 1e-9;
    let within = results
        .iter()
        .enumerate()
        .filter(|(_, b)| fits(b))
        .min_by(|(_, a), (_, b)| {
            a.breach_minutes
                .cmp(&b.breach_minutes)
                .then(a.instance_hours.total_cmp(&b.instance_hours))
        });
    if let Some((index, _)) = within {
        return Some(Choice {
            index,
            within_ceiling: true,
        });
    }
    results
        .iter()
        .enumerate()
        .min_by(|(_, a), (_, b)| {
            a.instance_hours
                .total_cmp(&b.instance_hours)
                .then(a.breach_minutes.cmp(&b.breach_minutes))
        })
        .map(|(index, _)| Choice {
            index,
            within_ceiling: false,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bt(breach: u64, hours: f64) -> Backtest {
        Backtest {
            breach_minutes: breach,
            instance_hours: hours,
            tt_breach_minutes: 1000,
            tt_instance_hours: 100.0,
        }
    }

    #[test]
    fn the_fewest_breach_minutes_within_the_budget_win() {
        // As written: 300 min at 1.30x (over); 420 at 1.12x; 400 at 1.13x (the ceiling of a
        // 1.15x budget); 400 at 1.10x.
        let r = [
            bt(300, 130.0),
            bt(420, 112.0),
            bt(400, 113.0),
            bt(400, 110.0),
        ];
        assert_eq!(
            choose(&r, 1.15),
            Some(Choice {
                index: 3,
                within_ceiling: true
            })
        );
        // A larger budget buys the as-written plan back.
        assert_eq!(choose(&r, 1.32).map(|c| c.index), Some(0));
    }

    #[test]
    fn a_backtest_within_the_budget_by_less_than_its_error_is_not_kept() {
        // 400 min at 1.14x backtests within 1.15x, but by less than a week's backtest can
        // misprice the whole run: the dearer run it stands for may not be.
        let r = [bt(400, 114.0), bt(420, 113.0)];
        assert_eq!(
            choose(&r, 1.15),
            Some(Choice {
                index: 1,
                within_ceiling: true
            })
        );
        assert_eq!(choose(&r, 1.16).map(|c| c.index), Some(0));
        // Nothing within the ceiling, though within the budget: said as out of budget.
        assert_eq!(
            choose(&[bt(400, 114.0)], 1.15),
            Some(Choice {
                index: 0,
                within_ceiling: false
            })
        );
    }

    #[test]
    fn out_of_budget_the_cheapest_is_kept_and_said() {
        let r = [bt(300, 130.0), bt(350, 120.0), bt(500, 125.0)];
        assert_eq!(
            choose(&r, 1.15),
            Some(Choice {
                index: 1,
                within_ceiling: false
            })
        );
        assert_eq!(choose(&[], 1.15), None);
    }

    #[test]
    fn the_grid_starts_as_written_and_has_no_repeats() {
        let g = grid(Span::minutes(5));
        assert_eq!(g[0], Knobs::AS_WRITTEN);
        assert_eq!(g.len(), 1 + 3 * (3 * 2 + 2 * 4));
        for (i, a) in g.iter().enumerate() {
            assert!(!g[i + 1..].contains(a));
        }
        // Minute-level history adds single-minute peaks, at every hold, after the rest.
        let fine = grid(Span::minutes(1));
        assert_eq!(fine[..g.len()], g[..]);
        assert_eq!(fine.len(), g.len() + 3 * 2);
        assert!(fine[g.len()..]
            .iter()
            .all(|k| k.resolution == Some(MINUTE_RESOLUTION)));
        for (i, a) in fine.iter().enumerate() {
            assert!(!fine[i + 1..].contains(a));
        }
        // The defaults are in the grid: an untuned plan is one of the settings tried.
        assert!(g.contains(&Knobs {
            quantile: Some(crate::plan::forecast::DEFAULT_QUANTILE),
            max_margin: Some(crate::plan::forecast::DEFAULT_MAX_MARGIN),
            hold: None,
            resolution: None,
            margin_quantile: None,
        }));
    }

    fn stretch(kind: DayKind, breach: u32, hours: f64, tt_breach: u32, tt_hours: f64) -> Stretch {
        Stretch {
            kind,
            seconds: 86_400,
            breach_minutes: breach,
            instance_hours: hours,
            tt_breach_minutes: tt_breach,
            tt_instance_hours: tt_hours,
        }
    }

    /// Two weekdays at 1.0x with 10 breach minutes each, two weekend days at 1.5x with 40.
    fn half_weekend() -> [Stretch; 4] {
        [
            stretch(DayKind::Weekday, 10, 10.0, 100, 10.0),
            stretch(DayKind::Weekday, 10, 10.0, 100, 10.0),
            stretch(DayKind::Weekend, 40, 15.0, 100, 10.0),
            stretch(DayKind::Weekend, 40, 15.0, 100, 10.0),
        ]
    }

    #[test]
    fn a_week_weighs_weekdays_five_sevenths_whatever_the_days_scored() {
        // GIVEN days scored half weekend, the weekend dearer
        let days = half_weekend();
        // WHEN weighted by the week
        let b = week_weighted(&days);
        // THEN weekdays weigh (5/7)/(1/2), weekends (2/7)/(1/2): a week's mix of such days
        let expected_cost = (5.0 * 1.0 + 2.0 * 1.5) / 7.0;
        assert!((b.cost_ratio() - expected_cost).abs() < 1e-9, "{b:?}");
        assert_eq!(
            b.breach_minutes,
            ((5.0 * 10.0 + 2.0 * 40.0) * 4.0 / 7.0_f64).round() as u64
        );
        assert_eq!(b.tt_breach_minutes, 400);
        // Unweighted the weekend would count half: dearer than a week of such days.
        let plain: f64 = days.iter().map(|d| d.instance_hours).sum::<f64>() / 40.0;
        assert!(plain > b.cost_ratio());
    }

    #[test]
    fn a_history_of_one_kind_counts_as_it_is() {
        let b = week_weighted(&half_weekend()[..2]);
        assert_eq!((b.breach_minutes, b.instance_hours), (20, 20.0));
        assert_eq!(week_weighted(&[]).breach_minutes, 0);
    }

    #[test]
    fn less_than_a_day_of_a_kind_counts_as_it_is() {
        // GIVEN two weekdays and two hours of a weekend day (at 2/7 of the week they would
        // weigh twelve times over)
        let mut days = half_weekend()[..3].to_vec();
        days[2].seconds = 7200;
        // THEN nothing is weighted
        let b = week_weighted(&days);
        assert_eq!((b.breach_minutes, b.instance_hours), (60, 35.0));
    }

    proptest::proptest! {
        #[test]
        fn a_week_of_days_alike_costs_what_each_day_does(
            n_weekdays in 1usize..20,
            n_weekends in 1usize..20,
            hours in 1.0f64..50.0,
            ratio in 0.5f64..2.0,
        ) {
            // Whatever the mix, days that all cost `ratio` times target tracking weigh to it.
            let mut days = vec![stretch(DayKind::Weekday, 1, hours * ratio, 2, hours); n_weekdays];
            days.extend(vec![stretch(DayKind::Weekend, 1, hours * ratio, 2, hours); n_weekends]);
            let b = week_weighted(&days);
            proptest::prop_assert!((b.cost_ratio() - ratio).abs() < 1e-9);
        }
    }

    fn target(text: &str) -> TargetFile {
        let file: crate::plan::PlanFile = toml::from_str(&format!(
            "version = 1\n[[target]]\nresource_id = \"endpoint/e/variant/v\"\nmin_capacity = 1\nmax_capacity = 9\n{text}"
        ))
        .expect("plan");
        file.targets[0].clone()
    }

    #[test]
    fn the_base_plan_is_described_by_what_it_gives_the_target() {
        assert_eq!(
            describe_base(&target("")),
            "no peaks, no guard, no forecast"
        );
        let peak = "[[target.peak]]\nname = \"p\"\ncron = \"0 9 * * MON-FRI\"\nduration = \"1h\"\nfloor = 2\n";
        let guard = "[target.guard]\nalarms = [\"burst\"]\n";
        assert_eq!(
            describe_base(&target(&format!("{peak}{guard}"))),
            "its peaks, its guard, no forecast"
        );
        // A forecast that only records claims nothing: no forecast, as the backtest sees it.
        let recorded =
            "[target.forecast]\nmode = \"forecast_only\"\ninvocations_per_instance = 3.0\n";
        assert_eq!(
            describe_base(&target(recorded)),
            "no peaks, no guard, no forecast"
        );
        let active = "[target.forecast]\ninvocations_per_instance = 3.0\n";
        assert_eq!(
            describe_base(&target(active)),
            "no peaks, no guard, its forecast"
        );
    }

    #[test]
    fn a_forecast_that_only_records_takes_only_the_guards_hold() {
        let k = Knobs {
            quantile: Some(0.3),
            max_margin: Some(1.6),
            hold: Some(Span::minutes(5)),
            resolution: Some(Span::minutes(1)),
            margin_quantile: Some(0.9),
        };
        let recorded = target(
            "[target.guard]\nalarms = [\"a\"]\nhold = \"30m\"\n[target.forecast]\n\
             invocations_per_instance = 3.0\nmode = \"forecast_only\"\n",
        );
        assert_eq!(
            k.acting_on(&recorded),
            Knobs {
                hold: Some(Span::minutes(5)),
                ..Knobs::AS_WRITTEN
            }
        );
        assert_eq!(
            k.acting_on(&recorded).describe(&recorded),
            "forecast_only, guard hold 5m"
        );
        // An active forecast (the default mode) takes every knob.
        let active = target("[target.forecast]\ninvocations_per_instance = 3.0\n");
        assert_eq!(k.acting_on(&active), k);
    }

    #[test]
    fn knobs_never_override_the_operator_or_lengthen_a_hold() {
        let k = Knobs {
            quantile: Some(0.4),
            max_margin: Some(1.6),
            hold: Some(Span::minutes(10)),
            resolution: Some(Span::minutes(1)),
            margin_quantile: Some(0.9),
        };
        // The operator's quantile and a hold already shorter than the knob stay.
        let mut t = target(
            "[target.guard]\nalarms = [\"a\"]\nhold = \"5m\"\n[target.forecast]\ninvocations_per_instance = 3.0\nquantile = 0.7\nresolution = \"5m\"\nmargin_quantile = 0.6\n",
        );
        k.apply(&mut t);
        assert_eq!(t.forecast.as_ref().and_then(|f| f.quantile), Some(0.7));
        assert_eq!(
            t.forecast.as_ref().and_then(|f| f.resolution),
            Some(Span::minutes(5))
        );
        assert_eq!(
            t.guard.as_ref().and_then(|g| g.hold),
            Some(Span::minutes(5))
        );
        assert_eq!(t.guard.as_ref().and_then(|g| g.hold_without_forecast), None);
        assert_eq!(t.forecast.as_ref().and_then(|f| f.max_margin), Some(1.6));
        assert_eq!(
            t.forecast.as_ref().and_then(|f| f.margin_quantile),
            Some(0.6)
        );
        // Unset ones take the knobs; a target without a forecast or guard gets none of them.
        let mut t = target(
            "[target.guard]\nalarms = [\"a\"]\nhold = \"30m\"\n[target.forecast]\ninvocations_per_instance = 3.0\n",
        );
        k.apply(&mut t);
        assert_eq!(t.forecast.as_ref().and_then(|f| f.quantile), Some(0.4));
        assert_eq!(
            t.forecast.as_ref().and_then(|f| f.margin_quantile),
            Some(0.9)
        );
        assert_eq!(
            t.forecast.as_ref().and_then(|f| f.resolution),
            Some(Span::minutes(1))
        );
        assert_eq!(
            t.guard.as_ref().and_then(|g| g.hold),
            Some(Span::minutes(10))
        );
        // ... and the hold as written stays for the days before the forecast stands.
        assert_eq!(
            t.guard.as_ref().and_then(|g| g.hold_without_forecast),
            Some(Span::minutes(30))
        );
        // A guard without a forecast beside it, or beside a forecast-only one, takes the
        // shorter hold alone.
        for forecast in [
            "",
            "[target.forecast]\ninvocations_per_instance = 3.0\nmode = \"forecast_only\"\n",
        ] {
            let mut t = target(&format!(
                "[target.guard]\nalarms = [\"a\"]\nhold = \"30m\"\n{forecast}"
            ));
            k.apply(&mut t);
            let guard = t.guard.as_ref().expect("guard");
            assert_eq!(
                (guard.hold, guard.hold_without_forecast),
                (Some(Span::minutes(10)), None),
                "{forecast}"
            );
        }
        let mut bare = target("");
        k.apply(&mut bare);
        assert!(bare.forecast.is_none() && bare.guard.is_none());
        assert_eq!(
            k.describe(&target(
                "[target.forecast]\ninvocations_per_instance = 3.0\n"
            )),
            "quantile 0.4, max_margin 1.6, resolution 1m, margin_quantile 0.9"
        );
        assert_eq!(
            Knobs::AS_WRITTEN.describe(&target(
                "[target.forecast]\ninvocations_per_instance = 3.0\n"
            )),
            "quantile 0.5, max_margin 1.2"
        );
    }

    proptest::proptest! {
        #[test]
        fn a_larger_budget_never_keeps_more_breach_minutes(
            runs in proptest::collection::vec((0u64..2000, 80.0f64..200.0), 1..30),
            small in 1.0f64..1.5,
            extra in 0.0f64..1.0,
        ) {
            let r: Vec<Backtest> = runs.iter().map(|&(b, h)| bt(b, h)).collect();
            let tight = choose(&r, small).expect("a choice");
            let loose = choose(&r, small + extra).expect("a choice");
            if tight.within_ceiling {
                proptest::prop_assert!(loose.within_ceiling);
                proptest::prop_assert!(r[loose.index].breach_minutes <= r[tight.index].breach_minutes);
                proptest::prop_assert!(r[tight.index].cost_ratio() <= backtest_ceiling(small) + 1e-9);
            } else {
                // Out of budget: the cheapest, which no other setting undercuts.
                proptest::prop_assert!(r.iter().all(|b| b.instance_hours >= r[tight.index].instance_hours));
            }
        }
    }
}

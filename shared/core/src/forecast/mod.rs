//! Forecast pre-scaling: headroom learns each opted-in target's daily and weekly demand cycle
//! from its own CloudWatch history and claims, a lead time ahead, the capacity the coming slot is
//! expected to need.
//!
//! - `series.rs`: the demand history as CloudWatch returns it.
//! - `profile.rs`: the seasonal estimate (per slot of the day, per kind of day, robust and
//!   recency-weighted).
//! - `level.rs`: today's level, how far the day so far runs above or below its estimate.
//! - `build.rs`: estimate x level + a margin learned from the estimate's own errors -> stored slots.
//! - `claims.rs`: the slots as a `forecast` claim.
//! - `score.rs`: how past slots compared with the demand that came.
//! - `schedule_review.rs`: whether each planned peak still matches the demand (daily verdicts).
//! - `window_score.rs`: how each planned window went (capacity ready, floor used, demand above).
//! - `summary.rs`: what `headroom status` shows of it.
//!
//! All of it is pure; time comes in as `now`, and only history before `now` is ever read, so the
//! simulator can replay it walk-forward. The hourly refresh that reads the history and stores
//! the result is a use case of the tick (`usecase/forecast_refresh.rs`).

pub mod build;
pub mod claims;
pub mod level;
pub mod profile;
pub mod schedule_review;
pub mod score;
pub mod series;
pub mod state;
pub mod summary;
pub mod window_score;

pub use build::{build_forecast, is_due, REFRESH_EVERY};
pub use claims::{claiming_span, forecast_claim, would_claim};
pub use series::DemandSeries;
pub use state::{ForecastScore, ForecastSlot, ForecastState, RefreshFailed};

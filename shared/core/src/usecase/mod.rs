//! One use case per trigger: each observes through the ports, decides with the pure rules,
//! applies idempotently and returns a typed outcome. The Lambdas, `headroom explain` and the
//! simulator all call these functions (the Lambdas over the AWS adapters, the others over
//! in-memory ports), so what is explained and simulated is what runs.
//!
//! | trigger | use case | function |
//! |---|---|---|
//! | tick | [`tick::on_tick`] | headroom-tick |
//! | explicit peak | [`peak::on_peak`] | headroom-tick |
//! | alarm transition | [`alarm::on_alarm`] | headroom-alarm |
//! | SageMaker state change | [`deploy::on_sagemaker`] | headroom-deploy |
//! | pipeline hook | [`deploy::on_pipeline`] | headroom-deploy |
//! | `headroom reviews list/ack` | [`reviews`] | the CLI |
//! | `headroom lint` | [`lint::run`] | the CLI |
//!
//! The routing (which function takes which trigger) is `crate::trigger::Trigger::function`.
//! Use cases sit above the rules and the ports; nothing else in the core imports them.

pub mod alarm;
pub mod deploy;
pub mod forecast_refresh;
pub mod lint;
mod origin;
pub mod peak;
mod ports;
pub mod reviews;
pub mod schedule_reviews;
pub mod tick;
mod tick_pass;

pub use origin::Origin;
pub use ports::Ports;

//! Use cases: a trigger's whole path through the ports (fetch, decide purely, apply). They sit
//! above the rules and the ports; nothing in the core imports them.

pub mod forecast_refresh;

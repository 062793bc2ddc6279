//! headroom's vocabulary: the values every rule talks about (bounds, what AAS reports, alarm
//! states, names and fingerprints, measured lead times, stored log entries). One small file per
//! concept, no rules and no state: the rules, the state and the ports import from here, and
//! nothing here imports them (`tests/module_graph.rs` keeps it that way).

mod alarm_name;
mod alarm_state;
mod bounds;
mod finding;
mod fingerprint;
mod lead_sample;
mod log_entry;
mod observed;
mod provenance;
mod review_id;
mod string_newtype;
mod suspended;

pub use alarm_name::AlarmName;
pub use alarm_state::AlarmState;
pub use bounds::Bounds;
pub use finding::{Finding, Severity};
pub use fingerprint::ModelFingerprint;
pub use lead_sample::{is_plausible, LeadSample, SampleSource, LEAD_SAMPLES_KEPT, LONGEST_SAMPLE};
pub use log_entry::LogEntry;
pub use observed::Observed;
pub use provenance::Provenance;
pub use review_id::ReviewId;
pub use suspended::Suspended;

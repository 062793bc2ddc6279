/// Why an event was refused. Each names the part that is wrong; no event that fails here causes
/// any AWS call.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EventError {
    // What an error quotes of the event is cut (`text::cut`): an event may be megabytes.
    #[error("unrecognised event: {}", headroom_core::text::cut(hint))]
    Unrecognized { hint: String },
    #[error(
        "malformed {kind}: field `{}` {}",
        headroom_core::text::cut(field),
        // The problem is ours, quoting at most a cut value: this bound is only a backstop.
        headroom_core::text::cut_to(problem, 1000)
    )]
    Malformed {
        kind: &'static str,
        field: String,
        problem: String,
    },
}

impl EventError {
    pub fn malformed(
        kind: &'static str,
        field: impl Into<String>,
        problem: impl Into<String>,
    ) -> Self {
        Self::Malformed {
            kind,
            field: field.into(),
            problem: problem.into(),
        }
    }
}

//! How the CLI ends: one line on stderr naming what failed, and an exit code by class, so a
//! script can tell "fix your AWS setup" from "nothing is stored" from "your file is wrong".
//! The codes are documented in the README (section CLI).

use std::io::ErrorKind;
use std::process::ExitCode;

use headroom_core::plan::PlanError;
use headroom_core::ports::{FailureKind, PortError};
use headroom_core::reconcile::ReconcileError;
use headroom_events::EventError;

/// The exit codes, besides 0 (success) and 2 (usage: clap's own for a bad command line).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// Anything else: an AWS error that is not one of the classes below, a lost write race.
    Failure = 1,
    /// Usage: a bad command line or option value, or an input file it names that cannot be read.
    Usage = 2,
    /// AWS access or configuration: no region, no or rejected credentials, a missing IAM
    /// permission, AWS unreachable.
    AwsAccess = 3,
    /// Not found: no table, no plan stored, a target the plan does not manage, no such review.
    NotFound = 4,
    /// Invalid input: a plan, event, trace or world file that does not parse or validate.
    Invalid = 5,
    /// `headroom lint` found a finding of severity `error` (the report was printed).
    Findings = 6,
}

/// An error the CLI itself raises, with its exit class.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct CliError {
    pub exit: Exit,
    pub message: String,
}

pub fn not_found(message: impl Into<String>) -> anyhow::Error {
    CliError {
        exit: Exit::NotFound,
        message: message.into(),
    }
    .into()
}

pub fn usage(message: impl Into<String>) -> anyhow::Error {
    CliError {
        exit: Exit::Usage,
        message: message.into(),
    }
    .into()
}

pub fn invalid(message: impl Into<String>) -> anyhow::Error {
    CliError {
        exit: Exit::Invalid,
        message: message.into(),
    }
    .into()
}

/// Writes a line to stdout; a closed pipe (`| head -1`) comes back as an error that [`finish`]
/// ends quietly, instead of the panic `println!` gives.
macro_rules! outln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        writeln!(std::io::stdout().lock(), $($arg)*)
    }};
}

/// [`outln!`] without the newline.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        write!(std::io::stdout().lock(), $($arg)*)
    }};
}

/// Whether the error is stdout's reader having gone away.
pub fn is_broken_pipe(e: &anyhow::Error) -> bool {
    e.chain().any(|link| {
        link.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == ErrorKind::BrokenPipe)
    })
}

/// The exit class of an error: the first link of its chain that knows one.
pub fn classify(e: &anyhow::Error) -> Exit {
    for link in e.chain() {
        if let Some(port) = link.downcast_ref::<PortError>() {
            return match port.kind {
                FailureKind::Access | FailureKind::Config | FailureKind::Unreachable => {
                    Exit::AwsAccess
                }
                FailureKind::NotFound => Exit::NotFound,
                FailureKind::Aws | FailureKind::Local => Exit::Failure,
            };
        }
        if let Some(cli) = link.downcast_ref::<CliError>() {
            return cli.exit;
        }
        if link.is::<PlanError>()
            || link.is::<EventError>()
            || link.is::<headroom_sim::scenario::ScenarioError>()
            || link.is::<headroom_sim::trace::TraceError>()
            || link.is::<headroom_sim::world::WorldError>()
        {
            return Exit::Invalid;
        }
        // An input file named on the command line that cannot be read: the command line is
        // what to fix (a file that reads but does not parse is `Invalid`, above).
        if let Some(io) = link.downcast_ref::<std::io::Error>() {
            match io.kind() {
                ErrorKind::NotFound
                | ErrorKind::PermissionDenied
                | ErrorKind::IsADirectory
                | ErrorKind::NotADirectory => return Exit::Usage,
                // Read, but not text: the file's content is what to fix.
                ErrorKind::InvalidData => return Exit::Invalid,
                _ => {}
            }
        }
        if let Some(reconcile) = link.downcast_ref::<ReconcileError>() {
            match reconcile {
                ReconcileError::NoPlan | ReconcileError::Unmanaged { .. } => return Exit::NotFound,
                ReconcileError::BadStoredPlan { .. } => return Exit::Invalid,
                // A port error inside says which class.
                _ => {}
            }
        }
    }
    Exit::Failure
}

/// The error as one message: each link of the chain once (a link whose text the previous ones
/// already hold is left out), and nothing below a [`PortError`], which says everything itself.
pub fn render(e: &anyhow::Error) -> String {
    let mut text = String::new();
    for link in e.chain() {
        let own = link.to_string();
        if !text.contains(&own) {
            if !text.is_empty() {
                text.push_str(": ");
            }
            text.push_str(&own);
        }
        if link.is::<PortError>() {
            break;
        }
    }
    text
}

/// Ends the process for a command's result.
pub fn finish(result: anyhow::Result<()>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        // The reader stopped reading (`| head`): what it wanted, it has.
        Err(e) if is_broken_pipe(&e) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {}", render(&e));
            ExitCode::from(classify(&e) as u8)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use headroom_core::ports::ErrorClass;

    fn missing_table() -> PortError {
        PortError::new(
            "read the current plan from table nope",
            ErrorClass::Permanent,
            "service error",
        )
        .with_answer(
            FailureKind::NotFound,
            Some("ResourceNotFoundException".into()),
            "Requested resource not found",
        )
        .with_hint("create it with `headroom plan init-table`")
    }

    #[test]
    fn a_wrapped_port_error_prints_once_and_exits_not_found() {
        let e = anyhow::Error::from(ReconcileError::LoadPlan(missing_table()));
        let text = render(&e);
        assert_eq!(
            text.matches("ResourceNotFoundException").count(),
            1,
            "{text}"
        );
        assert_eq!(
            text.matches("Requested resource not found").count(),
            1,
            "{text}"
        );
        assert!(text.contains("headroom plan init-table"), "{text}");
        assert_eq!(classify(&e), Exit::NotFound);
    }

    #[test]
    fn access_problems_exit_3_and_the_rest_1() {
        let denied = PortError::new("x", ErrorClass::Permanent, "e").with_answer(
            FailureKind::Access,
            Some("AccessDeniedException".into()),
            "no",
        );
        assert_eq!(classify(&anyhow::Error::from(denied)), Exit::AwsAccess);
        let region = PortError::new("x", ErrorClass::Permanent, "e").with_answer(
            FailureKind::Config,
            None,
            "Missing Region",
        );
        assert_eq!(
            classify(&anyhow::Error::from(region).context("while storing")),
            Exit::AwsAccess
        );
        assert_eq!(classify(&anyhow::anyhow!("something")), Exit::Failure);
        assert_eq!(classify(&not_found("no plan stored")), Exit::NotFound);
    }

    #[test]
    fn a_broken_pipe_is_recognised_through_context() {
        let io = std::io::Error::from(ErrorKind::BrokenPipe);
        assert!(is_broken_pipe(&anyhow::Error::from(io).context("printing")));
        assert!(!is_broken_pipe(&anyhow::anyhow!("other")));
    }
}

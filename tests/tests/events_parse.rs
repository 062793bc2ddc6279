//! Every sample in `events/` is parsed: each JSON event by the same parser the Lambdas use (those
//! under `events/invalid/` must be refused), each plan by the plan validator. Simulator scenarios'
//! world files and traces are parsed by `shared/sim`'s own tests.

use std::path::{Path, PathBuf};

use headroom_core::plan::parse_plan;
use headroom_events::parse_trigger;

fn events_dir() -> PathBuf {
    // Read when the test runs: the compile-time value would be another clone's when cargo
    // reuses a test binary from a target dir shared between clones.
    let package = std::env::var("CARGO_MANIFEST_DIR")
        .unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").to_owned());
    Path::new(&package).join("../events")
}

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let mut entries: Vec<_> = std::fs::read_dir(dir)
        .expect("events/ is readable")
        .flatten()
        .map(|e| e.path())
        .collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            files(&path, out);
        } else {
            out.push(path);
        }
    }
}

#[test]
fn every_sample_event_parses_and_every_invalid_one_is_refused() {
    let mut all = Vec::new();
    files(&events_dir(), &mut all);
    let json: Vec<_> = all
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "json"))
        .collect();
    assert!(
        json.len() >= 6,
        "expected the sample events, found {}",
        json.len()
    );
    let mut failures = Vec::new();
    for path in json {
        let text = std::fs::read_to_string(path).expect("readable");
        let value: serde_json::Value = match serde_json::from_str(&text) {
            Ok(v) => v,
            Err(e) => {
                failures.push(format!("{}: not JSON: {e}", path.display()));
                continue;
            }
        };
        let invalid = path.components().any(|c| c.as_os_str() == "invalid");
        match (parse_trigger(&value), invalid) {
            (Ok(_), false) | (Err(_), true) => {}
            (Ok(t), true) => failures.push(format!(
                "{}: should be refused, parsed as {}",
                path.display(),
                t.kind()
            )),
            (Err(e), false) => failures.push(format!("{}: {e}", path.display())),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_sample_plan_validates() {
    let mut all = Vec::new();
    files(&events_dir(), &mut all);
    let plans: Vec<_> = all
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "toml"))
        .filter(|p| {
            p.components().any(|c| c.as_os_str() == "plans")
                || p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("plan"))
        })
        .collect();
    assert!(!plans.is_empty());
    for path in plans {
        let text = std::fs::read_to_string(path).expect("readable");
        if let Err(e) = parse_plan(&path.display().to_string(), &text) {
            panic!("{e}");
        }
    }
}

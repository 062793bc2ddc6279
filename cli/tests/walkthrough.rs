//! The README's local walkthrough ("Running a function locally"), run as written against moto:
//! each `cargo run -p headroom-cli --` line with the built binary (a `> FILE` redirect kept),
//! each `cargo lambda invoke headroom-tick` line through the tick function's handler with the
//! real SDK clients (what `cargo lambda watch` would run), `export` lines applied. If the README
//! changes, this test runs the new commands.

use std::path::PathBuf;
use std::process::Command;

use headroom_adapters::{AasScalingTargets, Clients, DynamoStateStore, SageMakerCapacity};
use headroom_core::trigger::Trigger;
use headroom_core::usecase::peak::on_peak;
use headroom_core::usecase::tick::on_tick;
use headroom_core::usecase::Ports;
use headroom_tests::{moto, sdk_config, unique};

fn repo() -> PathBuf {
    let dir = std::env::var("CARGO_MANIFEST_DIR")
        .unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").to_owned());
    PathBuf::from(dir).join("..")
}

/// The shell lines of the section's first bash block, comments cut.
fn walkthrough_lines() -> Vec<String> {
    let readme = std::fs::read_to_string(repo().join("README.md")).expect("README");
    let section = &readme[readme
        .find("## Running a function locally")
        .expect("the walkthrough section")..];
    let block = &section[section.find("```bash\n").expect("a bash block") + 8..];
    let block = &block[..block.find("```").expect("the block ends")];
    block
        .lines()
        .map(|l| match l.find(" # ") {
            Some(i) => l[..i].trim().to_owned(),
            None => l.trim().to_owned(),
        })
        .filter(|l| !l.is_empty())
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_readme_walkthrough_works_against_moto() {
    let table = unique("walkthrough");
    let files = std::env::temp_dir().join(unique("walkthrough-files"));
    std::fs::create_dir_all(&files).expect("temp dir");
    // Files the walkthrough writes under /tmp go to this test's own directory.
    let map_path = |p: &str| match p.strip_prefix("/tmp/") {
        Some(name) => files.join(name),
        None => repo().join(p),
    };
    let config = sdk_config().await;
    let clients = Clients::new(&config);
    let aas = AasScalingTargets::new(clients.aas.clone());
    let store = DynamoStateStore::new(clients.dynamo.clone(), table.clone());
    let capacity = SageMakerCapacity::new(clients.sagemaker.clone());

    let mut ran = (0, 0);
    let mut last_status = String::new();
    for line in walkthrough_lines() {
        if let Some(rest) = line.strip_prefix("cargo run -p headroom-cli -- ") {
            let (args, redirect) = match rest.split_once(" > ") {
                Some((args, file)) => (args, Some(map_path(file.trim()))),
                None => (rest, None),
            };
            let out = Command::new(env!("CARGO_BIN_EXE_headroom"))
                .args(args.split_whitespace())
                .current_dir(repo())
                .env("AWS_ENDPOINT_URL", moto())
                .env("AWS_ACCESS_KEY_ID", "testing")
                .env("AWS_SECRET_ACCESS_KEY", "testing")
                .env("AWS_REGION", "us-east-1")
                .env("HEADROOM_TABLE", &table)
                .env("HEADROOM_AWS_MAX_ATTEMPTS", "1")
                .output()
                .expect("the headroom binary runs");
            assert!(
                out.status.success(),
                "`{line}` failed: {}",
                String::from_utf8_lossy(&out.stderr)
            );
            match redirect {
                Some(file) => std::fs::write(file, &out.stdout).expect("redirect"),
                None => last_status = String::from_utf8_lossy(&out.stdout).into_owned(),
            }
            ran.0 += 1;
        } else if let Some(rest) = line.strip_prefix("cargo lambda invoke headroom-tick ") {
            let file = rest
                .split_once("--data-file ")
                .map(|(_, f)| f.split_whitespace().next().unwrap_or(""))
                .expect("a --data-file");
            let text = std::fs::read_to_string(map_path(file)).expect("the event file");
            let event: serde_json::Value = serde_json::from_str(&text).expect("JSON event");
            // The tick function's use cases, as its handler calls them (the CLI's tests depend on
            // no function crate).
            let ports = Ports::new(&aas, &store).with_capacity(&capacity);
            let now = chrono::Utc::now();
            let fail = |e: &dyn std::fmt::Display| -> ! { panic!("`{line}` failed: {e}") };
            let answer = match headroom_events::parse_trigger(&event) {
                Ok(Trigger::Tick(tick)) => serde_json::to_value(
                    on_tick(ports, &tick, now)
                        .await
                        .unwrap_or_else(|e| fail(&e)),
                ),
                Ok(Trigger::Peak(peak)) => serde_json::to_value(
                    on_peak(ports, &peak, now)
                        .await
                        .unwrap_or_else(|e| fail(&e)),
                ),
                Ok(other) => fail(&format!("a {} is not the tick function's", other.kind())),
                Err(e) => fail(&e),
            }
            .expect("answer");
            assert!(
                answer["errors"].as_array().is_none_or(Vec::is_empty),
                "`{line}`: {answer}"
            );
            ran.1 += 1;
        } else {
            // pip, moto_server, export, cargo lambda watch: the test's own moto stands in.
            assert!(
                ["pip ", "moto_server ", "export ", "cargo lambda watch "]
                    .iter()
                    .any(|p| line.starts_with(p)),
                "the test does not know how to run `{line}`"
            );
        }
    }
    assert!(ran.0 >= 4 && ran.1 >= 2, "commands run: {ran:?}");
    // The generated peak is within the lead time (20 min ahead, 25 min lead): its floor is live.
    assert!(
        last_status.contains("claim peak:walkthrough@") && last_status.contains("floor 8"),
        "{last_status}"
    );
    assert!(!last_status.contains("FAILING"), "{last_status}");
    let _ = std::fs::remove_dir_all(&files);
}

//! Writes the shipped synthetic traces to `events/traces/` and the generated what-if files next
//! to their scenarios: `cargo run -p headroom-sim --example make-traces`.

fn main() -> std::io::Result<()> {
    // Read at run time: the compile-time value would be another clone's when cargo reuses a
    // binary from a target dir shared between clones, and this writes files.
    let package = std::env::var("CARGO_MANIFEST_DIR")
        .unwrap_or_else(|_| env!("CARGO_MANIFEST_DIR").to_owned());
    let root = std::path::Path::new(&package).join("../..");
    let traces = root.join("events/traces");
    std::fs::create_dir_all(&traces)?;
    let files = headroom_sim::synthetic::shipped()
        .into_iter()
        .map(|(name, text)| (traces.join(name), text))
        .chain(
            headroom_sim::synthetic::shipped_what_ifs()
                .into_iter()
                .map(|(path, text)| (root.join(path), text)),
        );
    for (path, text) in files {
        std::fs::write(&path, text)?;
        println!("wrote {}", path.display());
    }
    Ok(())
}

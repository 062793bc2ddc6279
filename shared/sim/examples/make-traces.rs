//! Writes the shipped synthetic traces to `events/traces/` (run from the repository root):
//! `cargo run -p headroom-sim --example make-traces`.

fn main() -> std::io::Result<()> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../events/traces");
    std::fs::create_dir_all(&dir)?;
    for (name, text) in headroom_sim::synthetic::shipped() {
        let path = dir.join(name);
        std::fs::write(&path, text)?;
        println!("wrote {}", path.display());
    }
    Ok(())
}

//! `headroom simulate`: filled in by the simulator work.

#[derive(clap::Args, Debug)]
pub struct SimulateArgs {}

pub fn run(_args: SimulateArgs) -> anyhow::Result<()> {
    anyhow::bail!("simulate is not implemented yet")
}

//! `headroom explain`: filled in by the alarm-automation work.

#[derive(clap::Args, Debug)]
pub struct ExplainArgs {}

pub async fn run(_args: ExplainArgs) -> anyhow::Result<()> {
    anyhow::bail!("explain is not implemented yet")
}

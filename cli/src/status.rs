#[derive(clap::Args, Debug)]
pub struct StatusArgs {}
pub async fn run(_a: StatusArgs) -> anyhow::Result<()> { anyhow::bail!("todo") }

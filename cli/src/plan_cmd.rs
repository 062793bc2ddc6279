#[derive(clap::Subcommand, Debug)]
pub enum PlanCommand { Show }
pub async fn run(_c: PlanCommand) -> anyhow::Result<()> { anyhow::bail!("todo") }

#[derive(clap::Args, Debug)]
pub struct PauseArgs {}
#[derive(clap::Args, Debug)]
pub struct ResumeArgs {}
pub async fn pause(_a: PauseArgs) -> anyhow::Result<()> { anyhow::bail!("todo") }
pub async fn resume(_a: ResumeArgs) -> anyhow::Result<()> { anyhow::bail!("todo") }

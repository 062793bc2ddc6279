//! `headroom reviews`: filled in by the deployment-watcher work.

#[derive(clap::Subcommand, Debug)]
pub enum ReviewsCommand {
    /// List reviews.
    List,
}

pub async fn run(_cmd: ReviewsCommand) -> anyhow::Result<()> {
    anyhow::bail!("reviews are not implemented yet")
}

//! AWS access for the CLI: the table name and the adapters, built once per command.

/// Where headroom's state lives: `--table` or `HEADROOM_TABLE`.
#[derive(clap::Args, Debug, Clone)]
pub struct TableArgs {
    /// DynamoDB table holding headroom's plan and state.
    #[arg(long, env = "HEADROOM_TABLE", default_value = "headroom")]
    pub table: String,
}

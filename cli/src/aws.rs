//! AWS access for the CLI: the table name and the adapters, built once per command.

use headroom_adapters::{AasScalingTargets, AwsSettings, Clients, DynamoStateStore};

/// Where headroom's state lives: `--table` or `HEADROOM_TABLE`.
#[derive(clap::Args, Debug, Clone)]
pub struct TableArgs {
    /// DynamoDB table holding headroom's plan and state.
    #[arg(long, env = "HEADROOM_TABLE", default_value = "headroom")]
    pub table: String,
}

/// The adapters a CLI command talks to AWS through. Region, credentials and
/// `AWS_ENDPOINT_URL` come from the usual AWS environment.
pub struct Aws {
    pub clients: Clients,
    pub aas: AasScalingTargets,
    pub store: DynamoStateStore,
}

impl Aws {
    pub async fn connect(table: &TableArgs) -> anyhow::Result<Self> {
        let clients = Clients::load(&AwsSettings::from_env()?).await;
        Ok(Self {
            aas: AasScalingTargets::new(clients.aas.clone()),
            store: DynamoStateStore::new(clients.dynamo.clone(), table.table.clone()),
            clients,
        })
    }
}

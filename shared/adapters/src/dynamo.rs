//! DynamoDB: the [`StateStore`] port over the SDK, exactly per `docs/state-table.md`.
//!
//! One table, `PK` + `SK` strings. Every write that must not lose a concurrent change is
//! conditional on the version read; every state write carries a token so that a write which landed
//! although its response was lost (the ambiguous write) is recognised as ours and counts as saved.

use std::collections::HashMap;
use std::time::Duration;

use aws_sdk_dynamodb::operation::put_item::PutItemError;
use aws_sdk_dynamodb::operation::transact_write_items::TransactWriteItemsError;
use aws_sdk_dynamodb::types::{
    AttributeDefinition, AttributeValue, BillingMode, KeySchemaElement, KeyType, KeysAndAttributes,
    Put, ReturnValuesOnConditionCheckFailure, ScalarAttributeType, TableStatus,
    TimeToLiveSpecification, TimeToLiveStatus, TransactWriteItem,
};
use aws_sdk_dynamodb::Client;
use chrono::{DateTime, SecondsFormat, Utc};
use headroom_core::ids::ScalableTargetId;
use headroom_core::log::LOG_TTL_DAYS;
use headroom_core::model::LogEntry;
use headroom_core::ports::{ErrorClass, PortError, SaveOutcome, StateStore, StoredPlan};
use headroom_core::TargetState;

use crate::error::{permanent, port_error, retryable};

/// Attribute names (docs/state-table.md).
pub mod attr {
    pub const PK: &str = "PK";
    pub const SK: &str = "SK";
    pub const VERSION: &str = "version";
    pub const BODY: &str = "body";
    pub const TOKEN: &str = "token";
    pub const UPDATED_AT: &str = "updated_at";
    pub const TEXT: &str = "text";
    pub const SOURCE_NAME: &str = "source_name";
    pub const APPLIED_AT: &str = "applied_at";
    /// TTL attribute: epoch seconds.
    pub const EXPIRES_AT: &str = "expires_at";
}

pub const PLAN_PK: &str = "PLAN";
pub const CURRENT_SK: &str = "CURRENT";
pub const STATE_SK: &str = "STATE";
pub const LOG_PREFIX: &str = "LOG#";

/// BatchGetItem takes at most 100 keys per call.
pub const BATCH_GET_MAX: usize = 100;
/// UnprocessedKeys are retried this many times, with exponential backoff, before giving up.
const UNPROCESSED_RETRIES: u32 = 6;
const UNPROCESSED_BACKOFF: Duration = Duration::from_millis(25);

pub fn target_pk(id: &ScalableTargetId) -> String {
    format!("TARGET#{id}")
}

pub fn plan_version_sk(version: u64) -> String {
    format!("V#{version:010}")
}

/// `LOG#<RFC 3339 millis>#<hash of the body>`: sorts by time under its target; the hash keeps two
/// records of one millisecond apart, and makes a retried append overwrite itself instead of
/// adding a duplicate.
pub fn log_sk(at: DateTime<Utc>, body: &str) -> String {
    format!(
        "{LOG_PREFIX}{}#{:016x}",
        at.to_rfc3339_opts(SecondsFormat::Millis, true),
        fnv1a(body.as_bytes())
    )
}

/// A stable 64-bit hash (FNV-1a): the same body gives the same key in every build.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

type Item = HashMap<String, AttributeValue>;

fn s(value: impl Into<String>) -> AttributeValue {
    AttributeValue::S(value.into())
}

fn n(value: impl ToString) -> AttributeValue {
    AttributeValue::N(value.to_string())
}

fn get_s<'a>(item: &'a Item, name: &str) -> Option<&'a str> {
    item.get(name)
        .and_then(|v| v.as_s().ok())
        .map(String::as_str)
}

fn get_n<T: std::str::FromStr>(item: &Item, name: &str) -> Option<T> {
    item.get(name)
        .and_then(|v| v.as_n().ok())
        .and_then(|v| v.parse().ok())
}

fn key(pk: impl Into<String>, sk: impl Into<String>) -> Item {
    HashMap::from([(attr::PK.to_owned(), s(pk)), (attr::SK.to_owned(), s(sk))])
}

/// The optimistic-concurrency condition of a write.
#[derive(Debug, Clone, Copy)]
enum Condition {
    /// The item must not exist yet (version 0: never stored).
    New,
    /// The stored `version` must still be the one read.
    Version(u64),
}

impl Condition {
    fn expected(version: u64) -> Self {
        if version == 0 {
            Self::New
        } else {
            Self::Version(version)
        }
    }

    fn expression(self) -> &'static str {
        match self {
            Self::New => "attribute_not_exists(#pk)",
            Self::Version(_) => "#v = :expected",
        }
    }

    fn names(self) -> HashMap<String, String> {
        match self {
            Self::New => HashMap::from([("#pk".to_owned(), attr::PK.to_owned())]),
            Self::Version(_) => HashMap::from([("#v".to_owned(), attr::VERSION.to_owned())]),
        }
    }

    fn values(self) -> Option<Item> {
        match self {
            Self::New => None,
            Self::Version(v) => Some(HashMap::from([(":expected".to_owned(), n(v))])),
        }
    }
}

/// headroom's state table.
#[derive(Debug, Clone)]
pub struct DynamoStateStore {
    client: Client,
    table: String,
}

impl DynamoStateStore {
    /// The AWS operations this adapter's methods call, as IAM names them: the functions'
    /// `operations.rs` and the template's IAM policies are checked against this list, and this
    /// list against the calls in this file (tests/tests/infra_consistency.rs).
    pub const OPERATIONS: &'static [&'static str] = &[
        "dynamodb:BatchGetItem",
        "dynamodb:GetItem",
        "dynamodb:PutItem",
        "dynamodb:Query",
        "dynamodb:TransactWriteItems",
    ];

    pub fn new(client: Client, table: impl Into<String>) -> Self {
        Self {
            client,
            table: table.into(),
        }
    }

    pub fn client(&self) -> &Client {
        &self.client
    }

    pub fn table(&self) -> &str {
        &self.table
    }

    fn plan_item(&self, plan: &StoredPlan, version: u64, sk: String) -> Item {
        let mut item = key(PLAN_PK, sk);
        item.insert(attr::VERSION.into(), n(version));
        item.insert(attr::TEXT.into(), s(&plan.text));
        item.insert(attr::SOURCE_NAME.into(), s(&plan.source_name));
        item.insert(
            attr::APPLIED_AT.into(),
            s(plan.applied_at.to_rfc3339_opts(SecondsFormat::Millis, true)),
        );
        item
    }

    /// A transaction put. DynamoDB refuses expression names or values the condition does not
    /// use, so each condition brings exactly its own.
    fn put(&self, item: Item, condition: Condition) -> Result<TransactWriteItem, PortError> {
        let put = Put::builder()
            .table_name(&self.table)
            .set_item(Some(item))
            .condition_expression(condition.expression())
            .set_expression_attribute_names(Some(condition.names()))
            .set_expression_attribute_values(condition.values())
            .build()
            .map_err(|e| permanent("build the plan transaction", e))?;
        Ok(TransactWriteItem::builder().put(put).build())
    }

    async fn get_plan(&self) -> Result<Option<StoredPlan>, PortError> {
        let out = self
            .client
            .get_item()
            .table_name(&self.table)
            .set_key(Some(key(PLAN_PK, CURRENT_SK)))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| {
                port_error(
                    format!("read the current plan from table {}", self.table),
                    e,
                )
            })?;
        out.item().map(decode_plan).transpose()
    }

    /// One BatchGetItem of at most 100 distinct keys, retrying UnprocessedKeys with backoff.
    async fn batch_get(&self, pks: &[String]) -> Result<HashMap<String, Item>, PortError> {
        let mut pending: Vec<Item> = pks.iter().map(|pk| key(pk.clone(), STATE_SK)).collect();
        let mut found = HashMap::with_capacity(pks.len());
        let mut retries = 0;
        loop {
            let request = KeysAndAttributes::builder()
                .set_keys(Some(std::mem::take(&mut pending)))
                .consistent_read(true)
                .build()
                .map_err(|e| permanent("build the state read", e))?;
            let out = self
                .client
                .batch_get_item()
                .request_items(&self.table, request)
                .send()
                .await
                .map_err(|e| {
                    port_error(
                        format!("read {} target states from table {}", pks.len(), self.table),
                        e,
                    )
                })?;
            for item in out
                .responses()
                .and_then(|r| r.get(&self.table))
                .into_iter()
                .flatten()
            {
                if let Some(pk) = get_s(item, attr::PK) {
                    found.insert(pk.to_owned(), item.clone());
                }
            }
            pending = out
                .unprocessed_keys()
                .and_then(|u| u.get(&self.table))
                .map(|k| k.keys().to_vec())
                .unwrap_or_default();
            if pending.is_empty() {
                return Ok(found);
            }
            // DynamoDB returns UnprocessedKeys when the table or partition is throttled: back off.
            if retries == UNPROCESSED_RETRIES {
                return Err(retryable(
                    format!("read target states from table {}", self.table),
                    format!(
                        "{} keys still unprocessed after {UNPROCESSED_RETRIES} retries (throttled)",
                        pending.len()
                    ),
                ));
            }
            tokio::time::sleep(UNPROCESSED_BACKOFF * 2u32.pow(retries)).await;
            retries += 1;
        }
    }
}

fn decode_plan(item: &Item) -> Result<StoredPlan, PortError> {
    let bad = |what: &str| {
        permanent(
            "read the current plan",
            format!("the item PLAN/CURRENT has no valid `{what}`: re-apply the plan with `headroom plan apply FILE`"),
        )
    };
    let applied_at = get_s(item, attr::APPLIED_AT)
        .and_then(|t| DateTime::parse_from_rfc3339(t).ok())
        .ok_or_else(|| bad(attr::APPLIED_AT))?
        .with_timezone(&Utc);
    Ok(StoredPlan {
        version: get_n(item, attr::VERSION).ok_or_else(|| bad(attr::VERSION))?,
        text: get_s(item, attr::TEXT)
            .ok_or_else(|| bad(attr::TEXT))?
            .to_owned(),
        source_name: get_s(item, attr::SOURCE_NAME)
            .unwrap_or_default()
            .to_owned(),
        applied_at,
    })
}

fn decode_state(id: &ScalableTargetId, item: &Item) -> Result<TargetState, PortError> {
    let operation = || format!("read the stored state of {id}");
    let version: u64 = get_n(item, attr::VERSION).ok_or_else(|| {
        permanent(
            operation(),
            format!(
                "the item {}/{STATE_SK} has no numeric `version`",
                target_pk(id)
            ),
        )
    })?;
    let body = get_s(item, attr::BODY).unwrap_or("{}");
    let mut state: TargetState = serde_json::from_str(body).map_err(|e| {
        permanent(
            operation(),
            format!("the item {}/{STATE_SK} holds a `body` that is not a target state ({e}): fix or delete the item", target_pk(id)),
        )
    })?;
    // The item's attribute is what the condition checks: it wins over the copy inside the body.
    state.version = version;
    Ok(state)
}

/// The codes in a cancelled transaction's reasons that a retry can cure.
const RETRYABLE_CANCELLATIONS: &[&str] = &[
    "TransactionConflict",
    "ThrottlingError",
    "ProvisionedThroughputExceeded",
];

impl StateStore for DynamoStateStore {
    async fn load_plan(&self) -> Result<Option<StoredPlan>, PortError> {
        self.get_plan().await
    }

    /// One transaction: the history item `V#<version>` (must be new) and `CURRENT` (conditional on
    /// the version read), so history and current never disagree.
    async fn save_plan(
        &self,
        plan: &StoredPlan,
        expected_version: u64,
    ) -> Result<SaveOutcome, PortError> {
        let version = expected_version + 1;
        let history = self.put(
            self.plan_item(plan, version, plan_version_sk(version)),
            Condition::New,
        )?;
        let current = self.put(
            self.plan_item(plan, version, CURRENT_SK.into()),
            Condition::expected(expected_version),
        )?;
        let operation = || format!("store plan version {version} in table {}", self.table);
        let err = match self
            .client
            .transact_write_items()
            .transact_items(history)
            .transact_items(current)
            .send()
            .await
        {
            Ok(_) => return Ok(SaveOutcome::Saved),
            Err(err) => err,
        };
        let Some(TransactWriteItemsError::TransactionCanceledException(cancelled)) =
            err.as_service_error()
        else {
            return Err(port_error(operation(), err));
        };
        let codes: Vec<&str> = cancelled
            .cancellation_reasons()
            .iter()
            .filter_map(|r| r.code())
            .collect();
        if codes.contains(&"ConditionalCheckFailed") {
            // Either someone else stored a version first, or our own earlier attempt landed and
            // its answer was lost: in that case CURRENT is exactly our plan.
            let stored = self.get_plan().await?;
            let ours = stored.is_some_and(|p| {
                p.version == version
                    && p.text == plan.text
                    && p.source_name == plan.source_name
                    && p.applied_at == plan.applied_at
            });
            return Ok(if ours {
                SaveOutcome::Saved
            } else {
                SaveOutcome::Conflict
            });
        }
        let class = if codes.iter().any(|c| RETRYABLE_CANCELLATIONS.contains(c)) {
            ErrorClass::Retryable
        } else {
            ErrorClass::Permanent
        };
        Err(PortError::new(
            format!("{} (cancelled: {})", operation(), codes.join(", ")),
            class,
            err,
        ))
    }

    async fn load_states(
        &self,
        ids: &[ScalableTargetId],
    ) -> Result<Vec<(ScalableTargetId, TargetState)>, PortError> {
        // BatchGetItem refuses duplicate keys: ask for each target once.
        let mut pks: Vec<String> = ids.iter().map(target_pk).collect();
        pks.sort();
        pks.dedup();
        let mut items = HashMap::with_capacity(pks.len());
        for chunk in pks.chunks(BATCH_GET_MAX) {
            items.extend(self.batch_get(chunk).await?);
        }
        ids.iter()
            .map(|id| {
                let state = match items.get(&target_pk(id)) {
                    Some(item) => decode_state(id, item)?,
                    None => TargetState::default(),
                };
                Ok((id.clone(), state))
            })
            .collect()
    }

    async fn save_state(
        &self,
        id: &ScalableTargetId,
        state: &TargetState,
        token: &str,
    ) -> Result<SaveOutcome, PortError> {
        let operation = || {
            format!(
                "save the state of {id} (version {}) in table {}",
                state.version, self.table
            )
        };
        let next_version = state.version + 1;
        let mut stored = state.clone();
        stored.version = next_version;
        let body = serde_json::to_string(&stored).map_err(|e| permanent(operation(), e))?;
        let request = self
            .client
            .put_item()
            .table_name(&self.table)
            .item(attr::PK, s(target_pk(id)))
            .item(attr::SK, s(STATE_SK))
            .item(attr::VERSION, n(next_version))
            .item(attr::BODY, s(body))
            .item(attr::TOKEN, s(token))
            .item(
                attr::UPDATED_AT,
                s(Utc::now().to_rfc3339_opts(SecondsFormat::Millis, true)),
            )
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld);
        let condition = Condition::expected(state.version);
        let request = request
            .condition_expression(condition.expression())
            .set_expression_attribute_names(Some(condition.names()))
            .set_expression_attribute_values(condition.values());
        match request.send().await {
            Ok(_) => Ok(SaveOutcome::Saved),
            Err(err) => match err.as_service_error() {
                Some(PutItemError::ConditionalCheckFailedException(failed)) => {
                    // The ambiguous write: a retry of a write that landed fails its own condition.
                    // The stored item then carries our token, so the write is done.
                    let stored_token = failed.item().and_then(|item| get_s(item, attr::TOKEN));
                    if stored_token == Some(token) {
                        tracing::info!(target_id = %id, token, "conditional write had already landed: counted as saved");
                        Ok(SaveOutcome::Saved)
                    } else {
                        Ok(SaveOutcome::Conflict)
                    }
                }
                _ => Err(port_error(operation(), err)),
            },
        }
    }

    async fn append_log_entry(&self, entry: &LogEntry) -> Result<(), PortError> {
        let id = &entry.target;
        let operation = || {
            format!(
                "append a decision-log record for {id} to table {}",
                self.table
            )
        };
        // The body as stored in the entry, so that a re-append (a pending record flushed by a
        // later run) writes the same key and overwrites itself.
        let body = serde_json::to_string(&entry.body).map_err(|e| permanent(operation(), e))?;
        let expires_at = (entry.at + chrono::Duration::days(LOG_TTL_DAYS)).timestamp();
        self.client
            .put_item()
            .table_name(&self.table)
            .item(attr::PK, s(target_pk(id)))
            .item(attr::SK, s(log_sk(entry.at, &body)))
            .item(attr::BODY, s(body))
            .item(attr::EXPIRES_AT, n(expires_at))
            .send()
            .await
            .map_err(|e| port_error(operation(), e))?;
        Ok(())
    }

    /// Newest first; items past their `expires_at` are skipped (TTL deletes them hours to days
    /// late).
    async fn recent_log(
        &self,
        id: &ScalableTargetId,
        limit: usize,
    ) -> Result<Vec<LogEntry>, PortError> {
        let operation = || format!("read the decision log of {id} from table {}", self.table);
        let now = Utc::now().timestamp();
        let page = i32::try_from(limit.clamp(1, 1000)).unwrap_or(1000);
        let mut records = Vec::with_capacity(limit);
        let mut start: Option<Item> = None;
        while records.len() < limit {
            let out = self
                .client
                .query()
                .table_name(&self.table)
                .key_condition_expression("#pk = :pk AND begins_with(#sk, :log)")
                .expression_attribute_names("#pk", attr::PK)
                .expression_attribute_names("#sk", attr::SK)
                .expression_attribute_values(":pk", s(target_pk(id)))
                .expression_attribute_values(":log", s(LOG_PREFIX))
                .scan_index_forward(false)
                .limit(page)
                .set_exclusive_start_key(start.take())
                .send()
                .await
                .map_err(|e| port_error(operation(), e))?;
            for item in out.items() {
                if get_n::<i64>(item, attr::EXPIRES_AT).is_some_and(|t| t <= now) {
                    continue;
                }
                let sk = get_s(item, attr::SK).unwrap_or_default();
                let body = get_s(item, attr::BODY).unwrap_or_default();
                let value = serde_json::from_str(body).map_err(|e| {
                    permanent(
                        operation(),
                        format!(
                            "the item {}/{sk} holds a `body` that is not JSON: {e}",
                            target_pk(id)
                        ),
                    )
                })?;
                records.push(log_entry(id, sk, value));
                if records.len() == limit {
                    break;
                }
            }
            match out.last_evaluated_key() {
                Some(k) if !k.is_empty() => start = Some(k.clone()),
                _ => break,
            }
        }
        Ok(records)
    }
}

/// A stored record as the log port answers it: its instant is the body's `at`, else the one its
/// sort key carries (records are keyed `LOG#<at>#<hash>`).
fn log_entry(id: &ScalableTargetId, sk: &str, body: serde_json::Value) -> LogEntry {
    let from_key = || {
        sk.strip_prefix(LOG_PREFIX)
            .and_then(|rest| rest.split('#').next())
            .and_then(|at| DateTime::parse_from_rfc3339(at).ok())
            .map(|at| at.with_timezone(&Utc))
    };
    let at = body
        .get("at")
        .and_then(|a| a.as_str())
        .and_then(|a| DateTime::parse_from_rfc3339(a).ok())
        .map(|a| a.with_timezone(&Utc))
        .or_else(from_key)
        .unwrap_or(DateTime::UNIX_EPOCH);
    LogEntry {
        target: id.clone(),
        at,
        body,
    }
}

/// Whether [`create_table`] made the table or found it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TableCreated {
    Created,
    AlreadyExisted,
}

/// How long [`create_table`] waits for the table to become ACTIVE (on-demand tables take seconds).
const TABLE_ACTIVE_POLLS: u32 = 120;
const TABLE_ACTIVE_POLL: Duration = Duration::from_millis(500);

/// Creates headroom's table (PK/SK strings, on-demand), waits until it is ACTIVE and enables TTL
/// on `expires_at`. Safe to run again on an existing table.
pub async fn create_table(client: &Client, name: &str) -> Result<TableCreated, PortError> {
    let def = |attr_name: &str| {
        AttributeDefinition::builder()
            .attribute_name(attr_name)
            .attribute_type(ScalarAttributeType::S)
            .build()
            .map_err(|e| permanent("build the table definition", e))
    };
    let key = |attr_name: &str, kind: KeyType| {
        KeySchemaElement::builder()
            .attribute_name(attr_name)
            .key_type(kind)
            .build()
            .map_err(|e| permanent("build the table definition", e))
    };
    let created = client
        .create_table()
        .table_name(name)
        .attribute_definitions(def(attr::PK)?)
        .attribute_definitions(def(attr::SK)?)
        .key_schema(key(attr::PK, KeyType::Hash)?)
        .key_schema(key(attr::SK, KeyType::Range)?)
        .billing_mode(BillingMode::PayPerRequest)
        .send()
        .await;
    let outcome = match created {
        Ok(_) => TableCreated::Created,
        Err(err)
            if err
                .as_service_error()
                .is_some_and(|e| e.is_resource_in_use_exception()) =>
        {
            TableCreated::AlreadyExisted
        }
        Err(err) => return Err(port_error(format!("create table {name}"), err)),
    };

    let mut polls = 0;
    loop {
        let out = client
            .describe_table()
            .table_name(name)
            .send()
            .await
            .map_err(|e| port_error(format!("describe table {name}"), e))?;
        if out.table().and_then(|t| t.table_status()) == Some(&TableStatus::Active) {
            break;
        }
        polls += 1;
        if polls == TABLE_ACTIVE_POLLS {
            return Err(retryable(
                format!("create table {name}"),
                "the table is not ACTIVE after 60 s: run the command again",
            ));
        }
        tokio::time::sleep(TABLE_ACTIVE_POLL).await;
    }

    let ttl = client
        .describe_time_to_live()
        .table_name(name)
        .send()
        .await
        .map_err(|e| port_error(format!("read the TTL setting of table {name}"), e))?;
    let ttl_on = ttl.time_to_live_description().is_some_and(|d| {
        d.attribute_name() == Some(attr::EXPIRES_AT)
            && matches!(
                d.time_to_live_status(),
                Some(TimeToLiveStatus::Enabled | TimeToLiveStatus::Enabling)
            )
    });
    if !ttl_on {
        let spec = TimeToLiveSpecification::builder()
            .enabled(true)
            .attribute_name(attr::EXPIRES_AT)
            .build()
            .map_err(|e| permanent("build the TTL setting", e))?;
        client
            .update_time_to_live()
            .table_name(name)
            .time_to_live_specification(spec)
            .send()
            .await
            .map_err(|e| port_error(format!("enable TTL on {}.{}", name, attr::EXPIRES_AT), e))?;
    }
    Ok(outcome)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a failed unwrap is a failed test
mod tests {
    use super::*;
    use crate::test_support::dynamo_client;
    use aws_sdk_dynamodb::operation::batch_get_item::BatchGetItemOutput;
    use aws_sdk_dynamodb::operation::put_item::PutItemOutput;
    use aws_sdk_dynamodb::types::error::{
        ConditionalCheckFailedException, TransactionCanceledException,
    };
    use aws_sdk_dynamodb::types::CancellationReason;
    use aws_smithy_mocks::mock;

    fn id() -> ScalableTargetId {
        ScalableTargetId::variant("chat", "AllTraffic").unwrap()
    }

    fn stored_item(token: &str, version: u64) -> Item {
        let mut item = key(target_pk(&id()), STATE_SK);
        item.insert(attr::VERSION.into(), n(version));
        item.insert(attr::BODY.into(), s("{}"));
        item.insert(attr::TOKEN.into(), s(token));
        item
    }

    fn failed_with(item: Item) -> PutItemError {
        PutItemError::ConditionalCheckFailedException(
            ConditionalCheckFailedException::builder()
                .message("The conditional request failed")
                .set_item(Some(item))
                .build(),
        )
    }

    fn state_at(version: u64) -> TargetState {
        TargetState {
            version,
            ..TargetState::default()
        }
    }

    #[tokio::test]
    async fn a_failed_condition_holding_our_token_is_the_ambiguous_write_and_counts_as_saved() {
        // GIVEN the first attempt landed (version 4 -> 5 with token t-1) but its answer was lost,
        // so the retry fails its condition and DynamoDB returns the stored item
        let rule = mock!(Client::put_item)
            .match_requests(|r| {
                r.return_values_on_condition_check_failure()
                    == Some(&ReturnValuesOnConditionCheckFailure::AllOld)
                    && r.expression_attribute_values()
                        .and_then(|v| v.get(":expected"))
                        == Some(&n(4))
                    && r.item().and_then(|i| i.get(attr::VERSION)) == Some(&n(5))
                    // DynamoDB refuses unused expression names: only the version's.
                    && r.expression_attribute_names().is_some_and(|m| m.len() == 1 && m.contains_key("#v"))
            })
            .then_error(|| failed_with(stored_item("t-1", 5)));
        let store = DynamoStateStore::new(dynamo_client(&[&rule]), "headroom");
        // WHEN the retry carries the same token THEN it counts as saved
        let outcome = store.save_state(&id(), &state_at(4), "t-1").await.unwrap();
        assert_eq!(outcome, SaveOutcome::Saved);
        assert_eq!(rule.num_calls(), 1);
    }

    #[tokio::test]
    async fn a_failed_condition_holding_another_token_is_a_conflict() {
        let rule =
            mock!(Client::put_item).then_error(|| failed_with(stored_item("someone-else", 5)));
        let store = DynamoStateStore::new(dynamo_client(&[&rule]), "headroom");
        let outcome = store.save_state(&id(), &state_at(4), "t-1").await.unwrap();
        assert_eq!(outcome, SaveOutcome::Conflict);
    }

    #[tokio::test]
    async fn a_first_write_is_conditional_on_the_item_not_existing() {
        let rule = mock!(Client::put_item)
            .match_requests(|r| {
                r.condition_expression() == Some("attribute_not_exists(#pk)")
                    && r.item().and_then(|i| i.get(attr::TOKEN)) == Some(&s("t-0"))
                    && r.item()
                        .and_then(|i| i.get(attr::BODY))
                        .and_then(|b| b.as_s().ok())
                        .is_some_and(|b| b.contains("\"version\":1"))
            })
            .then_output(|| PutItemOutput::builder().build());
        let store = DynamoStateStore::new(dynamo_client(&[&rule]), "headroom");
        assert_eq!(
            store.save_state(&id(), &state_at(0), "t-0").await.unwrap(),
            SaveOutcome::Saved
        );
        assert_eq!(rule.num_calls(), 1);
    }

    #[tokio::test]
    async fn unprocessed_keys_are_retried_until_read() {
        let ids: Vec<ScalableTargetId> = (0..3)
            .map(|i| ScalableTargetId::variant(&format!("ep{i}"), "v").unwrap())
            .collect();
        let first: Vec<Item> = vec![{
            let mut item = key(target_pk(&ids[0]), STATE_SK);
            item.insert(attr::VERSION.into(), n(2));
            item.insert(attr::BODY.into(), s("{}"));
            item
        }];
        let unprocessed = key(target_pk(&ids[1]), STATE_SK);
        let rule = mock!(Client::batch_get_item)
            .sequence()
            .output(move || {
                BatchGetItemOutput::builder()
                    .responses("headroom", first.clone())
                    .unprocessed_keys(
                        "headroom",
                        KeysAndAttributes::builder()
                            .keys(unprocessed.clone())
                            .build()
                            .unwrap(),
                    )
                    .build()
            })
            .output(|| {
                BatchGetItemOutput::builder()
                    .responses("headroom", vec![])
                    .build()
            })
            .build();
        let store = DynamoStateStore::new(dynamo_client(&[&rule]), "headroom");
        let states = store.load_states(&ids).await.unwrap();
        assert_eq!(rule.num_calls(), 2, "the unprocessed key is asked again");
        assert_eq!(states.len(), 3);
        assert_eq!(states[0].1.version, 2);
        assert_eq!(states[1].1, TargetState::default());
    }

    #[tokio::test]
    async fn a_transaction_conflict_is_retryable_and_a_condition_failure_is_a_conflict() {
        let cancelled = |code: &'static str| {
            move || {
                TransactWriteItemsError::TransactionCanceledException(
                    TransactionCanceledException::builder()
                        .cancellation_reasons(CancellationReason::builder().code("None").build())
                        .cancellation_reasons(CancellationReason::builder().code(code).build())
                        .build(),
                )
            }
        };
        let plan = StoredPlan {
            version: 0,
            text: "version = 1".into(),
            source_name: "p.toml".into(),
            applied_at: DateTime::UNIX_EPOCH,
        };
        let rule = mock!(Client::transact_write_items).then_error(cancelled("TransactionConflict"));
        let store = DynamoStateStore::new(dynamo_client(&[&rule]), "headroom");
        let err = store.save_plan(&plan, 3).await.unwrap_err();
        assert!(err.is_retryable(), "{err}");

        let tx =
            mock!(Client::transact_write_items).then_error(cancelled("ConditionalCheckFailed"));
        let reread = mock!(Client::get_item).then_output(|| {
            aws_sdk_dynamodb::operation::get_item::GetItemOutput::builder().build()
        });
        let store = DynamoStateStore::new(dynamo_client(&[&tx, &reread]), "headroom");
        assert_eq!(
            store.save_plan(&plan, 3).await.unwrap(),
            SaveOutcome::Conflict
        );
    }

    #[test]
    fn log_keys_sort_by_time_and_differ_by_body() {
        let t1 = DateTime::parse_from_rfc3339("2026-03-14T09:42:31.412Z")
            .unwrap()
            .with_timezone(&Utc);
        let t2 = t1 + chrono::Duration::milliseconds(1);
        assert!(log_sk(t1, "{\"b\":1}") < log_sk(t2, "{\"a\":0}"));
        assert_ne!(log_sk(t1, "a"), log_sk(t1, "b"));
        assert_eq!(log_sk(t1, "a"), log_sk(t1, "a"));
        assert!(log_sk(t1, "a").starts_with("LOG#2026-03-14T09:42:31.412Z#"));
        assert_eq!(plan_version_sk(7), "V#0000000007");
    }
}

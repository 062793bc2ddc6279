//! DynamoDB: the [`ReviewStore`] and [`ScheduleReviewStore`] ports. Model identities (`MODEL`),
//! policy reviews (`REVIEW#<id>`) and schedule reviews (`SCHEDULE#<id>`) live under the target's
//! partition, per docs/state-table.md.
//!
//! A review write is conditional on the revision read (0: the item must not exist), so two
//! events of one change cannot both open it and an acknowledgement cannot overwrite a reopening.
//! When a conditional write fails, DynamoDB returns the stored item (`ALL_OLD`): if it already
//! holds exactly what we wrote, our earlier attempt landed (the ambiguous write) and it counts as
//! saved.

use std::collections::HashMap;

use aws_sdk_dynamodb::operation::put_item::PutItemError;
use aws_sdk_dynamodb::types::{AttributeValue, ReturnValuesOnConditionCheckFailure};
use aws_sdk_dynamodb::Client;
use chrono::{SecondsFormat, Utc};
use headroom_core::deploy_ports::{ReviewStore, ScheduleReviewStore};
use headroom_core::identity::ModelIdentity;
use headroom_core::ids::ScalableTargetId;
use headroom_core::model::ReviewId;
use headroom_core::ports::{PortError, SaveOutcome};
use headroom_core::review::schedule::ScheduleReview;
use headroom_core::review::Review;
use serde::de::DeserializeOwned;
use serde::Serialize;

use crate::dynamo::{attr, target_pk};
use crate::error::{permanent, port_error};

pub const MODEL_SK: &str = "MODEL";
pub const REVIEW_PREFIX: &str = "REVIEW#";
pub const SCHEDULE_PREFIX: &str = "SCHEDULE#";

/// Attributes of these items besides `PK`, `SK`, `body` and `updated_at`.
pub mod review_attr {
    pub const STATUS: &str = "status";
    pub const REVISION: &str = "revision";
    pub const FINGERPRINT: &str = "fingerprint";
    pub const ENDPOINT: &str = "endpoint";
    pub const OPENED_AT: &str = "opened_at";
    /// Schedule reviews: the planned peak and its verdict.
    pub const PEAK: &str = "peak";
    pub const VERDICT: &str = "verdict";
}

/// Pages of one target's reviews read at most (each page is up to 1 MB).
const MAX_PAGES: usize = 20;

type Item = HashMap<String, AttributeValue>;

fn s(v: impl Into<String>) -> AttributeValue {
    AttributeValue::S(v.into())
}

fn get_s<'a>(item: &'a Item, name: &str) -> Option<&'a str> {
    item.get(name)
        .and_then(|v| v.as_s().ok())
        .map(String::as_str)
}

pub fn review_sk(review_id: &str) -> String {
    format!("{REVIEW_PREFIX}{review_id}")
}

pub fn schedule_sk(review_id: &str) -> String {
    format!("{SCHEDULE_PREFIX}{review_id}")
}

fn now() -> AttributeValue {
    s(Utc::now().to_rfc3339_opts(SecondsFormat::Millis, true))
}

/// A review item's `body`, decoded (`what` names it in the error: "review", "schedule review").
fn decode_body<T: DeserializeOwned>(item: &Item, table: &str, what: &str) -> Result<T, PortError> {
    let body = get_s(item, attr::BODY).ok_or_else(|| {
        permanent(
            format!("read a {what} from table {table}"),
            format!(
                "item {:?}/{:?} has no body",
                get_s(item, attr::PK),
                get_s(item, attr::SK)
            ),
        )
    })?;
    serde_json::from_str(body).map_err(|e| {
        permanent(
            format!(
                "decode {what} {:?} from table {table}",
                get_s(item, attr::SK)
            ),
            e,
        )
    })
}

/// MODEL and REVIEW# items in headroom's table.
#[derive(Debug, Clone)]
pub struct DynamoReviews {
    client: Client,
    table: String,
}

impl DynamoReviews {
    /// The AWS operations this adapter calls (what its IAM policy must allow).
    pub const OPERATIONS: &'static [&'static str] =
        &["dynamodb:GetItem", "dynamodb:PutItem", "dynamodb:Query"];

    pub fn new(client: Client, table: impl Into<String>) -> Self {
        Self {
            client,
            table: table.into(),
        }
    }

    fn key(&self, id: &ScalableTargetId, sk: String) -> Item {
        HashMap::from([
            (attr::PK.to_owned(), s(target_pk(id))),
            (attr::SK.to_owned(), s(sk)),
        ])
    }
}

impl ReviewStore for DynamoReviews {
    async fn load_identity(
        &self,
        id: &ScalableTargetId,
    ) -> Result<Option<ModelIdentity>, PortError> {
        let out = self
            .client
            .get_item()
            .table_name(&self.table)
            .set_key(Some(self.key(id, MODEL_SK.to_owned())))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| {
                port_error(
                    format!("read the model identity of {id} from table {}", self.table),
                    e,
                )
            })?;
        let Some(item) = out.item() else {
            return Ok(None);
        };
        let body = get_s(item, attr::BODY).ok_or_else(|| {
            permanent(
                format!("read the model identity of {id}"),
                "the MODEL item has no body",
            )
        })?;
        serde_json::from_str(body)
            .map(Some)
            .map_err(|e| permanent(format!("decode the model identity of {id}"), e))
    }

    async fn save_identity(
        &self,
        id: &ScalableTargetId,
        identity: &ModelIdentity,
    ) -> Result<(), PortError> {
        let body = serde_json::to_string(identity)
            .map_err(|e| permanent(format!("encode the model identity of {id}"), e))?;
        let mut item = self.key(id, MODEL_SK.to_owned());
        item.insert(attr::BODY.into(), s(body));
        item.insert(review_attr::FINGERPRINT.into(), s(identity.fingerprint()));
        item.insert(attr::UPDATED_AT.into(), now());
        self.client
            .put_item()
            .table_name(&self.table)
            .set_item(Some(item))
            .send()
            .await
            .map_err(|e| {
                port_error(
                    format!("store the model identity of {id} in table {}", self.table),
                    e,
                )
            })?;
        Ok(())
    }

    async fn load_review(
        &self,
        id: &ScalableTargetId,
        review_id: &ReviewId,
    ) -> Result<Option<Review>, PortError> {
        self.get(id, review_sk(review_id), &format!("review {review_id}"))
            .await
    }

    async fn save_review(&self, review: &Review) -> Result<SaveOutcome, PortError> {
        let mut next = review.clone();
        next.revision = review.revision + 1;
        let mut extra = vec![
            (review_attr::STATUS, s(review.status.as_str())),
            (review_attr::FINGERPRINT, s(&review.fingerprint)),
        ];
        if let Some(endpoint) = &review.endpoint {
            extra.push((review_attr::ENDPOINT, s(endpoint)));
        }
        self.put_revision(
            &review.target,
            review_sk(&review.id),
            &format!("review {}", review.id),
            &next,
            review.revision,
            review.opened_at,
            extra,
        )
        .await
    }

    async fn reviews(&self, id: &ScalableTargetId) -> Result<Vec<Review>, PortError> {
        let mut out: Vec<Review> = self.query(id, REVIEW_PREFIX, "review").await?;
        out.sort_by_key(|r| std::cmp::Reverse(r.opened_at));
        Ok(out)
    }
}

impl ScheduleReviewStore for DynamoReviews {
    async fn load_schedule_review(
        &self,
        id: &ScalableTargetId,
        review_id: &ReviewId,
    ) -> Result<Option<ScheduleReview>, PortError> {
        self.get(
            id,
            schedule_sk(review_id),
            &format!("schedule review {review_id}"),
        )
        .await
    }

    async fn save_schedule_review(
        &self,
        review: &ScheduleReview,
    ) -> Result<SaveOutcome, PortError> {
        let mut next = review.clone();
        next.revision = review.revision + 1;
        let extra = vec![
            (review_attr::STATUS, s(review.status.as_str())),
            (review_attr::PEAK, s(&review.peak)),
            (review_attr::VERDICT, s(review.verdict.as_str())),
        ];
        self.put_revision(
            &review.target,
            schedule_sk(&review.id),
            &format!("schedule review {}", review.id),
            &next,
            review.revision,
            review.opened_at,
            extra,
        )
        .await
    }

    async fn schedule_reviews(
        &self,
        id: &ScalableTargetId,
    ) -> Result<Vec<ScheduleReview>, PortError> {
        let mut out: Vec<ScheduleReview> =
            self.query(id, SCHEDULE_PREFIX, "schedule review").await?;
        out.sort_by_key(|r| std::cmp::Reverse(r.opened_at));
        Ok(out)
    }
}

impl DynamoReviews {
    /// One review item (strongly consistent), decoded.
    async fn get<T: DeserializeOwned>(
        &self,
        id: &ScalableTargetId,
        sk: String,
        what: &str,
    ) -> Result<Option<T>, PortError> {
        let out = self
            .client
            .get_item()
            .table_name(&self.table)
            .set_key(Some(self.key(id, sk)))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| port_error(format!("read {what} of {id} from table {}", self.table), e))?;
        out.item()
            .map(|i| decode_body(i, &self.table, what))
            .transpose()
    }

    /// Writes `next` (already at `revision + 1`) if the stored item is still at `revision` (0:
    /// it must not exist). A failed condition whose stored body is exactly ours is our own
    /// earlier attempt (the ambiguous write) and counts as saved.
    #[allow(clippy::too_many_arguments)] // the item's parts, each named at the call
    async fn put_revision<T: Serialize>(
        &self,
        id: &ScalableTargetId,
        sk: String,
        what: &str,
        next: &T,
        revision: u64,
        opened_at: chrono::DateTime<Utc>,
        extra: Vec<(&str, AttributeValue)>,
    ) -> Result<SaveOutcome, PortError> {
        let operation = || format!("store {what} of {id} in table {}", self.table);
        let body = serde_json::to_string(next).map_err(|e| permanent(operation(), e))?;
        let mut item = self.key(id, sk);
        item.insert(attr::BODY.into(), s(body.clone()));
        item.insert(
            review_attr::REVISION.into(),
            AttributeValue::N((revision + 1).to_string()),
        );
        item.insert(
            review_attr::OPENED_AT.into(),
            s(opened_at.to_rfc3339_opts(SecondsFormat::Millis, true)),
        );
        for (name, value) in extra {
            item.insert(name.to_owned(), value);
        }
        item.insert(attr::UPDATED_AT.into(), now());
        let mut put = self
            .client
            .put_item()
            .table_name(&self.table)
            .set_item(Some(item))
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld);
        put = if revision == 0 {
            put.condition_expression("attribute_not_exists(#pk)")
                .expression_attribute_names("#pk", attr::PK)
        } else {
            put.condition_expression("#rev = :rev")
                .expression_attribute_names("#rev", review_attr::REVISION)
                .expression_attribute_values(":rev", AttributeValue::N(revision.to_string()))
        };
        match put.send().await {
            Ok(_) => Ok(SaveOutcome::Saved),
            Err(e) => match e.as_service_error() {
                Some(PutItemError::ConditionalCheckFailedException(ccf)) => {
                    let ours =
                        ccf.item().and_then(|old| get_s(old, attr::BODY)) == Some(body.as_str());
                    Ok(if ours {
                        SaveOutcome::Saved
                    } else {
                        SaveOutcome::Conflict
                    })
                }
                _ => Err(port_error(operation(), e)),
            },
        }
    }

    /// Every item of the target's partition whose sort key starts with `prefix`, decoded.
    async fn query<T: DeserializeOwned>(
        &self,
        id: &ScalableTargetId,
        prefix: &str,
        what: &str,
    ) -> Result<Vec<T>, PortError> {
        let mut out = Vec::new();
        let mut start: Option<Item> = None;
        for _ in 0..MAX_PAGES {
            let page = self
                .client
                .query()
                .table_name(&self.table)
                .key_condition_expression("#pk = :pk AND begins_with(#sk, :prefix)")
                .expression_attribute_names("#pk", attr::PK)
                .expression_attribute_names("#sk", attr::SK)
                .expression_attribute_values(":pk", s(target_pk(id)))
                .expression_attribute_values(":prefix", s(prefix))
                .consistent_read(true)
                .set_exclusive_start_key(start.take())
                .send()
                .await
                .map_err(|e| {
                    port_error(
                        format!("list the {what}s of {id} in table {}", self.table),
                        e,
                    )
                })?;
            for item in page.items() {
                out.push(decode_body(item, &self.table, what)?);
            }
            match page.last_evaluated_key() {
                Some(k) if !k.is_empty() => start = Some(k.clone()),
                _ => return Ok(out),
            }
        }
        Err(permanent(
            format!("list the {what}s of {id}"),
            format!("more than {MAX_PAGES} pages of {what}s: the partition is larger than headroom expects"),
        ))
    }
}

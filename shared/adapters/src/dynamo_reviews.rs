//! DynamoDB: the [`ReviewStore`] port. Model identities (`MODEL`) and policy reviews
//! (`REVIEW#<id>`) live under the target's partition, per docs/state-table.md.
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
use headroom_core::deploy_ports::ReviewStore;
use headroom_core::identity::ModelIdentity;
use headroom_core::ids::ScalableTargetId;
use headroom_core::model::ReviewId;
use headroom_core::ports::{PortError, SaveOutcome};
use headroom_core::review::Review;

use crate::dynamo::{attr, target_pk};
use crate::error::{permanent, port_error};

pub const MODEL_SK: &str = "MODEL";
pub const REVIEW_PREFIX: &str = "REVIEW#";

/// Attributes of these items besides `PK`, `SK`, `body` and `updated_at`.
pub mod review_attr {
    pub const STATUS: &str = "status";
    pub const REVISION: &str = "revision";
    pub const FINGERPRINT: &str = "fingerprint";
    pub const ENDPOINT: &str = "endpoint";
    pub const OPENED_AT: &str = "opened_at";
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

fn now() -> AttributeValue {
    s(Utc::now().to_rfc3339_opts(SecondsFormat::Millis, true))
}

fn decode_review(item: &Item, table: &str) -> Result<Review, PortError> {
    let body = get_s(item, attr::BODY).ok_or_else(|| {
        permanent(
            format!("read a review from table {table}"),
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
                "decode review {:?} from table {table}",
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
        let out = self
            .client
            .get_item()
            .table_name(&self.table)
            .set_key(Some(self.key(id, review_sk(review_id))))
            .consistent_read(true)
            .send()
            .await
            .map_err(|e| {
                port_error(
                    format!("read review {review_id} of {id} from table {}", self.table),
                    e,
                )
            })?;
        out.item()
            .map(|i| decode_review(i, &self.table))
            .transpose()
    }

    async fn save_review(&self, review: &Review) -> Result<SaveOutcome, PortError> {
        let id = &review.target;
        let operation = || format!("store review {} of {id} in table {}", review.id, self.table);
        let mut next = review.clone();
        next.revision = review.revision + 1;
        let body = serde_json::to_string(&next).map_err(|e| permanent(operation(), e))?;
        let mut item = self.key(id, review_sk(&review.id));
        item.insert(attr::BODY.into(), s(body.clone()));
        item.insert(review_attr::STATUS.into(), s(review.status.as_str()));
        item.insert(
            review_attr::REVISION.into(),
            AttributeValue::N(next.revision.to_string()),
        );
        item.insert(review_attr::FINGERPRINT.into(), s(&review.fingerprint));
        item.insert(
            review_attr::OPENED_AT.into(),
            s(review
                .opened_at
                .to_rfc3339_opts(SecondsFormat::Millis, true)),
        );
        if let Some(endpoint) = &review.endpoint {
            item.insert(review_attr::ENDPOINT.into(), s(endpoint));
        }
        item.insert(attr::UPDATED_AT.into(), now());
        let mut put = self
            .client
            .put_item()
            .table_name(&self.table)
            .set_item(Some(item))
            .return_values_on_condition_check_failure(ReturnValuesOnConditionCheckFailure::AllOld);
        put = if review.revision == 0 {
            put.condition_expression("attribute_not_exists(#pk)")
                .expression_attribute_names("#pk", attr::PK)
        } else {
            put.condition_expression("#rev = :rev")
                .expression_attribute_names("#rev", review_attr::REVISION)
                .expression_attribute_values(":rev", AttributeValue::N(review.revision.to_string()))
        };
        match put.send().await {
            Ok(_) => Ok(SaveOutcome::Saved),
            Err(e) => match e.as_service_error() {
                Some(PutItemError::ConditionalCheckFailedException(ccf)) => {
                    // The ambiguous write: our earlier attempt may be what is stored.
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

    async fn reviews(&self, id: &ScalableTargetId) -> Result<Vec<Review>, PortError> {
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
                .expression_attribute_values(":prefix", s(REVIEW_PREFIX))
                .consistent_read(true)
                .set_exclusive_start_key(start.take())
                .send()
                .await
                .map_err(|e| {
                    port_error(
                        format!("list the reviews of {id} in table {}", self.table),
                        e,
                    )
                })?;
            for item in page.items() {
                out.push(decode_review(item, &self.table)?);
            }
            match page.last_evaluated_key() {
                Some(k) if !k.is_empty() => start = Some(k.clone()),
                _ => {
                    out.sort_by_key(|r| std::cmp::Reverse(r.opened_at));
                    return Ok(out);
                }
            }
        }
        Err(permanent(
            format!("list the reviews of {id}"),
            format!("more than {MAX_PAGES} pages of reviews: the partition is larger than headroom expects"),
        ))
    }
}

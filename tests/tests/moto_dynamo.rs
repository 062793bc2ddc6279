//! The DynamoDB state store against moto over HTTP, with the real SDK client: conditional
//! writes, the ambiguous write, the plan transaction, batch reads and the decision log. Each
//! test makes its own table, so tests run in parallel against one moto.

use std::collections::HashMap;

use aws_sdk_dynamodb::types::{AttributeValue, TimeToLiveStatus};
use chrono::{DateTime, Duration, SubsecRound, Utc};
use headroom_adapters::dynamo::{attr, log_sk, plan_version_sk, target_pk, PLAN_PK};
use headroom_adapters::{create_table, DynamoStateStore, TableCreated};
use headroom_core::ids::ScalableTargetId;
use headroom_core::log::DecisionRecord;
use headroom_core::ports::{SaveOutcome, StateStore, StoredPlan};
use headroom_core::{decide, parse_plan, Claim, ClaimSource, Span, TargetState};
use headroom_tests::{sdk_config, unique};

async fn store() -> DynamoStateStore {
    let client = aws_sdk_dynamodb::Client::new(&sdk_config().await);
    let table = unique("headroom");
    assert_eq!(
        create_table(&client, &table).await.expect("create table"),
        TableCreated::Created
    );
    DynamoStateStore::new(client, table)
}

fn variant(name: &str) -> ScalableTargetId {
    ScalableTargetId::variant(name, "AllTraffic").expect("valid test id")
}

fn manual_claim(floor: u32, now: DateTime<Utc>) -> Claim {
    Claim::new(
        ClaimSource::Manual,
        floor,
        now,
        now + Duration::hours(1),
        None,
        "test",
    )
}

fn peak_claim(name: &str, floor: u32, now: DateTime<Utc>) -> Claim {
    Claim::new(
        ClaimSource::Peak(name.into()),
        floor,
        now,
        now + Duration::hours(1),
        None,
        "test",
    )
}

#[tokio::test]
async fn create_table_enables_ttl_and_is_safe_to_run_again() {
    let store = store().await;
    let ttl = store
        .client()
        .describe_time_to_live()
        .table_name(store.table())
        .send()
        .await
        .expect("describe TTL");
    let ttl = ttl.time_to_live_description().expect("TTL description");
    assert_eq!(ttl.attribute_name(), Some(attr::EXPIRES_AT));
    assert_eq!(ttl.time_to_live_status(), Some(&TimeToLiveStatus::Enabled));
    let again = create_table(store.client(), store.table())
        .await
        .expect("second create");
    assert_eq!(again, TableCreated::AlreadyExisted);
}

#[tokio::test]
async fn a_state_round_trips_with_its_version() {
    let store = store().await;
    let id = variant(&unique("rt"));
    let now = Utc::now().trunc_subsecs(3);
    let mut state = TargetState::default();
    state.put_claim(manual_claim(4, now));

    assert_eq!(
        store.save_state(&id, &state, "t-1").await.expect("save"),
        SaveOutcome::Saved
    );
    let loaded = store
        .load_states(std::slice::from_ref(&id))
        .await
        .expect("load");
    assert_eq!(loaded.len(), 1);
    assert_eq!(loaded[0].1.version, 1);
    assert!(loaded[0].1.same_content(&state), "{:?}", loaded[0].1);
}

#[tokio::test]
async fn two_writers_with_the_same_expected_version_lose_no_claim() {
    // GIVEN a stored state at version 1
    let store = store().await;
    let id = variant(&unique("race"));
    let now = Utc::now().trunc_subsecs(3);
    assert_eq!(
        store
            .save_state(&id, &TargetState::default(), "init")
            .await
            .expect("init"),
        SaveOutcome::Saved
    );
    let read = store
        .load_states(std::slice::from_ref(&id))
        .await
        .expect("load")
        .remove(0)
        .1;
    assert_eq!(read.version, 1);

    // WHEN two invocations that both read version 1 each add their own claim and write
    let mut a = read.clone();
    a.put_claim(peak_claim("a", 3, now));
    let mut b = read.clone();
    b.put_claim(peak_claim("b", 5, now));
    // Both read version 1 before either writes: that is the race. DynamoDB serialises the two
    // writes; moto does not lock its table between the condition check and the write, so the
    // test sends them one after the other rather than at the same instant.
    let ra = store
        .save_state(&id, &a, "writer-a")
        .await
        .expect("writer a");
    let rb = store
        .save_state(&id, &b, "writer-b")
        .await
        .expect("writer b");

    // THEN the first is saved and the second, stale, is told to re-read (not overwritten)
    assert_eq!((ra, rb), (SaveOutcome::Saved, SaveOutcome::Conflict));

    // WHEN the loser re-reads, adds its claim again and writes THEN both claims are stored
    let mut fresh = store
        .load_states(std::slice::from_ref(&id))
        .await
        .expect("reload")
        .remove(0)
        .1;
    assert_eq!(fresh.version, 2);
    assert!(fresh.claim(&ClaimSource::Peak("a".into())).is_some());
    assert!(fresh.claim(&ClaimSource::Peak("b".into())).is_none());
    fresh.put_claim(peak_claim("b", 5, now));
    assert_eq!(
        store
            .save_state(&id, &fresh, "loser-retry")
            .await
            .expect("retry"),
        SaveOutcome::Saved
    );
    let last = store
        .load_states(std::slice::from_ref(&id))
        .await
        .expect("reload")
        .remove(0)
        .1;
    assert_eq!(last.version, 3);
    assert!(
        last.claim(&ClaimSource::Peak("a".into())).is_some(),
        "claim a lost: {last:?}"
    );
    assert!(
        last.claim(&ClaimSource::Peak("b".into())).is_some(),
        "claim b lost: {last:?}"
    );
}

#[tokio::test]
async fn a_repeated_write_with_our_token_is_saved_and_with_another_token_conflicts() {
    // GIVEN a write of version 0 -> 1 that landed (its answer "lost")
    let store = store().await;
    let id = variant(&unique("ambig"));
    let mut state = TargetState::default();
    state.put_claim(manual_claim(2, Utc::now().trunc_subsecs(3)));
    assert_eq!(
        store
            .save_state(&id, &state, "event-42")
            .await
            .expect("first"),
        SaveOutcome::Saved
    );

    // WHEN the same write is retried with the same token THEN moto's ALL_OLD item shows our
    // token and it counts as saved; a different writer with the same stale version conflicts
    assert_eq!(
        store
            .save_state(&id, &state, "event-42")
            .await
            .expect("retry"),
        SaveOutcome::Saved
    );
    assert_eq!(
        store
            .save_state(&id, &state, "event-43")
            .await
            .expect("other"),
        SaveOutcome::Conflict
    );
    let stored = store
        .load_states(std::slice::from_ref(&id))
        .await
        .expect("load")
        .remove(0)
        .1;
    assert_eq!(stored.version, 1, "the retry wrote nothing more");
}

#[tokio::test]
async fn plan_versions_are_conditional_and_keep_history() {
    let store = store().await;
    let at = Utc::now().trunc_subsecs(3);
    let plan = |text: &str| StoredPlan {
        version: 0,
        text: text.into(),
        source_name: "plan.toml".into(),
        applied_at: at,
    };
    assert_eq!(store.load_plan().await.expect("empty"), None);

    // GIVEN version 1 stored
    assert_eq!(
        store.save_plan(&plan("one"), 0).await.expect("v1"),
        SaveOutcome::Saved
    );
    // WHEN another apply also expects "no plan yet" THEN it conflicts and changes nothing
    assert_eq!(
        store.save_plan(&plan("rival"), 0).await.expect("rival"),
        SaveOutcome::Conflict
    );
    let current = store.load_plan().await.expect("load").expect("a plan");
    assert_eq!((current.version, current.text.as_str()), (1, "one"));
    assert_eq!(current.applied_at, at);

    // WHEN version 2 is applied on top of 1 THEN it is current and both versions are in history
    assert_eq!(
        store.save_plan(&plan("two"), 1).await.expect("v2"),
        SaveOutcome::Saved
    );
    // A retry of that same apply (its answer lost) is recognised as already done.
    assert_eq!(
        store.save_plan(&plan("two"), 1).await.expect("v2 again"),
        SaveOutcome::Saved
    );
    // A stale apply still expecting version 1 conflicts.
    assert_eq!(
        store.save_plan(&plan("stale"), 1).await.expect("stale"),
        SaveOutcome::Conflict
    );
    let current = store.load_plan().await.expect("load").expect("a plan");
    assert_eq!((current.version, current.text.as_str()), (2, "two"));
    for (version, text) in [(1, "one"), (2, "two")] {
        let item = store
            .client()
            .get_item()
            .table_name(store.table())
            .key(attr::PK, AttributeValue::S(PLAN_PK.into()))
            .key(attr::SK, AttributeValue::S(plan_version_sk(version)))
            .send()
            .await
            .expect("history read");
        let item = item.item().expect("history item present");
        assert_eq!(item.get(attr::TEXT), Some(&AttributeValue::S(text.into())));
    }
}

#[tokio::test]
async fn batch_reads_return_defaults_for_missing_targets_across_several_calls() {
    // GIVEN 150 targets (two BatchGetItem calls), of which every tenth has a stored state
    let store = store().await;
    let prefix = unique("batch");
    let ids: Vec<ScalableTargetId> = (0..150)
        .map(|i| variant(&format!("{prefix}-{i}")))
        .collect();
    for id in ids.iter().step_by(10) {
        assert_eq!(
            store
                .save_state(id, &TargetState::default(), "seed")
                .await
                .expect("seed"),
            SaveOutcome::Saved
        );
    }
    // WHEN they are read (one id twice: BatchGetItem refuses duplicate keys)
    let mut wanted = ids.clone();
    wanted.push(ids[0].clone());
    let states = store.load_states(&wanted).await.expect("load");
    // THEN each comes back once per request, in order, stored ones at version 1, others default
    assert_eq!(states.len(), 151);
    for (i, (id, state)) in states.iter().enumerate() {
        assert_eq!(id, &wanted[i]);
        let expected = if i == 150 || i % 10 == 0 { 1 } else { 0 };
        assert_eq!(state.version, expected, "{id}");
    }
}

fn record(id: &ScalableTargetId, at: DateTime<Utc>, trigger: &str) -> DecisionRecord {
    let text = format!(
        "version = 1\n[[target]]\nresource_id = \"{id}\"\nmin_capacity = 1\nmax_capacity = 4\n"
    );
    let plan = parse_plan("log-test.toml", &text).expect("valid plan");
    let decision = decide(
        &plan.targets[0],
        None,
        &TargetState::default(),
        Span::minutes(25),
        at,
    );
    DecisionRecord {
        trigger: trigger.into(),
        decision,
        model: None,
        notes: Vec::new(),
    }
}

#[tokio::test]
async fn the_decision_log_reads_newest_first_and_skips_expired_items() {
    // GIVEN three records an hour apart, and a newer item whose TTL has passed but which TTL has
    // not deleted yet
    let store = store().await;
    let id = variant(&unique("log"));
    let now = Utc::now().trunc_subsecs(3);
    for (hours_ago, trigger) in [(3, "first"), (2, "second"), (1, "third")] {
        store
            .append_log(&record(&id, now - Duration::hours(hours_ago), trigger))
            .await
            .expect("append");
    }
    let expired_body = r#"{"trigger":"expired"}"#;
    store
        .client()
        .put_item()
        .table_name(store.table())
        .set_item(Some(HashMap::from([
            (attr::PK.to_owned(), AttributeValue::S(target_pk(&id))),
            (
                attr::SK.to_owned(),
                AttributeValue::S(log_sk(now, expired_body)),
            ),
            (
                attr::BODY.to_owned(),
                AttributeValue::S(expired_body.into()),
            ),
            (
                attr::EXPIRES_AT.to_owned(),
                AttributeValue::N((now - Duration::minutes(1)).timestamp().to_string()),
            ),
        ])))
        .send()
        .await
        .expect("put expired item");
    // Another target's record must not appear.
    store
        .append_log(&record(&variant(&unique("other")), now, "other"))
        .await
        .expect("append other");

    // WHEN the log is read THEN newest first, the expired item skipped
    let triggers = |records: Vec<serde_json::Value>| -> Vec<String> {
        records
            .iter()
            .map(|r| r["trigger"].as_str().unwrap_or("?").to_owned())
            .collect()
    };
    let all = store
        .recent_log(&id, 10)
        .await
        .expect("read log")
        .into_iter()
        .map(|e| e.body)
        .collect::<Vec<_>>();
    assert_eq!(triggers(all.clone()), ["third", "second", "first"]);
    assert_eq!(all[0]["target"], id.to_string());
    let newest = store
        .recent_log(&id, 2)
        .await
        .expect("read log")
        .into_iter()
        .map(|e| e.body)
        .collect::<Vec<_>>();
    assert_eq!(triggers(newest), ["third", "second"]);
    // The expiry is 30 days after the decision.
    let items = store
        .client()
        .query()
        .table_name(store.table())
        .key_condition_expression("PK = :pk")
        .expression_attribute_values(":pk", AttributeValue::S(target_pk(&id)))
        .send()
        .await
        .expect("raw query");
    let oldest = &items.items()[0];
    let expires: i64 = oldest
        .get(attr::EXPIRES_AT)
        .and_then(|v| v.as_n().ok())
        .and_then(|v| v.parse().ok())
        .expect("expires_at");
    assert_eq!(
        expires,
        (now - Duration::hours(3) + Duration::days(30)).timestamp()
    );
}

#[tokio::test]
async fn a_pending_record_appended_again_after_a_round_trip_through_the_state_is_one_record() {
    // GIVEN a decision-log record appended once, and the same record as it comes back from a
    // stored state's pending list (issue 11, item 3: the next run flushes it again)
    let store = store().await;
    let id = variant(&unique("pending"));
    let now = Utc::now().trunc_subsecs(3);
    let entry =
        headroom_core::model::LogEntry::of(&record(&id, now, "peak-event:e-1")).expect("entry");
    store.append_log_entry(&entry).await.expect("append");
    let mut state = TargetState::default();
    state.pending_log.push(entry);
    store.save_state(&id, &state, "t-1").await.expect("save");
    let loaded = store
        .load_states(std::slice::from_ref(&id))
        .await
        .expect("load")
        .remove(0)
        .1;
    // WHEN the pending copy is appended again
    store
        .append_log_entry(&loaded.pending_log[0])
        .await
        .expect("append again");
    // THEN the log holds one record
    let log = store
        .recent_log(&id, 10)
        .await
        .expect("read")
        .into_iter()
        .map(|e| e.body)
        .collect::<Vec<_>>();
    assert_eq!(log.len(), 1, "{log:#?}");
}

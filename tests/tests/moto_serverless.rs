//! A serverless variant's provisioned concurrency against moto over HTTP: the SageMaker capacity
//! adapter reads `CurrentServerlessConfig`/`DesiredServerlessConfig.ProvisionedConcurrency` from
//! DescribeEndpoint with the real SDK client. moto's Application Auto Scaling refuses the
//! `sagemaker:variant:DesiredProvisionedConcurrency` dimension, so RegisterScalableTarget on it is
//! tested with aws-smithy-mocks in shared/adapters/src/aas.rs.

use headroom_adapters::SageMakerCapacity;
use headroom_core::capacity_port::{Counts, CurrentCapacity};
use headroom_core::ids::ScalableTargetId;
use headroom_tests::{create_serverless_endpoint, sdk_config, unique, CallCounter};

#[tokio::test]
async fn the_capacity_port_reads_a_serverless_variants_provisioned_concurrency() {
    // GIVEN a serverless endpoint in moto with provisioned concurrency 3
    let config = sdk_config().await;
    let counter = CallCounter::default();
    let sagemaker = counter.sagemaker_client(&config);
    let endpoint = unique("faq");
    create_serverless_endpoint(&sagemaker, &endpoint, 3)
        .await
        .expect("create the serverless endpoint in moto");
    counter.reset();
    let port = SageMakerCapacity::new(sagemaker);

    // WHEN its provisioned-concurrency target is read
    let pc = ScalableTargetId::provisioned_concurrency(&endpoint, "AllTraffic").expect("valid id");
    let got = port.desired_and_current(&pc).await.expect("counts");

    // THEN the counts are the provisioned concurrency, in one DescribeEndpoint call
    assert_eq!(
        got,
        Some(Counts {
            desired: 3,
            current: 3
        })
    );
    assert_eq!(counter.get("DescribeEndpoint"), 1);
}

#!/usr/bin/env python3
"""Builds the AWS world of a plan in moto, for infra/bench.sh (which passes
events/plans/local.toml: events/plans/example.toml without its inference component).

For each SageMaker variant the plan manages: a model, an endpoint config and an endpoint (named
as the fixtures in events/ name them), and a registered AAS scalable target with the plan's
base bounds. An inference-component target would be skipped: moto implements no
inference-component call (../shared/notes/local-aws.md).

Uses boto3 (installed with moto) against AWS_ENDPOINT_URL; the table and the plan are created
by the `headroom` CLI itself (infra/bench.sh), as an operator would.
"""

import os
import sys
import tomllib

import boto3

ROLE = "arn:aws:iam::123456789012:role/bench-sagemaker"
# Endpoint configs the fixtures refer to (events/sagemaker/*.json), per endpoint.
CONFIGS = {"chat-prod": "chat-prod-config-v8"}


def main(plan_path):
    with open(plan_path, "rb") as f:
        plan = tomllib.load(f)
    endpoint = os.environ["AWS_ENDPOINT_URL"]
    sm = boto3.client("sagemaker", endpoint_url=endpoint)
    aas = boto3.client("application-autoscaling", endpoint_url=endpoint)
    created = []
    for target in plan.get("target", []):
        rid = target["resource_id"]
        parts = rid.split("/")
        if parts[0] != "endpoint":
            continue
        name, variant = parts[1], parts[3]
        config = CONFIGS.get(name, f"{name}-config")
        model = f"{config}-model"
        sm.create_model(
            ModelName=model,
            ExecutionRoleArn=ROLE,
            PrimaryContainer={"Image": "123456789012.dkr.ecr.us-east-1.amazonaws.com/bench:1", "ModelDataUrl": f"s3://bench/{model}.tar.gz"},
        )
        sm.create_endpoint_config(
            EndpointConfigName=config,
            ProductionVariants=[
                {
                    "VariantName": variant,
                    "ModelName": model,
                    "InitialInstanceCount": max(1, target["min_capacity"]),
                    "InstanceType": "ml.g4dn.xlarge",
                }
            ],
        )
        sm.create_endpoint(EndpointName=name, EndpointConfigName=config)
        aas.register_scalable_target(
            ServiceNamespace="sagemaker",
            ResourceId=rid,
            ScalableDimension="sagemaker:variant:DesiredInstanceCount",
            MinCapacity=target["min_capacity"],
            MaxCapacity=target["max_capacity"],
            SuspendedState={
                "DynamicScalingInSuspended": False,
                "DynamicScalingOutSuspended": False,
                "ScheduledScalingSuspended": False,
            },
        )
        created.append(rid)
    print(f"seed: {len(created)} SageMaker variants with scalable targets: {', '.join(created)}")


if __name__ == "__main__":
    main(sys.argv[1])

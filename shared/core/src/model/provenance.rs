//! Where an AWS service event says it came from.

/// Where an AWS service event says it came from: the envelope's `account` and `region`, and
/// the account and region in the ARN of the resource it names, each when present. An event
/// that carries none of them says nothing; one whose values disagree with the function's own is
/// foreign (`crate::alarms::Home::foreign_event` judges it).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Provenance {
    pub account: Option<String>,
    pub region: Option<String>,
    /// The ARN of the endpoint or model package the event is about.
    pub resource_arn: Option<String>,
}

impl Provenance {
    /// Every (account, region) the event carries. An ARN that is not one counts as an origin
    /// that matches nothing: there is nothing in it to trust.
    pub fn origins(&self) -> Vec<(&str, &str)> {
        let mut out = Vec::new();
        if self.account.is_some() || self.region.is_some() {
            out.push((
                self.account.as_deref().unwrap_or(""),
                self.region.as_deref().unwrap_or(""),
            ));
        }
        if let Some(arn) = self.resource_arn.as_deref() {
            let parts: Vec<&str> = arn.splitn(6, ':').collect();
            match parts[..] {
                ["arn", _, _, region, account, _] => out.push((account, region)),
                _ => out.push(("", "")),
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn origins_come_from_the_envelope_and_the_resource_arn() {
        let p = Provenance {
            account: Some("111".into()),
            region: Some("us-east-1".into()),
            resource_arn: Some("arn:aws:sagemaker:eu-west-1:222:endpoint/e".into()),
        };
        assert_eq!(p.origins(), [("111", "us-east-1"), ("222", "eu-west-1")]);
        // Nothing carried: nothing to judge.
        assert!(Provenance::default().origins().is_empty());
        // Not an ARN: an origin that matches no account.
        let bad = Provenance {
            resource_arn: Some("endpoint/e".into()),
            ..Provenance::default()
        };
        assert_eq!(bad.origins(), [("", "")]);
    }
}

//! The model identity's fingerprint: what the state, the lead-time samples, the decision log and
//! the reviews record as "the model that served".

use super::string_newtype::string_newtype;

string_newtype!(
    /// A stable hash of what serves behind a target (`m1-<16 hex digits>`, made by
    /// `identity::ModelIdentity::fingerprint`). Equal fingerprints mean the same model.
    ModelFingerprint
);

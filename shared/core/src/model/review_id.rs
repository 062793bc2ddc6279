//! A scaling-policy review's id, as operators type it (`headroom reviews ack rv-...`).

use super::string_newtype::string_newtype;

string_newtype!(
    /// `rv-` and 12 hex digits, the same for every event of one model change
    /// (`review::review_id`).
    ReviewId
);

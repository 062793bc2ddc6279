//! A CloudWatch alarm's name, as its transitions carry it and the state keys its facts by.

use super::string_newtype::string_newtype;

string_newtype!(
    /// A CloudWatch alarm name (1 to 255 characters: `headroom-events` refuses longer ones
    /// where the event is parsed). An ARN entry of the plan is not one: its name part is.
    AlarmName
);

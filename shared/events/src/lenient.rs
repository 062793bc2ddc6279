//! Reading the typed parts of an event: errors that name the field path, and parts that are
//! optional in shape as well as in presence, where AWS is loose.

use headroom_core::text::cut;
use serde::de::value::MapAccessDeserializer;
use serde::de::{DeserializeOwned, Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;

use crate::EventError;

/// A part of an AWS event that headroom reads when it has the expected shape and otherwise
/// treats as absent: AWS adds and reshapes parts it documents loosely (the SageMaker developer
/// guide's samples and the EventBridge schema registry disagree on `Tags`, alarms gain fields such
/// as `muteDetail`), and none of these parts is a reason to refuse an event. Use it with `#[serde(default)]`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Lenient<T>(Option<T>);

impl<T> Default for Lenient<T> {
    fn default() -> Self {
        Self(None)
    }
}

impl<T> Lenient<T> {
    pub(crate) fn get(&self) -> Option<&T> {
        self.0.as_ref()
    }

    pub(crate) fn into_inner(self) -> Option<T> {
        self.0
    }
}

impl Lenient<String> {
    /// The text, unless it is missing, of another type or empty.
    pub(crate) fn non_empty(&self) -> Option<&str> {
        self.get().map(String::as_str).filter(|s| !s.is_empty())
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for Lenient<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        // Any JSON is read first; only its fit to `T` is optional.
        let value = Value::deserialize(deserializer)?;
        Ok(Self(T::deserialize(value).ok()))
    }
}

/// A part like [`Lenient`] that is read only from a JSON object: serde reads a struct from a
/// list as well, by position, and a list where AWS sends an object is not that object.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct LenientObject<T>(Option<T>);

impl<T> Default for LenientObject<T> {
    fn default() -> Self {
        Self(None)
    }
}

impl<T> LenientObject<T> {
    pub(crate) fn get(&self) -> Option<&T> {
        self.0.as_ref()
    }

    pub(crate) fn into_inner(self) -> Option<T> {
        self.0
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for LenientObject<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        Ok(Self(if value.is_object() {
            T::deserialize(value).ok()
        } else {
            None
        }))
    }
}

/// For an optional struct field that, once present (`null` included), must be a JSON object:
/// `#[serde(default, deserialize_with = "envelope::present_object")]`. serde would read the
/// struct from a list too, by position, and `["ALARM", "..."]` is no alarm state. Errors inside
/// the object keep their field path.
pub(crate) fn present_object<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    struct ObjectVisitor<T>(std::marker::PhantomData<T>);
    impl<'de, T: Deserialize<'de>> Visitor<'de> for ObjectVisitor<T> {
        type Value = T;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a JSON object")
        }
        fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<T, A::Error> {
            T::deserialize(MapAccessDeserializer::new(map))
        }
    }
    deserializer
        .deserialize_map(ObjectVisitor(std::marker::PhantomData))
        .map(Some)
}

/// Reads `value` as `T`. An error names the field path below `prefix` (`detail.state.value`)
/// and quotes at most a cut value.
pub(crate) fn read<T: DeserializeOwned>(
    kind: &'static str,
    prefix: &str,
    value: &Value,
) -> Result<T, EventError> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let path = e.path().to_string();
        let field = match (prefix, path.as_str()) {
            ("", ".") => "(event)".to_owned(),
            ("", path) => path.to_owned(),
            (prefix, ".") => prefix.to_owned(),
            (prefix, path) => format!("{prefix}.{path}"),
        };
        EventError::malformed(kind, field, cut(&e.into_inner().to_string()))
    })
}

/// The object at `event.field`.
pub(crate) fn object_at<'a>(
    kind: &'static str,
    event: &'a Value,
    field: &str,
) -> Result<&'a Value, EventError> {
    event
        .get(field)
        .filter(|v| v.is_object())
        .ok_or_else(|| EventError::malformed(kind, field, "is missing or not an object"))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)] // a test that cannot unwrap has failed
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn lenient_parts_of_another_shape_are_absent() {
        #[derive(Deserialize)]
        struct Part {
            #[serde(default)]
            name: Lenient<String>,
            #[serde(default)]
            count: Lenient<u32>,
        }
        let p: Part = read("test", "detail", &json!({"name": 5, "count": "x"})).unwrap();
        assert_eq!((p.name.get(), p.count.get()), (None, None));
        let p: Part = read("test", "detail", &json!({"name": "", "count": 3})).unwrap();
        assert_eq!(
            (p.name.get().map(String::as_str), p.name.non_empty()),
            (Some(""), None)
        );
        assert_eq!(p.count.into_inner(), Some(3));
    }

    #[test]
    fn object_parts_are_not_read_from_lists() {
        #[derive(Debug, Deserialize)]
        struct Pair {
            #[serde(default)]
            a: Option<u32>,
            #[serde(default)]
            b: Option<u32>,
        }
        #[derive(Debug, Deserialize)]
        struct Holder {
            #[serde(default)]
            lenient: LenientObject<Pair>,
            #[serde(default, deserialize_with = "present_object")]
            present: Option<Pair>,
        }
        // serde alone reads a struct from a list, by position: the reason for both.
        assert!(serde_json::from_value::<Pair>(json!([1, 2])).is_ok());
        let h: Holder = read("test", "x", &json!({"lenient": [1, 2]})).unwrap();
        assert!(h.lenient.get().is_none() && h.present.is_none());
        let h: Holder = read(
            "test",
            "x",
            &json!({"lenient": {"a": 1}, "present": {"b": 2}}),
        )
        .unwrap();
        assert_eq!(h.lenient.get().and_then(|p| p.a), Some(1));
        assert_eq!(h.present.and_then(|p| p.b), Some(2));
        for present in [json!([1, 2]), json!(null)] {
            let err = read::<Holder>("test", "x", &json!({ "present": present })).unwrap_err();
            assert!(
                err.to_string().contains("field `x.present` invalid type"),
                "{err}"
            );
        }
        let err = read::<Holder>("test", "x", &json!({"present": {"a": "one"}})).unwrap_err();
        assert!(err.to_string().contains("field `x.present.a`"), "{err}");
    }

    #[test]
    fn read_errors_name_the_path_below_the_prefix() {
        #[derive(Debug, Deserialize)]
        #[allow(dead_code)]
        struct Inner {
            value: String,
        }
        #[derive(Debug, Deserialize)]
        #[allow(dead_code)]
        struct Outer {
            state: Inner,
        }
        let err = read::<Outer>("test", "detail", &json!({"state": {"value": 5}})).unwrap_err();
        assert!(
            err.to_string().contains("field `detail.state.value`"),
            "{err}"
        );
        let err = read::<Outer>("test", "detail", &json!({})).unwrap_err();
        assert!(
            err.to_string()
                .contains("field `detail` missing field `state`"),
            "{err}"
        );
    }
}

//! Reading and writing the gateway's JSON.
//!
//! The gateway speaks proto3 JSON: keys and values are base64, 64-bit integers are strings, and a
//! field at its default value (0, false, empty) is left out. Every accessor here therefore takes
//! a missing field as the default and rejects a field of the wrong type with a reason string,
//! which the caller turns into [`Error::Malformed`](crate::Error::Malformed) naming the endpoint.
//! `serde_json::Value` instead of derived structs keeps serde's derive macros out of the build.

use base64::engine::general_purpose::STANDARD;
use base64::Engine as _;
use serde_json::Value;

use crate::error::quote;
use crate::KeyValue;

/// Base64 for a key or value in a request.
pub(crate) fn b64(bytes: &[u8]) -> Value {
    Value::String(STANDARD.encode(bytes))
}

/// A revision in a request: proto3 JSON writes 64-bit integers as strings.
pub(crate) fn rev(revision: i64) -> Value {
    Value::String(revision.to_string())
}

/// The object `v` must be.
pub(crate) fn object<'a>(v: &'a Value, what: &str) -> Result<&'a serde_json::Map<String, Value>, String> {
    v.as_object().ok_or_else(|| format!("{what} is not a JSON object: {}", excerpt(v)))
}

/// A 64-bit integer field (string or number); 0 when absent.
pub(crate) fn int(v: &Value, field: &str) -> Result<i64, String> {
    match v.get(field) {
        None | Some(Value::Null) => Ok(0),
        Some(Value::String(s)) => s.parse().map_err(|_| format!("field {field:?} is not an integer: {:?}", quote(s))),
        Some(Value::Number(n)) => n.as_i64().ok_or_else(|| format!("field {field:?} is not a 64-bit integer: {n}")),
        Some(other) => Err(format!("field {field:?} is not an integer: {}", excerpt(other))),
    }
}

/// A boolean field; false when absent.
pub(crate) fn boolean(v: &Value, field: &str) -> Result<bool, String> {
    match v.get(field) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(other) => Err(format!("field {field:?} is not a boolean: {}", excerpt(other))),
    }
}

/// A string field; empty when absent.
pub(crate) fn string<'a>(v: &'a Value, field: &str) -> Result<&'a str, String> {
    match v.get(field) {
        None | Some(Value::Null) => Ok(""),
        Some(Value::String(s)) => Ok(s),
        Some(other) => Err(format!("field {field:?} is not a string: {}", excerpt(other))),
    }
}

/// A base64 bytes field; empty when absent.
pub(crate) fn bytes(v: &Value, field: &str) -> Result<Vec<u8>, String> {
    let s = string(v, field)?;
    STANDARD.decode(s).map_err(|e| format!("field {field:?} is not base64 ({e}): {:?}", quote(s)))
}

/// An array field; empty when absent.
pub(crate) fn array<'a>(v: &'a Value, field: &str) -> Result<&'a [Value], String> {
    match v.get(field) {
        None | Some(Value::Null) => Ok(&[]),
        Some(Value::Array(a)) => Ok(a),
        Some(other) => Err(format!("field {field:?} is not an array: {}", excerpt(other))),
    }
}

/// The revision in the response header every etcd answer carries. A missing header means the
/// answer is not etcd's.
pub(crate) fn header_revision(v: &Value) -> Result<i64, String> {
    match v.get("header") {
        Some(h @ Value::Object(_)) => int(h, "revision"),
        Some(other) => Err(format!("\"header\" is not an object: {}", excerpt(other))),
        None => Err(format!("no \"header\" in {}", excerpt(v))),
    }
}

/// One `mvccpb.KeyValue`.
pub(crate) fn key_value(v: &Value) -> Result<KeyValue, String> {
    object(v, "a key-value")?;
    Ok(KeyValue {
        key: bytes(v, "key")?,
        value: bytes(v, "value")?,
        create_revision: int(v, "create_revision")?,
        mod_revision: int(v, "mod_revision")?,
        version: int(v, "version")?,
    })
}

/// etcd's own error in a unary answer: `{"error": "...", "message": "...", "code": N}`, or the
/// streaming form `{"error": {"grpc_code": N, "message": "..."}}`. `None` when `v` is no error.
pub(crate) fn grpc_error(v: &Value) -> Option<(i64, String)> {
    let err = v.get("error")?;
    if let Value::Object(_) = err {
        let code = int(err, "grpc_code").unwrap_or(0);
        let message = string(err, "message").unwrap_or("");
        return Some((code, message.to_owned()));
    }
    let code = int(v, "code").unwrap_or(0);
    let message = match string(v, "message") {
        Ok(m) if !m.is_empty() => m.to_owned(),
        _ => err.as_str().map(str::to_owned).unwrap_or_else(|| excerpt(err)),
    };
    Some((code, message))
}

/// A short one-line excerpt of a JSON value for an error message.
pub(crate) fn excerpt(v: &Value) -> String {
    quote(&v.to_string())
}

/// The end of the key range that covers every key starting with `prefix`: the prefix with its
/// last byte below 0xff incremented and the bytes after it dropped; `[0]` (every key from the
/// start) when there is no such byte, as etcdctl does for `--prefix`.
pub(crate) fn prefix_end(prefix: &[u8]) -> Vec<u8> {
    match prefix.iter().rposition(|&b| b < 0xff) {
        Some(i) => {
            let mut end = prefix[..=i].to_vec();
            end[i] += 1;
            end
        }
        None => vec![0],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn prefix_end_matches_etcdctl() {
        assert_eq!(prefix_end(b"a"), b"b");
        assert_eq!(prefix_end(b"ring/"), b"ring0");
        assert_eq!(prefix_end(b"a\xff"), b"b");
        assert_eq!(prefix_end(b"\xff\xff"), [0]);
        assert_eq!(prefix_end(b""), [0]);
    }

    #[test]
    fn missing_fields_are_defaults_and_wrong_types_are_errors() {
        let v = json!({"a": "12", "b": 7, "c": "x", "d": [1], "e": true, "f": "!!"});
        assert_eq!(int(&v, "a"), Ok(12));
        assert_eq!(int(&v, "b"), Ok(7));
        assert_eq!(int(&v, "zz"), Ok(0));
        assert!(int(&v, "c").is_err());
        assert!(int(&v, "d").is_err());
        assert_eq!(boolean(&v, "e"), Ok(true));
        assert_eq!(boolean(&v, "zz"), Ok(false));
        assert!(boolean(&v, "a").is_err());
        assert!(bytes(&v, "f").is_err());
        assert_eq!(bytes(&json!({"k": "YWJj"}), "k"), Ok(b"abc".to_vec()));
        assert!(array(&v, "a").is_err());
        assert!(header_revision(&json!({})).is_err());
        assert!(header_revision(&json!({"header": 3})).is_err());
        assert_eq!(header_revision(&json!({"header": {"revision": "5"}})), Ok(5));
        assert!(key_value(&json!("kv")).is_err());
    }

    #[test]
    fn both_error_shapes_are_recognised() {
        let unary =
            json!({"error": "etcdserver: user name is empty", "message": "etcdserver: user name is empty", "code": 3});
        assert_eq!(grpc_error(&unary), Some((3, "etcdserver: user name is empty".to_owned())));
        let stream = json!({"error": {"grpc_code": 14, "http_code": 503, "message": "unavailable"}});
        assert_eq!(grpc_error(&stream), Some((14, "unavailable".to_owned())));
        assert_eq!(grpc_error(&json!({"header": {}})), None);
        assert_eq!(grpc_error(&json!({"error": 5})).map(|e| e.0), Some(0));
    }
}

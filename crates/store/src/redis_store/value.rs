//! Readers for Redis replies that turn anything unexpected (a missing
//! field, a non-numeric version, a reply of the wrong shape) into a
//! [`StoreError`] instead of a panic: the data may have been written by
//! another build, or by hand.

use redis::Value;

use crate::StoreError;

fn unexpected(what: &str, value: &Value) -> StoreError {
    StoreError::new(format!("expected {what} from redis, got {value:?}"))
}

pub(super) fn array(value: &Value) -> Result<&[Value], StoreError> {
    match value {
        Value::Array(items) | Value::Set(items) => Ok(items),
        other => Err(unexpected("an array", other)),
    }
}

pub(super) fn bytes(value: &Value) -> Result<Vec<u8>, StoreError> {
    match value {
        Value::BulkString(raw) => Ok(raw.clone()),
        Value::SimpleString(raw) => Ok(raw.clone().into_bytes()),
        other => Err(unexpected("a string", other)),
    }
}

pub(super) fn text(value: &Value) -> Result<String, StoreError> {
    String::from_utf8(bytes(value)?).map_err(|_| unexpected("utf-8 text", value))
}

/// A non-negative integer, whether Redis sent it as an integer, a decimal
/// string, or (for sorted-set scores) a whole double.
pub(super) fn uint(value: &Value) -> Result<u64, StoreError> {
    match value {
        Value::Int(n) => u64::try_from(*n).map_err(|_| unexpected("a non-negative integer", value)),
        Value::Double(x) => whole(*x).ok_or_else(|| unexpected("a non-negative integer", value)),
        _ => {
            let raw = text(value)?;
            raw.parse::<u64>()
                .ok()
                .or_else(|| raw.parse::<f64>().ok().and_then(whole))
                .ok_or_else(|| unexpected("a non-negative integer", value))
        }
    }
}

fn whole(x: f64) -> Option<u64> {
    // Scores are written from u64 milliseconds, well inside f64's exact range.
    (x.fract() == 0.0 && (0.0..18_446_744_073_709_551_615.0).contains(&x)).then_some(x as u64)
}

/// Member/score pairs, flat as RESP2 sends them or nested as RESP3 does.
pub(super) fn pairs(value: &Value) -> Result<Vec<(&Value, &Value)>, StoreError> {
    let items = array(value)?;
    if items.iter().all(|item| matches!(item, Value::Array(_))) {
        items
            .iter()
            .map(|item| match array(item)? {
                [member, score] => Ok((member, score)),
                _ => Err(unexpected("a member and a score", item)),
            })
            .collect()
    } else if items.len() % 2 == 0 {
        Ok(items.chunks_exact(2).map(|pair| (&pair[0], &pair[1])).collect())
    } else {
        Err(unexpected("member/score pairs", value))
    }
}

//! Readers for Redis replies that turn anything unexpected (a missing
//! field, a non-numeric version, a reply of the wrong shape) into an
//! [`Unexpected`] instead of a panic: the data may have been written by
//! another build, or by hand. RESP2 and RESP3 shapes both read.

use redis::Value;

/// A reply that is not what the reader expected.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("expected {what} from redis, got {got}")]
pub struct Unexpected {
    pub what: &'static str,
    pub got: String,
}

fn unexpected(what: &'static str, value: &Value) -> Unexpected {
    Unexpected { what, got: format!("{value:?}") }
}

pub fn array(value: &Value) -> Result<&[Value], Unexpected> {
    match value {
        Value::Array(items) | Value::Set(items) => Ok(items),
        other => Err(unexpected("an array", other)),
    }
}

pub fn bytes(value: &Value) -> Result<Vec<u8>, Unexpected> {
    match value {
        Value::BulkString(raw) => Ok(raw.clone()),
        Value::SimpleString(raw) => Ok(raw.clone().into_bytes()),
        other => Err(unexpected("a string", other)),
    }
}

/// Text, or an integer as its decimal text (scripts return both).
pub fn text(value: &Value) -> Result<String, Unexpected> {
    if let Value::Int(n) = value {
        return Ok(n.to_string());
    }
    String::from_utf8(bytes(value)?).map_err(|_| unexpected("utf-8 text", value))
}

/// A non-negative integer, whether Redis sent it as an integer, a decimal
/// string, or (for sorted-set scores) a whole double.
pub fn uint(value: &Value) -> Result<u64, Unexpected> {
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
pub fn pairs(value: &Value) -> Result<Vec<(&Value, &Value)>, Unexpected> {
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

/// A hash as text: flat `key, value, ...` (RESP2) or a map (RESP3).
pub fn string_pairs(value: &Value) -> Result<Vec<(String, String)>, Unexpected> {
    match value {
        Value::Map(entries) => entries.iter().map(|(k, v)| Ok((text(k)?, text(v)?))).collect(),
        _ => array(value)?
            .chunks(2)
            .map(|pair| match pair {
                [k, v] => Ok((text(k)?, text(v)?)),
                _ => Err(unexpected("key/value pairs", value)),
            })
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_read_in_every_shape_redis_sends_them() {
        assert_eq!(uint(&Value::Int(7)), Ok(7));
        assert_eq!(uint(&Value::BulkString(b"42".to_vec())), Ok(42));
        assert_eq!(uint(&Value::Double(1_700_000_000_000.0)), Ok(1_700_000_000_000));
        assert_eq!(uint(&Value::BulkString(b"12.0".to_vec())), Ok(12));
        assert!(uint(&Value::Int(-1)).is_err());
        assert!(uint(&Value::BulkString(b"1.5".to_vec())).is_err());
        assert_eq!(text(&Value::Int(3)).as_deref(), Ok("3"));
    }

    #[test]
    fn pairs_read_flat_and_nested() {
        let flat = Value::Array(vec![Value::BulkString(b"a".to_vec()), Value::Int(1)]);
        let nested = Value::Array(vec![Value::Array(vec![Value::BulkString(b"a".to_vec()), Value::Int(1)])]);
        for value in [&flat, &nested] {
            let read = pairs(value).unwrap();
            assert_eq!((text(read[0].0).unwrap(), uint(read[0].1).unwrap()), ("a".to_owned(), 1));
        }
        let map = Value::Map(vec![(Value::BulkString(b"k".to_vec()), Value::BulkString(b"v".to_vec()))]);
        assert_eq!(string_pairs(&map), Ok(vec![("k".to_owned(), "v".to_owned())]));
        assert_eq!(string_pairs(&flat), Ok(vec![("a".to_owned(), "1".to_owned())]));
        let odd = Value::Array(vec![Value::Int(1)]);
        assert!(pairs(&odd).is_err() && string_pairs(&odd).is_err());
    }
}

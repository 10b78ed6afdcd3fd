//! The shared reply readers of `fogblast-redis`, answering with this
//! crate's [`StoreError`] so the adapter reads replies with `?`.

use fogblast_redis::reply::{self, Unexpected};
use redis::Value;

use crate::StoreError;

fn unexpected(error: Unexpected) -> StoreError {
    StoreError::caused_by("redis reply", error)
}

pub(super) fn array(value: &Value) -> Result<&[Value], StoreError> {
    reply::array(value).map_err(unexpected)
}

pub(super) fn bytes(value: &Value) -> Result<Vec<u8>, StoreError> {
    reply::bytes(value).map_err(unexpected)
}

pub(super) fn text(value: &Value) -> Result<String, StoreError> {
    reply::text(value).map_err(unexpected)
}

pub(super) fn uint(value: &Value) -> Result<u64, StoreError> {
    reply::uint(value).map_err(unexpected)
}

pub(super) fn pairs(value: &Value) -> Result<Vec<(&Value, &Value)>, StoreError> {
    reply::pairs(value).map_err(unexpected)
}

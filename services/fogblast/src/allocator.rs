//! mimalloc's settings for the services. By default mimalloc gives memory
//! it no longer uses back to the system a second after it was freed, with
//! `MADV_DONTNEED`, so the next allocation there faults the page in again
//! and the kernel zeroes it: under a steady load of moves the shard and
//! the gateway took thousands of page faults a second that way
//! (docs/performance.md). Here freed memory is handed back with
//! `MADV_FREE` instead, which the kernel reclaims only when it needs the
//! memory, and after ten seconds rather than one. An operator's own
//! `MIMALLOC_PURGE_DELAY` or `MIMALLOC_PURGE_DECOMMITS` wins.
//!
//! mimalloc's options are set through its C interface, the only unsafe
//! code here: each call passes an option's index and a value.

#![allow(unsafe_code)]

use std::os::raw::{c_int, c_long};

/// `mi_option_purge_decommits` in mimalloc 3's `mi_option_e`.
const PURGE_DECOMMITS: c_int = 5;
/// `mi_option_purge_delay` in mimalloc 3's `mi_option_e`.
const PURGE_DELAY: c_int = 15;

/// How long freed memory stays mapped before it is handed back.
const PURGE_DELAY_MS: c_long = 10_000;

/// Applies the settings above, each unless the environment sets it. Call
/// first thing in `main`: it changes only how freed memory is returned.
pub fn keep_freed_memory_mapped() {
    if std::env::var_os("MIMALLOC_PURGE_DECOMMITS").is_none() {
        // SAFETY: sets an option of the linked mimalloc by its index.
        unsafe { libmimalloc_sys::mi_option_set(PURGE_DECOMMITS, 0) };
    }
    if std::env::var_os("MIMALLOC_PURGE_DELAY").is_none() {
        // SAFETY: as above.
        unsafe { libmimalloc_sys::mi_option_set(PURGE_DELAY, PURGE_DELAY_MS) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn option(index: c_int) -> c_long {
        // SAFETY: reads an option of the linked mimalloc by its index.
        unsafe { libmimalloc_sys::mi_option_get(index) }
    }

    /// The indices name the options meant: mimalloc's own defaults (a
    /// purge delay of 1,000 ms, purges that decommit) are found there
    /// before, and the settings after.
    #[test]
    fn the_settings_reach_mimallocs_purge_options() {
        assert!(std::env::var_os("MIMALLOC_PURGE_DELAY").is_none(), "run without MIMALLOC_PURGE_DELAY");
        assert_eq!(option(PURGE_DELAY), 1_000, "mimalloc 3's default purge delay");
        assert_eq!(option(PURGE_DECOMMITS), 1, "mimalloc 3 decommits on a purge by default");
        keep_freed_memory_mapped();
        assert_eq!(option(PURGE_DELAY), PURGE_DELAY_MS);
        assert_eq!(option(PURGE_DECOMMITS), 0);
    }
}

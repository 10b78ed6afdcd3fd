//! The module's interface to the page, in plain WebAssembly exports: the
//! page copies a UTF-8 request into memory from `fogblast_alloc`, calls
//! `fogblast_call`, and reads the answer's bytes at `fogblast_answer_ptr`.
//! The module imports one function, `env.fogblast_now_ms`, the page's clock.
#![allow(unsafe_code)]

use std::cell::RefCell;

thread_local! {
    static ANSWER: RefCell<String> = const { RefCell::new(String::new()) };
}

/// Reserves `len` bytes for a request and returns where they start.
#[no_mangle]
pub extern "C" fn fogblast_alloc(len: usize) -> *mut u8 {
    Box::into_raw(vec![0u8; len].into_boxed_slice()).cast()
}

/// Answers the request of `len` bytes at `ptr` (from [`fogblast_alloc`],
/// which this frees) and returns the answer's length in bytes.
///
/// # Safety
/// `ptr` must come from `fogblast_alloc(len)` and hold `len` written bytes.
#[no_mangle]
pub unsafe extern "C" fn fogblast_call(ptr: *mut u8, len: usize) -> usize {
    // SAFETY: the caller passes back a buffer of at least `len` bytes from
    // `fogblast_alloc(len)`, filled with the request.
    let bytes: Box<[u8]> = unsafe { Box::from_raw(std::ptr::slice_from_raw_parts_mut(ptr, len)) };
    let answer = match String::from_utf8(bytes.into_vec()) {
        Ok(request) => crate::handle(&request),
        Err(_) => r#"{"ok":false,"error":"the request is not UTF-8"}"#.to_owned(),
    };
    let len = answer.len();
    ANSWER.with(|slot| *slot.borrow_mut() = answer);
    len
}

/// Where the last answer's bytes start; valid until the next call.
#[no_mangle]
pub extern "C" fn fogblast_answer_ptr() -> *const u8 {
    ANSWER.with(|slot| slot.borrow().as_ptr())
}

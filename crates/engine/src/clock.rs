//! The search's clock. Native builds use the operating system's monotonic
//! clock; in a browser (`wasm32`) there is none in `std`, so the page hands
//! its own (`performance.now()`) to the module as the import
//! `env.fogblast_now_ms`.

#[cfg(not(target_arch = "wasm32"))]
pub use std::time::Instant;

#[cfg(target_arch = "wasm32")]
pub use browser::Instant;

#[cfg(target_arch = "wasm32")]
mod browser {
    use std::ops::Add;
    use std::time::Duration;

    #[link(wasm_import_module = "env")]
    extern "C" {
        /// Milliseconds from a fixed origin, never going back.
        fn fogblast_now_ms() -> f64;
    }

    /// A moment, in microseconds from the host clock's origin.
    #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
    pub struct Instant(u64);

    impl Instant {
        #[allow(unsafe_code)]
        pub fn now() -> Instant {
            // SAFETY: the import takes nothing and returns a number; the
            // module cannot be instantiated without it.
            let ms = unsafe { fogblast_now_ms() };
            Instant((ms.max(0.0) * 1000.0) as u64)
        }

        pub fn duration_since(&self, earlier: Instant) -> Duration {
            Duration::from_micros(self.0.saturating_sub(earlier.0))
        }

        pub fn elapsed(&self) -> Duration {
            Instant::now().duration_since(*self)
        }
    }

    impl Add<Duration> for Instant {
        type Output = Instant;

        fn add(self, duration: Duration) -> Instant {
            Instant(self.0.saturating_add(duration.as_micros() as u64))
        }
    }
}

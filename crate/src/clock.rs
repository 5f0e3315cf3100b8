//! Time in the browser: a monotonic elapsed clock from `performance.now()`, the wall clock from
//! `Date.now()` (used only to stand in for a missing `Date` header when the policy trusts it),
//! and timers (cleared when dropped) that cannot wrap.

use std::time::Duration;

use gloo_timers::callback::Timeout;
use wasm_bindgen::prelude::*;

use retry_budget_model::utc::UtcTime;

#[wasm_bindgen]
extern "C" {
    /// `globalThis.performance.now()`: present in a window, a worker and Node.
    #[wasm_bindgen(js_namespace = ["globalThis", "performance"], js_name = now)]
    fn performance_now() -> f64;

    /// `Date.now()`.
    #[wasm_bindgen(js_namespace = Date, js_name = now)]
    fn date_now() -> f64;

    /// `globalThis.performance.timeOrigin`: when this document or worker began, in Unix
    /// milliseconds; `performance.now()` counts from it.
    #[wasm_bindgen(thread_local_v2, js_namespace = ["globalThis", "performance"], js_name = timeOrigin)]
    static TIME_ORIGIN: JsValue;

}

/// Elapsed time since the action's first attempt started.
pub(crate) struct Clock {
    origin_ms: f64,
}

impl Clock {
    /// Starts counting now.
    pub(crate) fn start() -> Clock {
        Clock {
            origin_ms: performance_now(),
        }
    }

    /// Elapsed `at` on the clock that documents share ([`shared_now_ms`]).
    pub(crate) fn shared_ms(&self, at: Duration) -> f64 {
        time_origin() + self.origin_ms + at.as_secs_f64() * 1000.0
    }

    /// A time on the shared clock as elapsed time of this action (zero before its start).
    pub(crate) fn elapsed_at(&self, shared_ms: f64) -> Duration {
        let ms = shared_ms - time_origin() - self.origin_ms;
        of_millis(ms)
    }

    /// Elapsed time since the start; never negative.
    pub(crate) fn elapsed(&self) -> Duration {
        let ms = performance_now() - self.origin_ms;
        of_millis(ms)
    }

    /// Calls `callback` once at elapsed `at`, or a little earlier when `at` is further than
    /// one timer can reach. Timers take milliseconds as a 32-bit signed number and fire at once
    /// when it wraps (about 24.8 days), so the delay is clamped; the model answers an early
    /// wake-up with the rest of the wait. Dropping the timer clears it.
    pub(crate) fn call_at(&self, at: Duration, callback: impl FnOnce() + 'static) -> Timeout {
        let left = at.saturating_sub(self.elapsed());
        // Whole microseconds, rounded up to milliseconds: a timer must not be armed to fire
        // before the model's time. (In 64-bit arithmetic: 128-bit division costs the page.)
        let ms = left
            .as_secs()
            .saturating_mul(1000)
            .saturating_add(u64::from(left.subsec_micros().div_ceil(1000)));
        let ms = u32::try_from(ms).unwrap_or(u32::MAX).min(i32::MAX as u32);
        Timeout::new(ms, callback)
    }
}

/// `ms` milliseconds as a `Duration`, to the nearest nanosecond: zero for a negative `ms` or
/// NaN, and 584 years (2^64 ns) at most, since float-to-integer `as` saturates. (Cheaper for the
/// page than `Duration::try_from_secs_f64`, which also refuses what this saturates.)
pub(crate) fn of_millis(ms: f64) -> Duration {
    Duration::from_nanos((ms * 1_000_000.0 + 0.5) as u64)
}

/// Now, in milliseconds on a clock that the documents and workers of one browser share
/// (`performance.timeOrigin + performance.now()`), so that a block exchanged between tabs
/// means the same instant in both. It is monotonic: the browser anchors it to the Unix epoch
/// from the wall clock once (Firefox once per content process), and a later change of the
/// wall clock does not move it; processes anchored on either side of one differ by it.
pub(crate) fn shared_now_ms() -> f64 {
    time_origin() + performance_now()
}

fn time_origin() -> f64 {
    TIME_ORIGIN.with(|t| t.as_f64().unwrap_or(0.0))
}

/// The local wall clock.
pub(crate) fn wall_now() -> Option<UtcTime> {
    UtcTime::from_unix_millis(date_now())
}

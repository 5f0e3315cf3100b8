//! Small fleet runs whose figures were worked out by hand from the rules, not from the code:
//! a handful of widgets, a limiter of one or two requests, round trips of a fixed length
//! (`tail: 0`), a service that answers ten requests a second (100 ms each, in arrival order),
//! and every page arriving at 0. Each derivation is written beside its case. The native test
//! (`fleet/tests/hand_worked.rs`) checks the library against them, and the browser suite
//! (`crate/tests/fleet_web.rs`) checks `simulateFleet` in Chrome and Firefox.
//!
//! The rules used, with the model's default policy: a budget of 20 s, 3 attempts, a 4 s cap
//! reserved before every start, waits of at least 1 s, a fallback of 2 s × 2^(n-1) without
//! `Retry-After`; a wait is never shorter than the server's delay, and an attempt starts only
//! if it and its full cap fit in the budget; a block announced by a widget's response is
//! shared with its page (not for "ours no-share"); a response after the cap is a timeout, and
//! a timeout stops. ky: 2 retries, `Retry-After` honoured without limit, else 0.3 s × 2^(n-1),
//! a 10 s timeout that is not retried. Naive: resend at once, three times. Round trips are
//! split evenly, half to reach the service and half back; events at one instant run in the
//! order they were scheduled. Times below are seconds from the start.
//!
//! "ours+jitter" draws its spread at random, so its figures are given only where it never
//! waits.

/// One option by its JavaScript name (the command's flag, in camel case).
#[derive(Clone, Copy, Debug)]
pub enum Given {
    Number(&'static str, f64),
    Word(&'static str, &'static str),
}

/// What one policy must report.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Expect {
    pub requests: u64,
    pub refused: u64,
    pub peak_per_s: u64,
    pub with_data: u64,
    /// Time to data p50, p95, max (nearest rank), in milliseconds.
    pub to_data_ms: [u64; 3],
    pub longest_wait_ms: u64,
    pub most_per_action: u32,
    pub after_outcome: u64,
}

/// One hand-worked run.
#[derive(Clone, Copy, Debug)]
pub struct Case {
    pub name: &'static str,
    /// The options besides [`SHARED`].
    pub options: &'static [Given],
    /// The policies worked out, by column name.
    pub expect: &'static [(&'static str, Expect)],
}

use Given::{Number, Word};

/// Options every case shares: one page at 0, fixed round trips, ten answers a second.
pub const SHARED: [Given; 5] = [
    Number("pages", 1.0),
    Number("arriveOver", 0.0),
    Number("tail", 0.0),
    Number("serve", 10.0),
    Number("seed", 1.0),
];

/// The cases.
pub const CASES: [Case; 7] = [
    ONE_TOKEN,
    SLOW_NETWORK,
    NO_HEADER,
    DATE,
    AT_THE_CAP,
    REACHED_AT_THE_CAP,
    KY_TIMEOUT,
];

/// Three widgets against a window of 1 request per 10 s, `Retry-After` in seconds, round
/// trips of 100 ms.
///
/// All: widgets 0, 1, 2 send at 0 and reach the service at 0.05; it answers them at 0.05,
/// 0.15 and 0.25: widget 0 is admitted (data at 0.1), 1 and 2 refused with `Retry-After: 10`
/// (9.85 and 9.75 s to the window's end at 10, rounded up), received at 0.2 and 0.3.
///
/// ours: widget 1 waits 10 s, until 10.2, and announces a block until 10.2; widget 2, in
/// flight, learns it. At 0.3 widget 2 waits until 10.3 and announces 10.3, which moves widget
/// 1's start to 10.3 (rule 17). At 10.3 both send (2 first: its timer was set first); at 10.35
/// the service, idle, takes 2 (the new window: admitted, data at 10.4), then 1 at 10.45
/// (refused, `Retry-After: 10` for 9.55 s), received at 10.5: a wait to 20.5 plus the 4 s cap
/// does not fit the 20 s budget, so 1 stops at 10.5 without data. Requests 5 (1 + 2 + 2),
/// refused 3, peak 3 (the first second), data at 0.1 and 10.4, the longest wait 10.5.
///
/// ours no-share: widget 1 keeps its start at 10.2: admitted at 10.25, data at 10.3. Widget 2
/// sends at 10.3, is refused at 10.35 (`Retry-After: 10` for 9.65 s), received at 10.4: a wait
/// to 20.4 does not fit, it stops at 10.4. Data at 0.1 and 10.3.
///
/// ky: as no-share until 10.4, where ky retries a second time after 10 s: it sends at 20.4,
/// is admitted at 20.45 in the third window, data at 20.5. Requests 6, refused 3.
///
/// naive: widget 1's and 2's resends reach the service every 100 ms while it is still busy
/// with the one before (answered at 0.35, 0.45, ... 0.85), all refused in the first window;
/// each stops after its fourth refusal, received at 0.8 and 0.9. Requests 9, refused 8, all
/// in the first second.
const ONE_TOKEN: Case = Case {
    name: "three widgets, a window of one",
    options: &[
        Number("widgets", 3.0),
        Word("limiter", "window"),
        Number("limit", 1.0),
        Number("window", 10.0),
        Word("retryAfter", "seconds"),
        Number("latency", 100.0),
    ],
    expect: &[
        (
            "ours",
            Expect {
                requests: 5,
                refused: 3,
                peak_per_s: 3,
                with_data: 2,
                to_data_ms: [100, 10_400, 10_400],
                longest_wait_ms: 10_500,
                most_per_action: 2,
                after_outcome: 0,
            },
        ),
        (
            "ours no-share",
            Expect {
                requests: 5,
                refused: 3,
                peak_per_s: 3,
                with_data: 2,
                to_data_ms: [100, 10_300, 10_300],
                longest_wait_ms: 10_400,
                most_per_action: 2,
                after_outcome: 0,
            },
        ),
        (
            "ky defaults",
            Expect {
                requests: 6,
                refused: 3,
                peak_per_s: 3,
                with_data: 3,
                to_data_ms: [10_300, 20_500, 20_500],
                longest_wait_ms: 20_500,
                most_per_action: 3,
                after_outcome: 0,
            },
        ),
        (
            "naive x3",
            Expect {
                requests: 9,
                refused: 8,
                peak_per_s: 9,
                with_data: 1,
                to_data_ms: [100, 100, 100],
                longest_wait_ms: 900,
                most_per_action: 4,
                after_outcome: 0,
            },
        ),
    ],
};

/// Two widgets, a bucket with room for both, round trips of 9 s (4.5 s each way).
///
/// Both send at 0 and reach the service at 4.5, which answers them at 4.5 and 4.6, both
/// admitted. ours (all three columns, none of which ever waits): the 4 s cap comes first,
/// the attempt times out and the action stops at 4, without data; the requests still reach
/// the service and are answered after their users were told. ky's 10 s timeout and the naive
/// client's none let the answers arrive, at 9.0 and 9.1.
const SLOW_NETWORK: Case = Case {
    name: "a network slower than the cap",
    options: &[
        Number("widgets", 2.0),
        Word("limiter", "bucket"),
        Number("rate", 1.0),
        Number("burst", 10.0),
        Word("retryAfter", "seconds"),
        Number("latency", 9000.0),
    ],
    expect: &[
        ("ours", TIMED_OUT),
        ("ours+jitter", TIMED_OUT),
        ("ours no-share", TIMED_OUT),
        ("ky defaults", ANSWERED_LATE),
        ("naive x3", ANSWERED_LATE),
    ],
};

/// [`SLOW_NETWORK`] for our clients: both timed out at 4, both answered after.
const TIMED_OUT: Expect = Expect {
    requests: 2,
    refused: 0,
    peak_per_s: 2,
    with_data: 0,
    to_data_ms: [0, 0, 0],
    longest_wait_ms: 4000,
    most_per_action: 1,
    after_outcome: 2,
};

/// [`SLOW_NETWORK`] for ky and the naive client: data at 9.0 and 9.1.
const ANSWERED_LATE: Expect = Expect {
    requests: 2,
    refused: 0,
    peak_per_s: 2,
    with_data: 2,
    to_data_ms: [9000, 9100, 9100],
    longest_wait_ms: 9100,
    most_per_action: 1,
    after_outcome: 0,
};

/// Two widgets against a window of 1 request per 3 s, no `Retry-After`, round trips of 100 ms.
///
/// Both send at 0; the service answers widget 0 at 0.05 (admitted, data at 0.1) and widget 1
/// at 0.15 (refused, no header), received at 0.2.
///
/// ours (and no-share: nothing is announced without a header): the fallback after attempt 1
/// is 2 s: attempt 2 at 2.2, answered at 2.25, still in the first window: refused, received
/// at 2.3; the fallback after attempt 2 is 4 s: attempt 3 at 6.3, answered at 6.35 in the
/// third window: admitted, data at 6.4. Requests 4, refused 2; at most 2 in one second.
///
/// ky: backs off 0.3 s, then 0.6 s: sends at 0.5 and 1.2, both answered in the first window
/// (at 0.55 and 1.25) and refused; after its second retry it stops, at 1.3, without data.
/// Requests 4, refused 3, 3 of them in the first second.
///
/// naive: resends at 0.2, 0.3 and 0.4, answered at 0.25, 0.35, 0.45 (each waits for the one
/// before), all refused; it stops at 0.5. Requests 5, refused 4, all in the first second.
const NO_HEADER: Case = Case {
    name: "no Retry-After: the fallbacks",
    options: &[
        Number("widgets", 2.0),
        Word("limiter", "window"),
        Number("limit", 1.0),
        Number("window", 3.0),
        Word("retryAfter", "none"),
        Number("latency", 100.0),
    ],
    expect: &[
        ("ours", FALLBACKS),
        ("ours no-share", FALLBACKS),
        (
            "ky defaults",
            Expect {
                requests: 4,
                refused: 3,
                peak_per_s: 3,
                with_data: 1,
                to_data_ms: [100, 100, 100],
                longest_wait_ms: 1300,
                most_per_action: 3,
                after_outcome: 0,
            },
        ),
        (
            "naive x3",
            Expect {
                requests: 5,
                refused: 4,
                peak_per_s: 5,
                with_data: 1,
                to_data_ms: [100, 100, 100],
                longest_wait_ms: 500,
                most_per_action: 4,
                after_outcome: 0,
            },
        ),
    ],
};

/// [`NO_HEADER`] for ours: data at 0.1 and 6.4.
const FALLBACKS: Expect = Expect {
    requests: 4,
    refused: 2,
    peak_per_s: 2,
    with_data: 2,
    to_data_ms: [100, 6400, 6400],
    longest_wait_ms: 6400,
    most_per_action: 3,
    after_outcome: 0,
};

/// Two widgets against a window of 1 request per 10 s, `Retry-After` as an HTTP-date, round
/// trips of 100 ms.
///
/// Both send at 0 and reach the service at 0.05: it admits widget 0 (data at 0.1) and, at 0.15,
/// refuses widget 1 with the date of second 10 of its clock, the window's end, and a `Date` of
/// second 0, the second it answers in. The service's time zero is the run's.
///
/// ours (and no-share: widget 0 is done before anything is announced): the date is read
/// against the response's `Date` (rule 7): 10 s, over the 1 s floor, from the receipt at 0.2,
/// until 10.2; attempt 2 and its cap fit the budget (10.2 + 4 <= 20). It reaches the service
/// at 10.25, in the second window: admitted, data at 10.3. Requests 3, refused 1, 2 in the
/// first second; data at 0.1 and 10.3.
///
/// ky: `Date.parse(value) - Date.now()`, the local clock at the receipt, 0.2 on the service's:
/// 9.8 s, until 10.0; admitted at 10.05, data at 10.1.
///
/// naive: resends at 0.2, 0.3 and 0.4, each answered 50 ms later in the first window, all
/// refused; it stops at 0.5. Requests 5, refused 4, all in the first second.
///
/// ours+jitter waits 10 s plus its draw of the 1 s spread: its figures are checked apart.
pub const DATE: Case = Case {
    name: "a window of one, Retry-After as a date",
    options: &[
        Number("widgets", 2.0),
        Word("limiter", "window"),
        Number("limit", 1.0),
        Number("window", 10.0),
        Word("retryAfter", "date"),
        Number("latency", 100.0),
    ],
    expect: &[
        ("ours", DATE_READ_OURS),
        ("ours no-share", DATE_READ_OURS),
        ("ky defaults", DATE_READ_KY),
        (
            "naive x3",
            Expect {
                requests: 5,
                refused: 4,
                peak_per_s: 5,
                with_data: 1,
                to_data_ms: [100, 100, 100],
                longest_wait_ms: 500,
                most_per_action: 4,
                after_outcome: 0,
            },
        ),
    ],
};

/// [`DATE`] for ours: data at 0.1 and 10.3.
const DATE_READ_OURS: Expect = Expect {
    requests: 3,
    refused: 1,
    peak_per_s: 2,
    with_data: 2,
    to_data_ms: [100, 10_300, 10_300],
    longest_wait_ms: 10_300,
    most_per_action: 2,
    after_outcome: 0,
};

/// [`DATE`] for ky: data at 0.1 and 10.1.
const DATE_READ_KY: Expect = Expect {
    to_data_ms: [100, 10_100, 10_100],
    longest_wait_ms: 10_100,
    ..DATE_READ_OURS
};

/// One widget, a bucket with room, round trips of 4 s (2 s each way): the answer comes back
/// at 4.0, the very end of ours' 4 s cap. An attempt may run *up to* its cap, so the answer
/// is in time: every policy has its data at 4.0, from one request.
const AT_THE_CAP: Case = Case {
    name: "an answer at the end of the cap",
    options: &[
        Number("widgets", 1.0),
        Word("limiter", "bucket"),
        Number("rate", 1.0),
        Number("burst", 10.0),
        Word("retryAfter", "seconds"),
        Number("latency", 4000.0),
    ],
    expect: &[
        ("ours", DATA_AT_4),
        ("ours+jitter", DATA_AT_4),
        ("ours no-share", DATA_AT_4),
        ("ky defaults", DATA_AT_4),
        ("naive x3", DATA_AT_4),
    ],
};

/// [`AT_THE_CAP`]: data at 4.0.
const DATA_AT_4: Expect = Expect {
    requests: 1,
    refused: 0,
    peak_per_s: 1,
    with_data: 1,
    to_data_ms: [4000, 4000, 4000],
    longest_wait_ms: 4000,
    most_per_action: 1,
    after_outcome: 0,
};

/// One widget, round trips of 8 s (4 s each way): the request reaches the service at 4.0, as
/// ours' cap ends. The service answers it then, and then the cap stops the action without
/// data: the answer came as the user was told, not after it. ky (a 10 s timeout) and the
/// naive client get their data at 8.0.
const REACHED_AT_THE_CAP: Case = Case {
    name: "a request that reaches the service as the cap ends",
    options: &[
        Number("widgets", 1.0),
        Word("limiter", "bucket"),
        Number("rate", 1.0),
        Number("burst", 10.0),
        Word("retryAfter", "seconds"),
        Number("latency", 8000.0),
    ],
    expect: &[
        ("ours", CAPPED_AS_ANSWERED),
        ("ours+jitter", CAPPED_AS_ANSWERED),
        ("ours no-share", CAPPED_AS_ANSWERED),
        ("ky defaults", DATA_AT_8),
        ("naive x3", DATA_AT_8),
    ],
};

/// [`REACHED_AT_THE_CAP`] for ours: stopped at 4.0, answered at 4.0.
const CAPPED_AS_ANSWERED: Expect = Expect {
    requests: 1,
    refused: 0,
    peak_per_s: 1,
    with_data: 0,
    to_data_ms: [0, 0, 0],
    longest_wait_ms: 4000,
    most_per_action: 1,
    after_outcome: 0,
};

/// [`REACHED_AT_THE_CAP`] for ky and the naive client: data at 8.0.
const DATA_AT_8: Expect = Expect {
    requests: 1,
    refused: 0,
    peak_per_s: 1,
    with_data: 1,
    to_data_ms: [8000, 8000, 8000],
    longest_wait_ms: 8000,
    most_per_action: 1,
    after_outcome: 0,
};

/// Two widgets, a bucket with room, round trips of 10 s (5 s each way), the longest the
/// command takes. Both reach the service at 5.0, which admits them at 5.0 and 5.1; the
/// answers come back at 10.0 and 10.1.
///
/// ours (all three columns): both caps end at 4.0, without data, before the service answers
/// either: as [`SLOW_NETWORK`].
///
/// ky: its 10 s timeout ends at 10.0, when widget 0's answer arrives (in time, as at a cap):
/// data at 10.0; widget 1's comes at 10.1, after its timeout, which ky does not retry: it
/// stops at 10.0 without data. Both were answered before then.
///
/// naive (no timeout): data at 10.0 and 10.1.
const KY_TIMEOUT: Case = Case {
    name: "a network as slow as ky's timeout",
    options: &[
        Number("widgets", 2.0),
        Word("limiter", "bucket"),
        Number("rate", 1.0),
        Number("burst", 10.0),
        Word("retryAfter", "seconds"),
        Number("latency", 10_000.0),
    ],
    expect: &[
        ("ours", TIMED_OUT),
        ("ours+jitter", TIMED_OUT),
        ("ours no-share", TIMED_OUT),
        (
            "ky defaults",
            Expect {
                requests: 2,
                refused: 0,
                peak_per_s: 2,
                with_data: 1,
                to_data_ms: [10_000, 10_000, 10_000],
                longest_wait_ms: 10_000,
                most_per_action: 1,
                after_outcome: 0,
            },
        ),
        (
            "naive x3",
            Expect {
                requests: 2,
                refused: 0,
                peak_per_s: 2,
                with_data: 2,
                to_data_ms: [10_000, 10_100, 10_100],
                longest_wait_ms: 10_100,
                most_per_action: 1,
                after_outcome: 0,
            },
        ),
    ],
};

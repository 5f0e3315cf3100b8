//! The rate-limited service: a token bucket or a fixed window, how it writes `Retry-After`,
//! and how fast it can answer at all.
//!
//! Answering takes the service time whatever the answer: a 429 is cheap, but not free. It
//! answers at most `serve` requests per second, one after another in arrival order; a request
//! that arrives while it is busy waits its turn. So a flood of requests slows every answer,
//! the refusals included, and a request can still be waiting when its client has given up.

use retry_budget_model::utc::UtcTime;

/// Nanoseconds per second.
pub const NS: u64 = 1_000_000_000;

/// The service clock at simulated time zero (Mon, 01 Jan 2024 12:00:00 GMT), in Unix seconds.
pub const EPOCH_UNIX_S: i64 = 1_704_110_400;

/// How the service writes `Retry-After` on a 429.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum RetryAfterMode {
    /// Delay-seconds.
    Seconds,
    /// An IMF-fixdate on the service's clock, in whole seconds.
    Date,
    /// No header.
    None,
}

/// The limiter's shape and parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Limiter {
    /// Tokens refill at `rate` per second up to `burst`; the bucket starts full.
    Bucket { rate: f64, burst: f64 },
    /// At most `limit` requests per window of `window_s` seconds, windows aligned to time zero.
    Window { limit: u32, window_s: u64 },
}

/// One service's running state: its limiter and its queue.
#[derive(Clone, Debug)]
pub struct Service {
    limiter: Limiter,
    mode: RetryAfterMode,
    tokens: f64,
    last: u64,
    window: u64,
    count: u32,
    /// Nanoseconds each answer takes the service.
    spacing: u64,
    /// When the service is free to answer the next request.
    free_at: u64,
}

/// The service's answer: a status, and the `Date` and `Retry-After` it carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Answer {
    /// 200 or 429.
    pub status: u16,
    /// Its `Date` header: the second of the service's clock in which it answered, counted from
    /// the service's time zero ([`EPOCH_UNIX_S`]). An HTTP date has no finer part, so a client
    /// that reads a `Retry-After` date against it (ours, by rule 7) reads a delay up to a second
    /// longer than the date is from the answer, and counts it from the receipt, after the
    /// answer's trip back.
    pub date: u32,
    /// The header, kept as what it says rather than as text: a run answers millions of 429s,
    /// and only the client that receives one needs it written out.
    pub retry_after: Header,
}

impl Answer {
    /// No answer yet.
    pub const NONE: Answer = Answer {
        status: 0,
        date: 0,
        retry_after: Header::Absent,
    };
}

/// A `Retry-After` header as the service means it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Header {
    /// No header.
    Absent,
    /// Delay-seconds.
    Seconds(u32),
    /// An IMF-fixdate this many seconds after the service's time zero ([`EPOCH_UNIX_S`]).
    Date(u32),
}

impl Header {
    /// Writes the header's value into `out` (cleared first); `false` when there is none.
    pub fn write(self, out: &mut String) -> bool {
        out.clear();
        match self {
            Header::Absent => return false,
            Header::Seconds(s) => push_digits(out, u64::from(s), 1),
            Header::Date(s) => push_imf_fixdate(out, EPOCH_UNIX_S + i64::from(s)),
        }
        true
    }
}

impl Service {
    /// A fresh service that answers at most `serve` requests per second (at least 1): a full
    /// bucket, or an empty first window, and nobody waiting.
    pub fn new(limiter: Limiter, mode: RetryAfterMode, serve: u32) -> Self {
        let tokens = match limiter {
            Limiter::Bucket { burst, .. } => burst,
            Limiter::Window { .. } => 0.0,
        };
        Service {
            limiter,
            mode,
            tokens,
            last: 0,
            window: 0,
            count: 0,
            // Rounded up, so that the service never answers more than `serve` a second.
            spacing: NS.div_ceil(u64::from(serve.max(1))),
            free_at: 0,
        }
    }

    /// Takes a request that reached the service at simulated nanosecond `arrive` (non-decreasing
    /// from one call to the next): when its turn comes, and the limiter's answer then.
    pub fn handle(&mut self, arrive: u64) -> (u64, Answer) {
        let at = arrive.max(self.free_at);
        self.free_at = at.saturating_add(self.spacing);
        (at, self.answer(at))
    }

    /// The limiter's answer to a request at `now`.
    fn answer(&mut self, now: u64) -> Answer {
        let date = u32::try_from(now / NS).unwrap_or(u32::MAX);
        match self.admit(now) {
            None => Answer {
                status: 200,
                date,
                retry_after: Header::Absent,
            },
            Some(free_at) => Answer {
                status: 429,
                date,
                retry_after: self.header(now, free_at),
            },
        }
    }

    /// Takes capacity for a request at `now`; when there is none, the nanosecond it frees up.
    fn admit(&mut self, now: u64) -> Option<u64> {
        match self.limiter {
            Limiter::Bucket { rate, burst } => {
                let dt = now.saturating_sub(self.last) as f64 / NS as f64;
                self.tokens = (self.tokens + dt * rate).min(burst);
                self.last = now.max(self.last);
                if self.tokens >= 1.0 {
                    self.tokens -= 1.0;
                    return None;
                }
                let wait_ns = ((1.0 - self.tokens) / rate * NS as f64).ceil() as u64;
                Some(now.saturating_add(wait_ns.max(1)))
            }
            Limiter::Window { limit, window_s } => {
                let w = window_s * NS;
                let index = now / w;
                if index != self.window {
                    self.window = index;
                    self.count = 0;
                }
                if self.count < limit {
                    self.count += 1;
                    return None;
                }
                Some((index + 1) * w)
            }
        }
    }

    /// The `Retry-After` for a 429 at `now` whose capacity frees at `free_at`: the seconds to
    /// it rounded up, or the date of the second it falls in, rounded up.
    fn header(&self, now: u64, free_at: u64) -> Header {
        let whole = |ns: u64| u32::try_from(ns.div_ceil(NS)).unwrap_or(u32::MAX);
        match self.mode {
            RetryAfterMode::Seconds => Header::Seconds(whole(free_at - now)),
            RetryAfterMode::Date => Header::Date(whole(free_at)),
            RetryAfterMode::None => Header::Absent,
        }
    }
}

/// Appends Unix seconds as an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`); years 0 to 9999.
fn push_imf_fixdate(out: &mut String, unix: i64) {
    const DAYS: [&str; 7] = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let (days, rem) = (unix.div_euclid(86_400), unix.rem_euclid(86_400));
    let (y, m, d) = UtcTime::from_unix_secs(unix).civil_date();
    let whole = |n: i64| n.clamp(0, 9999) as u64;
    out.push_str(DAYS[days.rem_euclid(7) as usize]);
    out.push_str(", ");
    push_digits(out, u64::from(d), 2);
    out.push(' ');
    out.push_str(MONTHS[m.clamp(1, 12) as usize - 1]);
    out.push(' ');
    push_digits(out, whole(y), 4);
    for (sep, n) in [(' ', rem / 3600), (':', rem / 60 % 60), (':', rem % 60)] {
        out.push(sep);
        push_digits(out, whole(n), 2);
    }
    out.push_str(" GMT");
}

/// Appends `n` in decimal, zero-padded to at least `width` digits (at most 20), without the
/// formatting machinery: a run writes a header for each of millions of refusals.
pub(crate) fn push_digits(out: &mut String, mut n: u64, width: usize) {
    let mut digits = [b'0'; 20];
    let mut start = digits.len();
    while n > 0 || start == digits.len() {
        start -= 1;
        digits[start] = b'0' + (n % 10) as u8;
        n /= 10;
    }
    let start = start.min(digits.len().saturating_sub(width));
    out.extend(digits[start..].iter().map(|&d| char::from(d)));
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A service that answers a billion requests per second: one nanosecond each.
    const FAST: u32 = 1_000_000_000;

    fn ms(n: u64) -> u64 {
        n * 1_000_000
    }

    /// The answer's status and its header as the client reads it.
    fn read((_, a): (u64, Answer)) -> (u16, Option<String>) {
        let mut out = String::new();
        (a.status, a.retry_after.write(&mut out).then_some(out))
    }

    fn imf_fixdate(unix: i64) -> String {
        let mut out = String::new();
        push_imf_fixdate(&mut out, unix);
        out
    }

    fn some(text: &str) -> Option<String> {
        Some(text.into())
    }

    #[test]
    fn the_bucket_says_the_seconds_until_the_next_token_rounded_up() {
        let bucket = Limiter::Bucket {
            rate: 0.4,
            burst: 2.0,
        };
        let mut s = Service::new(bucket, RetryAfterMode::Seconds, FAST);
        assert_eq!(read(s.handle(0)), (200, None));
        assert_eq!(read(s.handle(0)), (200, None));
        // Answered at 2 ns: 2.5 s to the next token, said as 3.
        assert_eq!(read(s.handle(0)), (429, some("3")));
        // Half a token by 1.25 s: the next one is 1.25 s away, said as 2.
        assert_eq!(read(s.handle(ms(1250))), (429, some("2")));
        assert_eq!(read(s.handle(ms(3000))).0, 200);
    }

    /// A bucket of one (the smallest the command takes) admits its one token, then refills
    /// it at its rate and never holds more than its burst: five idle seconds buy one request,
    /// not five.
    #[test]
    fn a_bucket_of_one_admits_one_request_a_token_and_keeps_no_more_than_one() {
        let bucket = Limiter::Bucket {
            rate: 1.0,
            burst: 1.0,
        };
        let mut s = Service::new(bucket, RetryAfterMode::Seconds, FAST);
        assert_eq!(read(s.handle(0)), (200, None));
        assert_eq!(read(s.handle(ms(5000))), (200, None));
        // Answered 1 ns later: the next token is a second away.
        assert_eq!(read(s.handle(ms(5000))), (429, some("1")));
    }

    #[test]
    fn the_window_says_the_seconds_to_its_end() {
        let window = Limiter::Window {
            limit: 2,
            window_s: 10,
        };
        let mut s = Service::new(window, RetryAfterMode::Seconds, FAST);
        assert_eq!(read(s.handle(ms(100))).0, 200);
        assert_eq!(read(s.handle(ms(200))).0, 200);
        assert_eq!(read(s.handle(ms(3500))), (429, some("7")));
        // Three seconds and a nanosecond before the end: rounded up, never down.
        assert_eq!(read(s.handle(6_999_999_999)), (429, some("4")));
        assert_eq!(read(s.handle(ms(9999))), (429, some("1")));
        assert_eq!(read(s.handle(ms(10_000))).0, 200);
    }

    /// `serve` is a most: at 3 a second, a burst's fourth answer falls after the first second
    /// (a spacing rounded down, 333,333,333 ns, would answer it at 999,999,999 ns).
    #[test]
    fn the_service_answers_at_most_serve_requests_a_second() {
        let bucket = Limiter::Bucket {
            rate: 1000.0,
            burst: 1000.0,
        };
        let mut s = Service::new(bucket, RetryAfterMode::Seconds, 3);
        let answered: Vec<u64> = (0..4).map(|_| s.handle(0).0).collect();
        assert_eq!(answered[3], 1_000_000_002);
        assert!(answered.iter().filter(|&&at| at < NS).count() <= 3);
    }

    #[test]
    fn requests_that_arrive_while_it_is_busy_wait_their_turn() {
        let window = Limiter::Window {
            limit: 2,
            window_s: 1,
        };
        // Ten answers a second: 100 ms each.
        let mut s = Service::new(window, RetryAfterMode::Seconds, 10);
        let turns: Vec<(u64, u16)> = [0, 0, 0, ms(50), ms(900), ms(1000)]
            .into_iter()
            .map(|at| {
                let (turn, answer) = s.handle(at);
                (turn, answer.status)
            })
            .collect();
        let expected = [
            (0, 200),
            (ms(100), 200),
            (ms(200), 429),
            (ms(300), 429),
            // Free again before these arrive: no wait, and the second is in a new window.
            (ms(900), 429),
            (ms(1000), 200),
        ];
        assert_eq!(turns, expected);
    }

    #[test]
    fn a_date_names_when_capacity_frees_on_the_service_clock() {
        let window = Limiter::Window {
            limit: 1,
            window_s: 10,
        };
        let mut s = Service::new(window, RetryAfterMode::Date, FAST);
        s.handle(0);
        assert_eq!(
            read(s.handle(ms(3500))),
            (429, some("Mon, 01 Jan 2024 12:00:10 GMT"))
        );
        let refuse_all = Limiter::Window {
            limit: 0,
            window_s: 1,
        };
        let mut none = Service::new(refuse_all, RetryAfterMode::None, FAST);
        assert_eq!(read(none.handle(0)), (429, None));
    }

    #[test]
    fn dates_are_written_for_any_year_an_http_date_can_hold() {
        assert_eq!(imf_fixdate(784_111_777), "Sun, 06 Nov 1994 08:49:37 GMT");
        assert_eq!(
            imf_fixdate(-62_135_596_800),
            "Mon, 01 Jan 0001 00:00:00 GMT"
        );
        assert_eq!(
            imf_fixdate(253_402_300_799),
            "Fri, 31 Dec 9999 23:59:59 GMT"
        );
    }

    #[test]
    fn every_date_it_writes_the_model_reads_back() {
        use retry_budget_model::http_date::HttpDate;
        // Years 1 to 9999 in steps of 31 days and a few hours: every weekday, month and time of day.
        let (first, last) = (-62_135_596_800_i64, 253_402_300_799_i64);
        let mut unix = first;
        while unix <= last {
            let text = imf_fixdate(unix);
            let read = HttpDate::parse(&text)
                .and_then(|d| d.resolve(UtcTime::UNIX_EPOCH))
                .map(UtcTime::unix_secs);
            assert_eq!(read, Some(unix), "{text}");
            unix += 2_713_597;
        }
    }
}

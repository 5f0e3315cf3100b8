//! The options of a fleet run, as the command's flags and the page's `simulateFleet(options)`
//! both name them, with their defaults (the default burst scenario) and their ranges. The
//! ranges keep a run finite and its figures meaningful: at most a million widgets, a limiter
//! that admits something, and no time beyond an hour.
//!
//! With the `cli` feature, [`Options`] is also the command's flags (clap): each field's doc
//! comment is its `--help` line.

use crate::network::Network;
use crate::service::{Limiter, RetryAfterMode};
use crate::sim::Scenario;

/// One option, with its flag and its key in `simulateFleet`'s options object.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Opt {
    Pages,
    Widgets,
    ArriveOver,
    Limiter,
    Rate,
    Burst,
    Limit,
    Window,
    RetryAfter,
    Latency,
    Tail,
    Serve,
    Seed,
}

impl Opt {
    /// Every option, in the order the command's usage lists them.
    pub const ALL: [Opt; 13] = [
        Opt::Pages,
        Opt::Widgets,
        Opt::ArriveOver,
        Opt::Limiter,
        Opt::Rate,
        Opt::Burst,
        Opt::Limit,
        Opt::Window,
        Opt::RetryAfter,
        Opt::Latency,
        Opt::Tail,
        Opt::Serve,
        Opt::Seed,
    ];

    /// The key in `simulateFleet`'s options: `arriveOver`.
    pub fn key(self) -> &'static str {
        match self {
            Opt::Pages => "pages",
            Opt::Widgets => "widgets",
            Opt::ArriveOver => "arriveOver",
            Opt::Limiter => "limiter",
            Opt::Rate => "rate",
            Opt::Burst => "burst",
            Opt::Limit => "limit",
            Opt::Window => "window",
            Opt::RetryAfter => "retryAfter",
            Opt::Latency => "latency",
            Opt::Tail => "tail",
            Opt::Serve => "serve",
            Opt::Seed => "seed",
        }
    }

    /// The command's flag: `--arrive-over`.
    pub fn flag(self) -> &'static str {
        match self {
            Opt::Pages => "--pages",
            Opt::Widgets => "--widgets",
            Opt::ArriveOver => "--arrive-over",
            Opt::Limiter => "--limiter",
            Opt::Rate => "--rate",
            Opt::Burst => "--burst",
            Opt::Limit => "--limit",
            Opt::Window => "--window",
            Opt::RetryAfter => "--retry-after",
            Opt::Latency => "--latency",
            Opt::Tail => "--tail",
            Opt::Serve => "--serve",
            Opt::Seed => "--seed",
        }
    }

    /// Whether the option is a word (`bucket`, `date`) rather than a number.
    pub fn is_word(self) -> bool {
        matches!(self, Opt::Limiter | Opt::RetryAfter)
    }
}

/// A rejected option: which one, and what it must be ("a whole number from 1 to 100").
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OptionError {
    pub option: Opt,
    pub message: String,
}

impl OptionError {
    fn new(option: Opt, message: &str) -> Self {
        OptionError {
            option,
            message: message.into(),
        }
    }
}

/// The most widgets (pages × widgets) one run may hold.
pub const MAX_ACTIONS: u64 = 1_000_000;

/// The largest seed, 2^53 - 1: the largest whole number JavaScript holds exactly.
pub const MAX_SEED: u64 = (1 << 53) - 1;

/// The service's limiter, by its shape.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "cli", derive(clap::ValueEnum))]
pub enum LimiterKind {
    /// A token bucket: `rate` and `burst`.
    Bucket,
    /// A fixed window: `limit` per `window` seconds.
    Window,
}

/// The options as given, unchecked: [`Options::scenario`] checks them.
#[derive(Clone, Copy, Debug, PartialEq)]
#[cfg_attr(feature = "cli", derive(clap::Args))]
pub struct Options {
    /// Pages arriving, 1 to 1,000,000
    #[cfg_attr(feature = "cli", arg(long, allow_negative_numbers = true, default_value_t = Options::DEFAULT.pages))]
    pub pages: u64,
    /// Widgets per page (one action each), 1 to 100; pages × widgets at most 1,000,000
    #[cfg_attr(feature = "cli", arg(long, allow_negative_numbers = true, default_value_t = Options::DEFAULT.widgets))]
    pub widgets: u64,
    /// Seconds over which the pages arrive, uniformly, 0 to 3600; 0 for all at once
    #[cfg_attr(feature = "cli", arg(long = "arrive-over", value_name = "SECONDS", allow_negative_numbers = true, default_value_t = Options::DEFAULT.arrive_over_s))]
    pub arrive_over_s: f64,
    /// The service's limiter
    #[cfg_attr(feature = "cli", arg(long, value_enum, default_value_t = Options::DEFAULT.limiter))]
    pub limiter: LimiterKind,
    /// Bucket: tokens per second, 0.001 to 1e9
    #[cfg_attr(feature = "cli", arg(long, allow_negative_numbers = true, default_value_t = Options::DEFAULT.rate))]
    pub rate: f64,
    /// Bucket: its size (it starts full), 1 to 1e9
    #[cfg_attr(feature = "cli", arg(long, allow_negative_numbers = true, default_value_t = Options::DEFAULT.burst))]
    pub burst: f64,
    /// Window: requests per window, 1 to 1e9
    #[cfg_attr(feature = "cli", arg(long, allow_negative_numbers = true, default_value_t = Options::DEFAULT.limit))]
    pub limit: u64,
    /// Window: its length in whole seconds, 1 to 3600
    #[cfg_attr(feature = "cli", arg(long = "window", value_name = "SECONDS", allow_negative_numbers = true, default_value_t = Options::DEFAULT.window_s))]
    pub window_s: u64,
    /// How a 429 says when to come back
    #[cfg_attr(feature = "cli", arg(long = "retry-after", value_enum, default_value_t = Options::DEFAULT.retry_after))]
    pub retry_after: RetryAfterMode,
    /// The shortest network round trip in milliseconds, 1 to 10000; most are close to it
    #[cfg_attr(feature = "cli", arg(long = "latency", value_name = "MS", allow_negative_numbers = true, default_value_t = Options::DEFAULT.latency_ms))]
    pub latency_ms: u64,
    /// The weight of the round trips' slow tail, 0 to 100: one in 1 + x takes longer than latency × (1 + tail × x); 0 for none
    #[cfg_attr(feature = "cli", arg(long, allow_negative_numbers = true, default_value_t = Options::DEFAULT.tail))]
    pub tail: f64,
    /// The most requests the service answers per second, 429s included, 1 to 1e9; more wait their turn
    #[cfg_attr(feature = "cli", arg(long, allow_negative_numbers = true, default_value_t = Options::DEFAULT.serve))]
    pub serve: u64,
    /// The seed, 0 to 2^53 - 1: the same seed gives the same figures
    #[cfg_attr(feature = "cli", arg(long, allow_negative_numbers = true, default_value_t = Options::DEFAULT.seed))]
    pub seed: u64,
}

impl Default for Options {
    fn default() -> Self {
        Options::DEFAULT
    }
}

impl Options {
    /// The default burst scenario: 10,000 pages of 3 widgets at once against a bucket of rate
    /// 500 and burst 1,000, `Retry-After` in seconds, round trips of 100 ms with a tail of
    /// 0.1, and a service that answers at most 100,000 requests a second.
    pub const DEFAULT: Options = Options {
        pages: 10_000,
        widgets: 3,
        arrive_over_s: 0.0,
        limiter: LimiterKind::Bucket,
        rate: 500.0,
        burst: 1000.0,
        limit: 1000,
        window_s: 1,
        retry_after: RetryAfterMode::Seconds,
        latency_ms: 100,
        tail: 0.1,
        serve: 100_000,
        seed: 1,
    };

    /// Sets a word option (`limiter`, `retryAfter`) from its text.
    pub fn set_word(&mut self, opt: Opt, word: &str) -> Result<(), OptionError> {
        match (opt, word) {
            (Opt::Limiter, "bucket") => self.limiter = LimiterKind::Bucket,
            (Opt::Limiter, "window") => self.limiter = LimiterKind::Window,
            (Opt::Limiter, _) => return Err(OptionError::new(opt, "must be bucket or window")),
            (Opt::RetryAfter, "seconds") => self.retry_after = RetryAfterMode::Seconds,
            (Opt::RetryAfter, "date") => self.retry_after = RetryAfterMode::Date,
            (Opt::RetryAfter, "none") => self.retry_after = RetryAfterMode::None,
            (Opt::RetryAfter, _) => {
                return Err(OptionError::new(opt, "must be seconds, date or none"))
            }
            _ => return Err(OptionError::new(opt, "must be a number, not a word")),
        }
        Ok(())
    }

    /// Sets a number option; a whole-number option refuses a fraction. The ranges are checked
    /// by [`Options::scenario`].
    pub fn set_number(&mut self, opt: Opt, value: f64) -> Result<(), OptionError> {
        match opt {
            Opt::ArriveOver => self.arrive_over_s = value,
            Opt::Rate => self.rate = value,
            Opt::Burst => self.burst = value,
            Opt::Tail => self.tail = value,
            Opt::Pages => self.pages = whole(opt, value)?,
            Opt::Widgets => self.widgets = whole(opt, value)?,
            Opt::Limit => self.limit = whole(opt, value)?,
            Opt::Window => self.window_s = whole(opt, value)?,
            Opt::Latency => self.latency_ms = whole(opt, value)?,
            Opt::Serve => self.serve = whole(opt, value)?,
            Opt::Seed => self.seed = whole(opt, value)?,
            // The error that lists the words.
            Opt::Limiter | Opt::RetryAfter => return self.set_word(opt, ""),
        }
        Ok(())
    }

    /// The scenario these options describe, or the first option out of its range.
    pub fn scenario(&self) -> Result<Scenario, OptionError> {
        let fail = |opt, message: &str| Err(OptionError::new(opt, message));
        if !(1..=MAX_ACTIONS).contains(&self.pages) {
            return fail(Opt::Pages, "must be a whole number from 1 to 1000000");
        }
        if !(1..=100).contains(&self.widgets) {
            return fail(Opt::Widgets, "must be a whole number from 1 to 100");
        }
        if self.pages * self.widgets > MAX_ACTIONS {
            return fail(Opt::Widgets, "times pages must be at most 1000000");
        }
        if !(0.0..=3600.0).contains(&self.arrive_over_s) {
            return fail(
                Opt::ArriveOver,
                "must be a number of seconds from 0 to 3600",
            );
        }
        if !(1..=1_000_000_000).contains(&self.serve) {
            return fail(Opt::Serve, "must be a whole number from 1 to 1000000000");
        }
        // The page reads a seed as a JavaScript number: beyond 2^53 - 1 two seeds would meet.
        if self.seed > MAX_SEED {
            return fail(
                Opt::Seed,
                "must be a whole number from 0 to 9007199254740991",
            );
        }
        Ok(Scenario {
            pages: self.pages as u32,
            widgets: self.widgets as u32,
            arrive_over_s: self.arrive_over_s,
            limiter: self.limiter()?,
            retry_after: self.retry_after,
            network: self.network()?,
            serve: self.serve as u32,
            seed: self.seed,
        })
    }

    /// The limiter, its parameters checked. The other shape's are not read, and so not checked:
    /// the page keeps them in inputs it hides while that shape is not chosen.
    fn limiter(&self) -> Result<Limiter, OptionError> {
        let fail = |opt, message: &str| Err(OptionError::new(opt, message));
        if self.limiter == LimiterKind::Window {
            if !(1..=1_000_000_000).contains(&self.limit) {
                return fail(Opt::Limit, "must be a whole number from 1 to 1000000000");
            }
            if !(1..=3600).contains(&self.window_s) {
                return fail(
                    Opt::Window,
                    "must be a whole number of seconds from 1 to 3600",
                );
            }
            return Ok(Limiter::Window {
                limit: self.limit as u32,
                window_s: self.window_s,
            });
        }
        if !(0.001..=1e9).contains(&self.rate) {
            return fail(Opt::Rate, "must be a number from 0.001 to 1000000000");
        }
        if !(1.0..=1e9).contains(&self.burst) {
            return fail(Opt::Burst, "must be a number from 1 to 1000000000");
        }
        Ok(Limiter::Bucket {
            rate: self.rate,
            burst: self.burst,
        })
    }

    /// The network, its parameters checked.
    fn network(&self) -> Result<Network, OptionError> {
        if !(1..=10_000).contains(&self.latency_ms) {
            return Err(OptionError::new(
                Opt::Latency,
                "must be a whole number of milliseconds from 1 to 10000",
            ));
        }
        if !(0.0..=100.0).contains(&self.tail) {
            return Err(OptionError::new(
                Opt::Tail,
                "must be a number from 0 to 100",
            ));
        }
        Ok(Network {
            latency_ms: self.latency_ms,
            tail: self.tail,
        })
    }
}

/// `value` as a whole number, for an option that takes one.
fn whole(opt: Opt, value: f64) -> Result<u64, OptionError> {
    // Below 2^53 every whole f64 is exact, and the cast is too.
    if value.fract() == 0.0 && (0.0..9_007_199_254_740_992.0).contains(&value) {
        Ok(value as u64)
    } else {
        Err(OptionError::new(opt, "must be a whole number"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rejected(set: impl Fn(&mut Options)) -> Opt {
        let mut o = Options::default();
        set(&mut o);
        o.scenario().expect_err("out of range").option
    }

    #[test]
    fn the_defaults_are_the_burst_scenario() {
        let s = Options::default().scenario().expect("valid");
        assert_eq!((s.pages, s.widgets, s.arrive_over_s), (10_000, 3, 0.0));
        assert_eq!(
            s.limiter,
            Limiter::Bucket {
                rate: 500.0,
                burst: 1000.0
            }
        );
        assert_eq!(
            (s.network.latency_ms, s.network.tail, s.serve),
            (100, 0.1, 100_000)
        );
    }

    #[test]
    fn each_range_names_its_option() {
        assert_eq!(rejected(|o| o.pages = 0), Opt::Pages);
        assert_eq!(rejected(|o| o.widgets = 101), Opt::Widgets);
        assert_eq!(
            rejected(|o| (o.pages, o.widgets) = (500_000, 3)),
            Opt::Widgets
        );
        assert_eq!(rejected(|o| o.arrive_over_s = f64::NAN), Opt::ArriveOver);
        assert_eq!(rejected(|o| o.rate = 0.0), Opt::Rate);
        assert_eq!(rejected(|o| o.burst = f64::INFINITY), Opt::Burst);
        let window = |o: &mut Options| o.limiter = LimiterKind::Window;
        assert_eq!(rejected(|o| (window(o), o.window_s = 0).1), Opt::Window);
        assert_eq!(rejected(|o| (window(o), o.limit = 0).1), Opt::Limit);
        assert_eq!(rejected(|o| o.latency_ms = 0), Opt::Latency);
        assert_eq!(rejected(|o| o.latency_ms = 10_001), Opt::Latency);
        assert_eq!(rejected(|o| o.tail = -0.5), Opt::Tail);
        assert_eq!(rejected(|o| o.tail = f64::NAN), Opt::Tail);
        assert_eq!(rejected(|o| o.serve = 0), Opt::Serve);
        assert_eq!(rejected(|o| o.seed = MAX_SEED + 1), Opt::Seed);
        let o = Options {
            seed: MAX_SEED,
            ..Options::default()
        };
        assert!(o.scenario().is_ok());
        // The bucket's parameters do not matter to a window.
        let mut o = Options::default();
        (o.limiter, o.rate) = (LimiterKind::Window, -1.0);
        assert!(o.scenario().is_ok());
    }

    /// Each range's ends, as `--help` gives them, are taken, and the values just past them are
    /// refused with their own option named.
    #[test]
    fn each_range_takes_its_ends_and_refuses_just_past_them() {
        let window = |o: &mut Options| o.limiter = LimiterKind::Window;
        type Set = fn(&mut Options);
        let ends: [Set; 12] = [
            |o| (o.pages, o.widgets) = (MAX_ACTIONS, 1),
            |o| (o.pages, o.widgets) = (10_000, 100),
            |o| (o.pages, o.widgets) = (10_000, 1),
            |o| o.arrive_over_s = 3600.0,
            |o| o.serve = 1_000_000_000,
            |o| o.tail = 100.0,
            |o| o.burst = 1.0,
            |o| o.burst = 1e9,
            |o| o.rate = 0.001,
            |o| o.latency_ms = 10_000,
            |o| (o.limiter, o.limit) = (LimiterKind::Window, 1_000_000_000),
            |o| (o.limiter, o.window_s) = (LimiterKind::Window, 3600),
        ];
        for (i, set) in ends.iter().enumerate() {
            let mut o = Options::default();
            set(&mut o);
            assert!(o.scenario().is_ok(), "end {i}");
        }
        assert_eq!(
            rejected(|o| (o.pages, o.widgets) = (MAX_ACTIONS + 1, 1)),
            Opt::Pages
        );
        assert_eq!(rejected(|o| o.widgets = 0), Opt::Widgets);
        assert_eq!(rejected(|o| (o.pages, o.widgets) = (1, 101)), Opt::Widgets);
        assert_eq!(rejected(|o| o.arrive_over_s = 3600.5), Opt::ArriveOver);
        assert_eq!(rejected(|o| o.serve = 1_000_000_001), Opt::Serve);
        assert_eq!(rejected(|o| o.tail = 100.5), Opt::Tail);
        assert_eq!(rejected(|o| o.burst = 0.5), Opt::Burst);
        assert_eq!(rejected(|o| o.burst = 1.1e9), Opt::Burst);
        assert_eq!(rejected(|o| o.rate = 0.0009), Opt::Rate);
        assert_eq!(
            rejected(|o| (window(o), o.limit = 1_000_000_001).1),
            Opt::Limit
        );
        assert_eq!(rejected(|o| (window(o), o.window_s = 3601).1), Opt::Window);
    }

    #[test]
    fn words_and_numbers_are_read_by_kind() {
        let mut o = Options::default();
        assert!(o.set_word(Opt::Limiter, "window").is_ok());
        assert!(o.set_word(Opt::RetryAfter, "date").is_ok());
        assert_eq!(
            (o.limiter, o.retry_after),
            (LimiterKind::Window, RetryAfterMode::Date)
        );
        assert_eq!(
            o.set_word(Opt::Limiter, "leaky").map_err(|e| e.message),
            Err("must be bucket or window".into())
        );
        assert_eq!(
            o.set_word(Opt::Pages, "ten").map_err(|e| e.option),
            Err(Opt::Pages)
        );
        assert_eq!(
            o.set_number(Opt::Pages, 2.5).map_err(|e| e.option),
            Err(Opt::Pages)
        );
        assert_eq!(
            o.set_number(Opt::Serve, -1.0).map_err(|e| e.message),
            Err("must be a whole number".into())
        );
        assert!(o.set_number(Opt::Seed, 7.0).is_ok() && o.set_number(Opt::Tail, 0.5).is_ok());
        assert_eq!((o.seed, o.tail), (7, 0.5));
        assert_eq!(
            o.set_number(Opt::RetryAfter, 1.0).map_err(|e| e.message),
            Err("must be seconds, date or none".into())
        );
    }
}

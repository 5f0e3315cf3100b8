//! The options of a fleet run, as the command's flags and the page's `simulateFleet(options)`
//! both name them, with their defaults (the default burst scenario) and their ranges. The
//! ranges keep a run finite and its figures meaningful: at most a million widgets, a limiter
//! that admits something, and no time beyond an hour.

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
    Seed,
}

impl Opt {
    /// Every option, in the order the command's usage lists them.
    pub const ALL: [Opt; 10] = [
        Opt::Pages,
        Opt::Widgets,
        Opt::ArriveOver,
        Opt::Limiter,
        Opt::Rate,
        Opt::Burst,
        Opt::Limit,
        Opt::Window,
        Opt::RetryAfter,
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
            Opt::Seed => "--seed",
        }
    }

    /// Whether the option is a word (`bucket`, `date`) rather than a number.
    pub fn is_word(self) -> bool {
        matches!(self, Opt::Limiter | Opt::RetryAfter)
    }

    /// Whether the option takes a fraction; the others are whole numbers.
    pub fn is_fraction(self) -> bool {
        matches!(self, Opt::ArriveOver | Opt::Rate | Opt::Burst)
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

/// The options as given. [`Options::default`] is the default burst scenario: 10,000 pages of
/// 3 widgets at once against a bucket of rate 500 and burst 1,000, `Retry-After` in seconds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Options {
    pub pages: u64,
    pub widgets: u64,
    /// Seconds over which the pages arrive; 0 for all at once.
    pub arrive_over_s: f64,
    /// `true` for a fixed window, `false` for a token bucket.
    pub window_limiter: bool,
    pub rate: f64,
    pub burst: f64,
    pub limit: u64,
    pub window_s: u64,
    pub retry_after: RetryAfterMode,
    pub seed: u64,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            pages: 10_000,
            widgets: 3,
            arrive_over_s: 0.0,
            window_limiter: false,
            rate: 500.0,
            burst: 1000.0,
            limit: 1000,
            window_s: 1,
            retry_after: RetryAfterMode::Seconds,
            seed: 1,
        }
    }
}

impl Options {
    /// Sets a word option (`limiter`, `retryAfter`) from its text.
    pub fn set_word(&mut self, opt: Opt, word: &str) -> Result<(), OptionError> {
        match (opt, word) {
            (Opt::Limiter, "bucket") => self.window_limiter = false,
            (Opt::Limiter, "window") => self.window_limiter = true,
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

    /// Sets a fraction option (`arriveOver`, `rate`, `burst`); checked by [`Options::scenario`].
    pub fn set_fraction(&mut self, opt: Opt, value: f64) -> Result<(), OptionError> {
        match opt {
            Opt::ArriveOver => self.arrive_over_s = value,
            Opt::Rate => self.rate = value,
            Opt::Burst => self.burst = value,
            _ => return self.set_whole(opt, whole(opt, value)?),
        }
        Ok(())
    }

    /// Sets a whole-number option; checked by [`Options::scenario`].
    pub fn set_whole(&mut self, opt: Opt, value: u64) -> Result<(), OptionError> {
        match opt {
            Opt::Pages => self.pages = value,
            Opt::Widgets => self.widgets = value,
            Opt::Limit => self.limit = value,
            Opt::Window => self.window_s = value,
            Opt::Seed => self.seed = value,
            // The error that lists the words.
            _ if opt.is_word() => return self.set_word(opt, ""),
            // A whole number is a fraction too.
            _ => return self.set_fraction(opt, value as f64),
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
        Ok(Scenario {
            pages: self.pages as u32,
            widgets: self.widgets as u32,
            arrive_over_s: self.arrive_over_s,
            limiter: self.limiter()?,
            retry_after: self.retry_after,
            response_ms: (50, 250),
            seed: self.seed,
        })
    }

    /// The limiter, its parameters checked.
    fn limiter(&self) -> Result<Limiter, OptionError> {
        let fail = |opt, message: &str| Err(OptionError::new(opt, message));
        if self.window_limiter {
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
        let window = |o: &mut Options| o.window_limiter = true;
        assert_eq!(rejected(|o| (window(o), o.window_s = 0).1), Opt::Window);
        assert_eq!(rejected(|o| (window(o), o.limit = 0).1), Opt::Limit);
        // The bucket's parameters do not matter to a window.
        let mut o = Options::default();
        (o.window_limiter, o.rate) = (true, -1.0);
        assert!(o.scenario().is_ok());
    }

    #[test]
    fn words_and_numbers_are_read_by_kind() {
        let mut o = Options::default();
        assert!(o.set_word(Opt::Limiter, "window").is_ok());
        assert!(o.set_word(Opt::RetryAfter, "date").is_ok());
        assert_eq!(
            (o.window_limiter, o.retry_after),
            (true, RetryAfterMode::Date)
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
            o.set_fraction(Opt::Pages, 2.5).map_err(|e| e.option),
            Err(Opt::Pages)
        );
        assert!(o.set_fraction(Opt::Seed, 7.0).is_ok() && o.set_whole(Opt::Rate, 9).is_ok());
        assert_eq!((o.seed, o.rate), (7, 9.0));
        assert_eq!(
            o.set_whole(Opt::RetryAfter, 1).map_err(|e| e.message),
            Err("must be seconds, date or none".into())
        );
    }
}

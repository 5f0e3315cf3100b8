//! The float rounding the model needs, in `core` alone: `core` has no `floor` or `round` on
//! stable Rust, and the browser module builds the model without std.

/// 2^52: every float at least this large in magnitude is a whole number.
const WHOLE: f64 = 4_503_599_627_370_496.0;

/// The largest whole number not above `x`, as `f64::floor` (NaN, the infinities and both
/// zeros pass as they are).
pub(crate) fn floor(x: f64) -> f64 {
    if x.is_nan() || x == 0.0 || x.abs() >= WHOLE {
        return x;
    }
    // |x| < 2^52: the cast truncates toward zero exactly, and the result fits.
    let t = x as i64 as f64;
    if t > x {
        t - 1.0
    } else {
        t
    }
}

/// `x` rounded to the nearest whole number, halves away from zero, as `f64::round`.
pub(crate) fn round(x: f64) -> f64 {
    if x < 0.0 {
        return -round(-x);
    }
    let t = floor(x);
    // x - t is exact here: both lie in one binade or t is 0.
    if x - t >= 0.5 {
        t + 1.0
    } else {
        t
    }
}

/// Whether a finite `x` is a whole number, as `x.fract() == 0.0`.
pub(crate) fn is_whole(x: f64) -> bool {
    floor(x) == x
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn edges_agree_with_std() {
        let edges = [
            0.0,
            -0.0,
            0.5,
            -0.5,
            1.5,
            2.5,
            0.499_999_999_999_999_94,
            -1.0,
            -1.5,
            1e300,
            -1e300,
            WHOLE,
            -WHOLE,
            WHOLE - 0.5,
            f64::MIN_POSITIVE,
            f64::INFINITY,
            f64::NEG_INFINITY,
        ];
        for x in edges {
            assert_eq!(floor(x).to_bits(), x.floor().to_bits(), "floor({x})");
            assert_eq!(round(x), x.round(), "round({x})");
            assert_eq!(
                is_whole(x),
                x.fract() == 0.0 || x.is_infinite(),
                "whole({x})"
            );
        }
        assert!(floor(f64::NAN).is_nan() && round(f64::NAN).is_nan());
    }

    proptest! {
        #[test]
        fn agree_with_std(x in proptest::num::f64::NORMAL | proptest::num::f64::SUBNORMAL | proptest::num::f64::ZERO) {
            prop_assert_eq!(floor(x), x.floor());
            prop_assert_eq!(round(x), x.round());
            prop_assert_eq!(is_whole(x), x.fract() == 0.0);
        }

        #[test]
        fn agree_with_std_near_whole(n in -1e7f64..1e7, d in -1e-6f64..1e-6) {
            let x = n + d;
            prop_assert_eq!(floor(x), x.floor());
            prop_assert_eq!(round(x), x.round());
        }
    }
}

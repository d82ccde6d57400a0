//! The checks of configuration values: each range, and its error message, written once.

use anyhow::{bail, Result};
use std::fmt::Display;
use std::ops::RangeInclusive;

/// A number a configuration key holds, with its range written as the errors say it.
pub(super) trait Number: PartialOrd + Display + Copy {
    /// The range in words: `1..=10` for counts, `[0, 1]` for real numbers.
    fn written(range: &RangeInclusive<Self>) -> String;
}

macro_rules! counts {
    ($($t:ty),+) => {$(
        impl Number for $t {
            fn written(range: &RangeInclusive<Self>) -> String {
                format!("{}..={}", range.start(), range.end())
            }
        }
    )+};
}
counts!(u32, u64, usize);

macro_rules! reals {
    ($($t:ty),+) => {$(
        impl Number for $t {
            fn written(range: &RangeInclusive<Self>) -> String {
                format!("[{}, {}]", range.start(), range.end())
            }
        }
    )+};
}
reals!(f32, f64);

/// Fails with `key: what` unless `ok`.
pub(super) fn check(ok: bool, key: &str, what: &str) -> Result<()> {
    if ok {
        Ok(())
    } else {
        bail!("{key}: {what}")
    }
}

/// Fails with `key: must be in <range>` unless `value` lies in `range`.
pub(super) fn in_range<T: Number>(value: T, range: RangeInclusive<T>, key: &str) -> Result<()> {
    in_range_noted(value, range, key, "")
}

/// As [`in_range`], the message followed by `note` (what a special value means).
pub(super) fn in_range_noted<T: Number>(
    value: T,
    range: RangeInclusive<T>,
    key: &str,
    note: &str,
) -> Result<()> {
    let mut what = format!("must be in {}", T::written(&range));
    if !note.is_empty() {
        what = format!("{what} {note}");
    }
    check(range.contains(&value), key, &what)
}

/// Fails with `key: must be at least <min>` unless `value` reaches `min`.
pub(super) fn at_least<T: Number>(value: T, min: T, key: &str) -> Result<()> {
    check(value >= min, key, &format!("must be at least {min}"))
}

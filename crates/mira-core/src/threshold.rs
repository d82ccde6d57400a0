//! Adaptive relevance threshold and pruning of the candidate list.
//!
//! The threshold is computed over the candidates' relevance values (catalogue §4.6) and clamped
//! to `[floor, ceiling]` (reference 0.15 and 0.75). Deliberate differences from the reference:
//! - `mean_stddev` is a method of its own; unknown method names are an error listing the valid
//!   ones (the reference silently used mean − stddev for any unknown string).
//! - NaN and infinite values are ignored rather than poisoning the statistics; bounds that are
//!   NaN are ignored, and bounds given in the wrong order are swapped (the clamp never panics).
//! - [`prune`] returns indices in input order in both cases (the reference sorted the whole
//!   list in place when it fell back to the top 5).
//!
//! Kept as in the reference: with fewer than 3 values every method gives 0.3 (before the clamp),
//! `iqr` is really the first quartile, and pruning is strict (`relevance > threshold`).

use std::fmt;
use std::str::FromStr;

/// The reference's lower clamp of the adaptive threshold.
pub const DEFAULT_FLOOR: f32 = 0.15;
/// The reference's upper clamp of the adaptive threshold.
pub const DEFAULT_CEILING: f32 = 0.75;
/// The reference's number of candidates kept when none clears the threshold.
pub const DEFAULT_KEEP_AT_LEAST: usize = 5;
/// The threshold used (before clamping) when there are fewer than 3 values.
pub const FEW_VALUES_THRESHOLD: f32 = 0.3;

/// How the adaptive threshold is derived from the relevance distribution.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum ThresholdMethod {
    /// The first quartile, with linear interpolation (the reference's "iqr"; the default).
    #[default]
    Iqr,
    /// The value right after the first drop larger than mean + stddev of the drops.
    Elbow,
    /// Mean minus the population standard deviation.
    MeanStddev,
}

impl ThresholdMethod {
    /// All methods.
    pub const ALL: [ThresholdMethod; 3] = [
        ThresholdMethod::Iqr,
        ThresholdMethod::Elbow,
        ThresholdMethod::MeanStddev,
    ];

    /// The name used in configuration.
    pub fn as_str(self) -> &'static str {
        match self {
            ThresholdMethod::Iqr => "iqr",
            ThresholdMethod::Elbow => "elbow",
            ThresholdMethod::MeanStddev => "mean_stddev",
        }
    }
}

impl fmt::Display for ThresholdMethod {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Error for a threshold method name that is not one of [`ThresholdMethod::ALL`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown adaptive threshold method '{0}': valid methods are iqr, elbow, mean_stddev")]
pub struct UnknownThresholdMethod(pub String);

impl FromStr for ThresholdMethod {
    type Err = UnknownThresholdMethod;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let wanted = s.trim().to_ascii_lowercase();
        Self::ALL
            .into_iter()
            .find(|m| m.as_str() == wanted)
            .ok_or_else(|| UnknownThresholdMethod(s.to_string()))
    }
}

/// The adaptive threshold of `values` by `method`, clamped to `[floor, ceiling]`.
pub fn adaptive_threshold(
    values: &[f32],
    method: ThresholdMethod,
    floor: f32,
    ceiling: f32,
) -> f32 {
    let mut v: Vec<f64> = values
        .iter()
        .filter(|x| x.is_finite())
        .map(|&x| f64::from(x))
        .collect();
    let raw = if v.len() < 3 {
        f64::from(FEW_VALUES_THRESHOLD)
    } else {
        v.sort_by(f64::total_cmp);
        match method {
            ThresholdMethod::Iqr => percentile(&v, 25.0),
            ThresholdMethod::Elbow => elbow(&v),
            ThresholdMethod::MeanStddev => {
                let (mean, std) = mean_std(&v);
                mean - std
            }
        }
    };
    clamp(raw as f32, floor, ceiling)
}

/// Clamps to `[lo, hi]`, ignoring NaN bounds and swapping reversed ones.
fn clamp(x: f32, lo: f32, hi: f32) -> f32 {
    let lo = if lo.is_nan() { f32::NEG_INFINITY } else { lo };
    let hi = if hi.is_nan() { f32::INFINITY } else { hi };
    let (lo, hi) = if lo <= hi { (lo, hi) } else { (hi, lo) };
    x.max(lo).min(hi)
}

/// The `p`-th percentile of ascending `sorted` (non-empty), with linear interpolation.
fn percentile(sorted: &[f64], p: f64) -> f64 {
    let pos = p / 100.0 * (sorted.len() - 1) as f64;
    let lo = pos.floor() as usize;
    let hi = pos.ceil() as usize;
    sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - lo as f64)
}

/// Mean and population standard deviation of non-empty `v`.
fn mean_std(v: &[f64]) -> (f64, f64) {
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n;
    (mean, var.sqrt())
}

/// Elbow over ascending `sorted` (at least 2 values): walking from the highest value down, the
/// value after the first drop larger than mean + stddev of all drops; the minimum when none is.
fn elbow(sorted: &[f64]) -> f64 {
    let desc: Vec<f64> = sorted.iter().rev().copied().collect();
    let drops: Vec<f64> = desc.windows(2).map(|w| w[0] - w[1]).collect();
    let (mean, std) = mean_std(&drops);
    let cutoff = mean + std;
    drops
        .iter()
        .position(|&d| d > cutoff)
        .map_or(sorted[0], |i| desc[i + 1])
}

/// Indices (in input order) of the relevances strictly above `threshold`; when none passes,
/// the `keep_at_least` highest (ties by index), still in input order. NaN never passes and
/// ranks last.
pub fn prune(relevances: &[f32], threshold: f32, keep_at_least: usize) -> Vec<usize> {
    let pass: Vec<usize> = (0..relevances.len())
        .filter(|&i| relevances[i] > threshold)
        .collect();
    if !pass.is_empty() {
        return pass;
    }
    let key = |i: usize| {
        if relevances[i].is_nan() {
            f32::NEG_INFINITY
        } else {
            relevances[i]
        }
    };
    let mut order: Vec<usize> = (0..relevances.len()).collect();
    order.sort_by(|&a, &b| key(b).total_cmp(&key(a)).then(a.cmp(&b)));
    order.truncate(keep_at_least);
    order.sort_unstable();
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    fn th(values: &[f32], m: ThresholdMethod) -> f32 {
        adaptive_threshold(values, m, DEFAULT_FLOOR, DEFAULT_CEILING)
    }

    fn close(a: f32, b: f32) -> bool {
        (a - b).abs() < 1e-6
    }

    #[test]
    fn reference_fixtures() {
        for m in ThresholdMethod::ALL {
            assert!(close(th(&[0.9, 0.8], m), 0.3));
        }
        assert!(close(th(&[0.1, 0.12, 0.11], ThresholdMethod::Iqr), 0.15));
        let rel = [0.8, 0.6, 0.3];
        let t = th(&rel, ThresholdMethod::Iqr);
        assert!(close(t, 0.45), "{t}");
        assert_eq!(prune(&rel, t, DEFAULT_KEEP_AT_LEAST), vec![0, 1]);
        assert!(close(
            th(&[0.9, 0.85, 0.3, 0.28], ThresholdMethod::Elbow),
            0.3
        ));
        assert!(close(
            th(&[0.5, 0.5, 0.5], ThresholdMethod::MeanStddev),
            0.5
        ));
    }

    #[test]
    fn elbow_without_a_clear_drop_is_the_minimum() {
        assert!(close(
            th(&[1.0, 0.75, 0.5, 0.25], ThresholdMethod::Elbow),
            0.25
        ));
        assert!(close(th(&[0.6, 0.6, 0.6], ThresholdMethod::Elbow), 0.6));
    }

    #[test]
    fn clamp_and_bad_inputs() {
        assert!(close(th(&[0.99, 0.98, 0.97], ThresholdMethod::Iqr), 0.75));
        assert!(close(th(&[f32::NAN, 0.9, 0.8], ThresholdMethod::Iqr), 0.3));
        assert!(close(th(&[], ThresholdMethod::Elbow), 0.3));
        assert!(close(
            adaptive_threshold(&[0.9, 0.8], ThresholdMethod::Iqr, 0.75, 0.15),
            0.3
        ));
        assert!(close(
            adaptive_threshold(&[0.9, 0.8], ThresholdMethod::Iqr, f32::NAN, 0.2),
            0.2
        ));
        assert!(close(
            adaptive_threshold(&[0.9, 0.8], ThresholdMethod::Iqr, f32::NAN, f32::NAN),
            0.3
        ));
    }

    #[test]
    fn prune_keeps_the_top_when_nothing_passes() {
        assert_eq!(
            prune(&[0.1, 0.3, f32::NAN, 0.2, 0.3], 0.5, 3),
            vec![1, 3, 4]
        );
        assert_eq!(prune(&[0.1, 0.2], 0.5, 5), vec![0, 1]);
        assert_eq!(prune(&[0.1, f32::NAN], 0.5, 5), vec![0, 1]);
        assert!(prune(&[], 0.5, 5).is_empty());
        assert!(prune(&[0.1], 0.5, 0).is_empty());
        assert_eq!(prune(&[0.6, 0.5], 0.5, 5), vec![0]);
    }

    #[test]
    fn method_names() {
        assert_eq!(
            "iqr".parse::<ThresholdMethod>().unwrap(),
            ThresholdMethod::Iqr
        );
        assert_eq!(
            " Elbow ".parse::<ThresholdMethod>().unwrap(),
            ThresholdMethod::Elbow
        );
        assert_eq!(
            "mean_stddev".parse::<ThresholdMethod>().unwrap(),
            ThresholdMethod::MeanStddev
        );
        let err = "median".parse::<ThresholdMethod>().unwrap_err().to_string();
        assert!(err.contains("iqr, elbow, mean_stddev"), "{err}");
        for m in ThresholdMethod::ALL {
            assert_eq!(m.to_string().parse::<ThresholdMethod>().unwrap(), m);
        }
        assert_eq!(ThresholdMethod::default(), ThresholdMethod::Iqr);
    }
}

//! Order statistics of a sample, nearest-rank.

use serde_json::{json, Value};

#[derive(Clone, Copy, Debug)]
pub struct Summary {
    pub n: usize,
    pub p50: f64,
    pub p95: f64,
    pub p99: f64,
    pub min: f64,
    pub max: f64,
    pub mean: f64,
}

/// The nearest-rank percentile `p` (0..=1) of a sorted, non-empty sample.
fn rank(sorted: &[f64], p: f64) -> f64 {
    let n = sorted.len();
    // ceil(p * n) as a 1-based rank, in integers: p is one of a few fixed fractions.
    let per_mille = (p * 1000.0).round() as usize;
    let rank = (per_mille * n).div_ceil(1000).clamp(1, n);
    sorted[rank - 1]
}

pub fn summarize(values: &[f64]) -> Option<Summary> {
    let mut sorted: Vec<f64> = values.iter().copied().filter(|v| v.is_finite()).collect();
    if sorted.is_empty() {
        return None;
    }
    sorted.sort_by(f64::total_cmp);
    Some(Summary {
        n: sorted.len(),
        p50: rank(&sorted, 0.50),
        p95: rank(&sorted, 0.95),
        p99: rank(&sorted, 0.99),
        min: sorted[0],
        max: sorted[sorted.len() - 1],
        mean: sorted.iter().sum::<f64>() / sorted.len() as f64,
    })
}

impl Summary {
    pub fn to_json(self) -> Value {
        json!({
            "n": self.n,
            "p50": round(self.p50),
            "p95": round(self.p95),
            "p99": round(self.p99),
            "min": round(self.min),
            "max": round(self.max),
            "mean": round(self.mean),
        })
    }
}

/// Three decimals are more than any of these figures can tell.
pub fn round(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}

pub fn summary_json(values: &[f64]) -> Value {
    summarize(values).map_or(Value::Null, Summary::to_json)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nearest_rank() {
        let v: Vec<f64> = (1..=100).map(f64::from).collect();
        let s = summarize(&v).expect("a summary");
        assert_eq!(
            (s.p50, s.p95, s.p99, s.min, s.max),
            (50.0, 95.0, 99.0, 1.0, 100.0)
        );
        let s = summarize(&[3.0]).expect("a summary");
        assert_eq!((s.p50, s.p99), (3.0, 3.0));
        assert!(summarize(&[]).is_none());
    }
}

//! The config file's `[health]` section: the thresholds and window of the
//! fabric health checks (docs/health.md), each checked.

use std::time::Duration;

use ib::model::health::HealthConfig;
use serde::Deserialize;

/// `[health]` as written; every key optional (the defaults of
/// [`HealthConfig`]).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HealthSection {
    window: Option<f64>,
    max_symbol_ber: Option<f64>,
    max_link_recovery_per_hour: Option<f64>,
    flap_count: Option<u64>,
    max_xmit_wait_ratio: Option<f64>,
}

impl HealthSection {
    /// The checks' settings, or one line naming the bad key.
    pub fn config(self) -> Result<HealthConfig, String> {
        let mut c = HealthConfig::default();
        if let Some(w) = self.window {
            if !(w.is_finite() && (10.0..=86_400.0).contains(&w)) {
                return Err(format!("window = {w}: expected seconds from 10 to 86400"));
            }
            c.window = Duration::from_secs_f64(w);
        }
        let positive = |key: &str, v: f64| {
            (v.is_finite() && v > 0.0)
                .then_some(v)
                .ok_or_else(|| format!("{key} = {v}: expected a number above 0"))
        };
        if let Some(b) = self.max_symbol_ber {
            c.max_symbol_ber = positive("max_symbol_ber", b)?;
        }
        if let Some(r) = self.max_link_recovery_per_hour {
            c.max_link_recovery_per_hour = positive("max_link_recovery_per_hour", r)?;
        }
        if let Some(n) = self.flap_count {
            if n == 0 {
                return Err("flap_count = 0: expected 1 or more".into());
            }
            c.flap_count = n;
        }
        if let Some(r) = self.max_xmit_wait_ratio {
            if !(r.is_finite() && r > 0.0 && r < 1.0) {
                return Err(format!(
                    "max_xmit_wait_ratio = {r}: expected a share between 0 and 1"
                ));
            }
            c.max_xmit_wait_ratio = r;
        }
        Ok(c)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(t: &str) -> Result<HealthConfig, String> {
        crate::config::parse_section(t, HealthSection::config)
    }

    #[test]
    fn defaults_values_and_errors() {
        assert_eq!(parse("").unwrap(), HealthConfig::default());
        let c = parse("window = 60\nflap_count = 3\nmax_symbol_ber = 1e-10\n").unwrap();
        assert_eq!(c.window, Duration::from_secs(60));
        assert_eq!((c.flap_count, c.max_symbol_ber), (3, 1e-10));
        for (t, want) in [
            (
                "window = 1",
                "window = 1: expected seconds from 10 to 86400",
            ),
            ("flap_count = 0", "flap_count = 0"),
            ("max_xmit_wait_ratio = 1.5", "between 0 and 1"),
            ("max_symbol_ber = -1", "above 0"),
        ] {
            let e = parse(t).unwrap_err();
            assert!(e.contains(want), "{t}: {e}");
        }
    }
}

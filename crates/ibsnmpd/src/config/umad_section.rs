//! The config file's `[umad]` section: the umad source's options, each
//! checked, mapped onto [`UmadOptions`] (docs/config.md lists them).

use std::time::Duration;

use ib::source::umad::pma::detail;
use ib::source::umad::UmadOptions;
use serde::Deserialize;

/// `[umad]` as written; every key optional (the source's defaults).
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UmadSection {
    window: Option<u64>,
    timeout: Option<f64>,
    retries: Option<u32>,
    sm_key: Option<String>,
    m_key: Option<String>,
    details: Option<Vec<String>>,
    lft: Option<bool>,
    topology_every: Option<u32>,
    quick_start: Option<bool>,
    tables_every: Option<u32>,
    detail_every: Option<u32>,
    subscribe_traps: Option<bool>,
    reset_threshold: Option<f64>,
    switch_sums: Option<bool>,
    sysfs_root: Option<std::path::PathBuf>,
}

/// Detail attribute names, as the PMA attribute names without `Port`/`Counters`.
const DETAILS: [(&str, u8); 6] = [
    ("rcv_error", detail::RCV_ERROR_DETAILS),
    ("xmit_discard", detail::XMIT_DISCARD_DETAILS),
    ("flow_ctl", detail::FLOW_CTL),
    ("vl_op_packets", detail::VL_OP_PACKETS),
    ("vl_op_data", detail::VL_OP_DATA),
    ("vl_xmit_wait", detail::VL_XMIT_WAIT),
];

impl UmadSection {
    /// The options, or one line naming the bad key.
    pub fn options(self) -> Result<UmadOptions, String> {
        let mut o = UmadOptions::default();
        if let Some(w) = self.window {
            if !(1..=4096).contains(&w) {
                return Err(format!("window = {w}: must be 1..=4096"));
            }
            o.transport.window = w as usize;
        }
        if let Some(t) = self.timeout {
            if !t.is_finite() || t <= 0.0 || t > 60.0 {
                return Err(format!("timeout = {t}: must be 0 < seconds <= 60"));
            }
            o.transport.timeout = Duration::from_secs_f64(t);
        }
        if let Some(r) = self.retries {
            if r > 20 {
                return Err(format!("retries = {r}: must be 0..=20"));
            }
            o.transport.retries = r;
        }
        if let Some(k) = self.m_key {
            o.m_key = parse_sm_key(&k)
                .flatten()
                .ok_or_else(|| format!("m_key = {k:?}: expected a 64-bit number (\"0x1\")"))?;
        }
        if let Some(k) = self.sm_key {
            o.sm_key = parse_sm_key(&k).ok_or_else(|| {
                format!("sm_key = {k:?}: expected a 64-bit number (\"0x1\") or \"none\"")
            })?;
        }
        if let Some(names) = self.details {
            let mut mask = 0;
            for n in &names {
                let bit = DETAILS
                    .iter()
                    .find(|(name, _)| name == n)
                    .map(|&(_, b)| b)
                    .ok_or_else(|| {
                        let all: Vec<&str> = DETAILS.iter().map(|(n, _)| *n).collect();
                        format!("details: unknown {n:?} (one of {})", all.join(", "))
                    })?;
                mask |= bit;
            }
            o.pma.details = mask;
        }
        if let Some(l) = self.lft {
            o.lft = l;
        }
        if let Some(n) = self.topology_every {
            o.topology_every = every("topology_every", n)?;
        }
        if let Some(q) = self.quick_start {
            o.quick_start = q;
        }
        if let Some(n) = self.tables_every {
            o.tables_every = every("tables_every", n)?;
        }
        if let Some(n) = self.detail_every {
            o.pma.detail_every = every("detail_every", n)?;
        }
        if let Some(t) = self.subscribe_traps {
            o.subscribe_traps = t;
        }
        if let Some(b) = self.switch_sums {
            o.pma.switch_sums = b;
        }
        if let Some(f) = self.reset_threshold {
            if !(f > 0.0 && f < 1.0) {
                return Err(format!("reset_threshold = {f}: must be between 0 and 1"));
            }
            o.pma.reset_threshold = Some(f);
        }
        if let Some(r) = self.sysfs_root {
            o.sysfs_root = r;
        }
        Ok(o)
    }
}

/// A "every N sweeps" key's value, checked: 1..=1000.
fn every(key: &str, n: u32) -> Result<u32, String> {
    if (1..=1000).contains(&n) {
        Ok(n)
    } else {
        Err(format!("{key} = {n}: must be 1..=1000"))
    }
}

fn parse_sm_key(s: &str) -> Option<Option<u64>> {
    let s = s.trim();
    if s.eq_ignore_ascii_case("none") {
        return Some(None);
    }
    let v = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(hex) => u64::from_str_radix(hex, 16).ok()?,
        None => s.parse().ok()?,
    };
    Some(Some(v))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<UmadOptions, String> {
        crate::config::parse_section(text, UmadSection::options)
    }

    #[test]
    fn defaults_and_values() {
        assert_eq!(parse("").unwrap(), UmadOptions::default());
        let o = parse(
            "window = 64\ntimeout = 0.25\nretries = 0\nsm_key = \"none\"\n\
             details = [\"flow_ctl\"]\nlft = false\ntopology_every = 5\n\
             subscribe_traps = true\nreset_threshold = 0.75\nquick_start = false\n",
        )
        .unwrap();
        assert_eq!(o.transport.window, 64);
        assert_eq!(o.transport.timeout, Duration::from_millis(250));
        assert_eq!(o.transport.retries, 0);
        assert_eq!(o.sm_key, None);
        assert_eq!(o.pma.details, detail::FLOW_CTL);
        assert!(!o.lft && o.subscribe_traps);
        assert_eq!(o.topology_every, 5);
        assert!(!o.quick_start);
        assert_eq!(o.pma.reset_threshold, Some(0.75));
        assert_eq!(parse("sm_key = \"0x10\"").unwrap().sm_key, Some(16));
    }

    #[test]
    fn each_key_validated() {
        for bad in [
            "window = 0",
            "timeout = 0",
            "timeout = 61",
            "retries = 99",
            "sm_key = \"x\"",
            "details = [\"nope\"]",
            "topology_every = 0",
            "reset_threshold = 1.5",
            "bogus = 1",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}

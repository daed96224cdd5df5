//! The port `rate` file: `"%d[.5] Gb/sec (%dX[ SPEED])"`, e.g.
//! `100 Gb/sec (4X EDR)`, `2.5 Gb/sec (1X SDR)`, `40 Gb/sec (4X FDR10)`.
//! Kernels before the speed names print SDR with no name (`10 Gb/sec (4X)`)
//! and name DDR/QDR; a missing name is taken from the per-lane rate.

use super::attr::{parse_err, SysfsError};
use crate::types::{LinkSpeed, LinkWidth};
use std::path::Path;

/// Active width and speed of a port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rate {
    pub width: LinkWidth,
    pub speed: LinkSpeed,
}

const EXPECTED: &str = "\"N Gb/sec (WX SPEED)\" with W 1, 2, 4, 8 or 12 and SPEED SDR..XDR";

/// Parses a `rate` file's contents.
pub fn parse_rate(path: &Path, s: &str) -> Result<Rate, SysfsError> {
    let err = || parse_err(path, EXPECTED, s);
    let (num, rest) = s.split_once("Gb/sec").ok_or_else(err)?;
    let gbps: f64 = num.trim().parse().map_err(|_| err())?;
    let inner = rest
        .trim()
        .strip_prefix('(')
        .and_then(|r| r.strip_suffix(')'))
        .ok_or_else(err)?;
    let mut toks = inner.split_whitespace();
    let width: LinkWidth = toks.next().ok_or_else(err)?.parse().map_err(|_| err())?;
    let speed = match toks.next() {
        Some(t) => t.parse::<LinkSpeed>().map_err(|_| err())?,
        None => speed_from_lane_rate(gbps / f64::from(width.lanes())).ok_or_else(err)?,
    };
    if toks.next().is_some() {
        return Err(err());
    }
    Ok(Rate { width, speed })
}

/// SDR/DDR/QDR from their per-lane signalling rate (the only speeds old
/// kernels may print without a name).
fn speed_from_lane_rate(gbps: f64) -> Option<LinkSpeed> {
    [
        (2.5, LinkSpeed::Sdr),
        (5.0, LinkSpeed::Ddr),
        (10.0, LinkSpeed::Qdr),
    ]
    .into_iter()
    .find(|(r, _)| (gbps - r).abs() < 0.01)
    .map(|(_, s)| s)
}

#[cfg(test)]
mod tests {
    use super::*;
    use LinkSpeed::*;
    use LinkWidth::*;

    fn r(s: &str) -> Result<Rate, SysfsError> {
        parse_rate(Path::new("/rate"), s)
    }

    #[test]
    fn every_speed_and_width() {
        // As the kernel prints them: per-lane Gb/sec x lanes.
        let cases = [
            ("2.5 Gb/sec (1X SDR)", X1, Sdr),
            ("10 Gb/sec (4X SDR)", X4, Sdr),
            ("10 Gb/sec (4X)", X4, Sdr),
            ("30 Gb/sec (12X)", X12, Sdr),
            ("20 Gb/sec (4X DDR)", X4, Ddr),
            ("40 Gb/sec (4X QDR)", X4, Qdr),
            ("40 Gb/sec (4X FDR10)", X4, Fdr10),
            ("56 Gb/sec (4X FDR)", X4, Fdr),
            ("14 Gb/sec (1X FDR)", X1, Fdr),
            ("100 Gb/sec (4X EDR)", X4, Edr),
            ("50 Gb/sec (2X EDR)", X2, Edr),
            ("300 Gb/sec (12X EDR)", X12, Edr),
            ("200 Gb/sec (4X HDR)", X4, Hdr),
            ("100 Gb/sec (2X HDR)", X2, Hdr),
            ("400 Gb/sec (8X HDR)", X8, Hdr),
            ("400 Gb/sec (4X NDR)", X4, Ndr),
            ("100 Gb/sec (1X NDR)", X1, Ndr),
            ("800 Gb/sec (4X XDR)", X4, Xdr),
            ("1600 Gb/sec (8X XDR)", X8, Xdr),
        ];
        for (s, w, sp) in cases {
            assert_eq!(
                r(s).unwrap(),
                Rate {
                    width: w,
                    speed: sp
                },
                "{s}"
            );
        }
    }

    #[test]
    fn errors_name_the_file() {
        for bad in [
            "",
            "fast",
            "100 Gb/sec",
            "100 Gb/sec (3X EDR)",
            "100 Gb/sec (4X ZDR)",
            "x Gb/sec (4X EDR)",
            "7 Gb/sec (4X)",
            "100 Gb/sec (4X EDR extra)",
        ] {
            let e = r(bad).unwrap_err().to_string();
            assert!(e.starts_with("/rate: expected"), "{bad:?}: {e}");
        }
    }
}

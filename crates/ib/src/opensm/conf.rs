//! opensm.conf: `name value` lines with `#` comments. One parser for the
//! IB-SM-MIB read side and one editor for the steering, over one table of
//! the options the agent knows ([`SmOption`]).

use std::collections::BTreeMap;

/// How OpenSM takes up a changed option.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Applied {
    /// At once through the console (`priority N`); on a heavy sweep
    /// otherwise.
    Console,
    /// On a heavy sweep (`resweep heavy` or SIGHUP), when OpenSM re-reads
    /// the file.
    Resweep,
    /// Only when OpenSM starts: the `restart` command.
    Restart,
}

/// The opensm.conf options IB-SM-MIB reads and writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SmOption {
    /// `sm_priority` (0..15).
    Priority,
    /// `sweep_interval`, seconds (0: no periodic sweeps).
    SweepInterval,
    /// `sminfo_polling_timeout`: OpenSM counts milliseconds, the MIB
    /// seconds.
    MasterPollInterval,
    /// `polling_retry_number`.
    MasterPollRetries,
    /// `m_key_lease_period`, seconds.
    MKeyLeasePeriod,
    /// `transaction_timeout`, milliseconds.
    ResponseTimeout,
    /// `lmc` (0..7).
    DefaultLmc,
}

impl SmOption {
    pub const ALL: [SmOption; 7] = [
        SmOption::Priority,
        SmOption::SweepInterval,
        SmOption::MasterPollInterval,
        SmOption::MasterPollRetries,
        SmOption::MKeyLeasePeriod,
        SmOption::ResponseTimeout,
        SmOption::DefaultLmc,
    ];

    /// Its name in opensm.conf.
    pub fn name(self) -> &'static str {
        match self {
            SmOption::Priority => "sm_priority",
            SmOption::SweepInterval => "sweep_interval",
            SmOption::MasterPollInterval => "sminfo_polling_timeout",
            SmOption::MasterPollRetries => "polling_retry_number",
            SmOption::MKeyLeasePeriod => "m_key_lease_period",
            SmOption::ResponseTimeout => "transaction_timeout",
            SmOption::DefaultLmc => "lmc",
        }
    }

    /// The file's unit per MIB unit.
    fn scale(self) -> u64 {
        match self {
            SmOption::MasterPollInterval => 1000,
            _ => 1,
        }
    }

    /// The file value for a MIB value.
    pub fn to_file(self, mib: u32) -> u64 {
        u64::from(mib) * self.scale()
    }

    /// The MIB value for a file value (rounded up: a poll of 1500 ms is
    /// not 1 s).
    pub fn to_mib(self, file: u64) -> u32 {
        u32::try_from(file.div_ceil(self.scale())).unwrap_or(u32::MAX)
    }

    pub fn applied(self) -> Applied {
        match self {
            SmOption::Priority => Applied::Console,
            SmOption::ResponseTimeout | SmOption::DefaultLmc => Applied::Restart,
            _ => Applied::Resweep,
        }
    }

    fn by_name(name: &str) -> Option<SmOption> {
        SmOption::ALL.into_iter().find(|o| o.name() == name)
    }
}

/// The option opensm.conf holds the SM_Key in (a secret: never logged).
pub const SM_KEY: &str = "sm_key";

/// The known options an opensm.conf sets, in the file's units.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OpenSmConf {
    values: BTreeMap<SmOption, u64>,
}

impl OpenSmConf {
    /// Parses opensm.conf; unknown names and malformed values are skipped
    /// (OpenSM takes the last of a repeated option, so do we).
    pub fn parse(text: &str) -> Self {
        let mut values = BTreeMap::new();
        for line in text.lines() {
            let mut w = line
                .split('#')
                .next()
                .unwrap_or_default()
                .split_whitespace();
            let (Some(k), Some(v)) = (w.next(), w.next()) else {
                continue;
            };
            let n = v
                .strip_prefix("0x")
                .map_or_else(|| v.parse().ok(), |h| u64::from_str_radix(h, 16).ok());
            if let (Some(o), Some(n)) = (SmOption::by_name(k), n) {
                values.insert(o, n);
            }
        }
        OpenSmConf { values }
    }

    /// The option's value in the file's unit.
    pub fn get(&self, o: SmOption) -> Option<u64> {
        self.values.get(&o).copied()
    }

    /// The option's value in the MIB's unit.
    pub fn mib(&self, o: SmOption) -> Option<u32> {
        self.get(o).map(|v| o.to_mib(v))
    }
}

/// `text` with option `key` set to `value`: the option's line replaced in
/// place (its trailing comment kept), later repeats of it dropped (OpenSM
/// would take the last), or the option appended; every other line as it
/// was.
pub fn with_option(text: &str, key: &str, value: &str) -> String {
    let mut out = String::with_capacity(text.len() + key.len() + value.len() + 2);
    let mut done = false;
    for line in text.split_inclusive('\n') {
        let body = line.trim_end_matches(['\n', '\r']);
        let code = body.split('#').next().unwrap_or_default();
        let is_key = code.split_whitespace().next() == Some(key);
        if is_key && !done {
            let comment = body.find('#').map(|i| &body[i..]);
            out.push_str(key);
            out.push(' ');
            out.push_str(value);
            if let Some(c) = comment {
                out.push(' ');
                out.push_str(c);
            }
            out.push_str(&line[body.len()..]);
            done = true;
        } else if !is_key {
            out.push_str(line);
        }
    }
    if !done {
        if !out.is_empty() && !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&format!("{key} {value}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const CONF: &str = "# OpenSM configuration\n\
                        # sm_priority 3 (a commented example stays)\n\
                        sm_priority 1   # ours\n\
                        \n\
                        sweep_interval 10\n\
                        lmc 0\n";

    #[test]
    fn replaces_in_place_and_keeps_the_rest() {
        let t = with_option(CONF, "sm_priority", "7");
        assert_eq!(
            t,
            "# OpenSM configuration\n\
             # sm_priority 3 (a commented example stays)\n\
             sm_priority 7 # ours\n\
             \n\
             sweep_interval 10\n\
             lmc 0\n"
        );
        let t = with_option(&t, "polling_retry_number", "4");
        assert!(t.ends_with("lmc 0\npolling_retry_number 4\n"), "{t}");
        assert_eq!(with_option("a 1", "b", "2"), "a 1\nb 2\n");
        // A later duplicate goes: OpenSM would read it last.
        assert_eq!(with_option("x 1\nx 2\n", "x", "3"), "x 3\n");
    }

    #[test]
    fn parses_the_known_options_in_both_units() {
        let c = OpenSmConf::parse(
            "# comment\nsweep_interval 10\ntransaction_timeout 200\n\
             sminfo_polling_timeout 1500 # ms\nlmc 0x2\nbogus 1\nsm_priority x\nlmc 3\n",
        );
        assert_eq!(c.get(SmOption::SweepInterval), Some(10));
        assert_eq!(c.get(SmOption::ResponseTimeout), Some(200));
        assert_eq!(c.get(SmOption::MasterPollInterval), Some(1500));
        assert_eq!(c.mib(SmOption::MasterPollInterval), Some(2));
        assert_eq!(c.get(SmOption::DefaultLmc), Some(3), "the last one wins");
        assert_eq!(c.get(SmOption::Priority), None);
        assert_eq!(SmOption::MasterPollInterval.to_file(3), 3000);
        assert_eq!(SmOption::Priority.applied(), Applied::Console);
        assert_eq!(SmOption::DefaultLmc.applied(), Applied::Restart);
    }
}

//! net-snmp's snmptrapd as the notification receiver: its own config in a
//! temporary directory, the shipped MIBs loaded (`-M mibs:mibs/ietf -m ALL`)
//! so traps and objects print by name, one line per notification.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{free_port, require_tool};

/// One line per notification: PDU kind and version, agent-addr,
/// enterprise, generic, specific, then the varbinds (tab-separated).
const FORMAT: &str = "TRAP %P|%a|%N|%w|%q|%v\n";

/// One received notification.
#[derive(Debug, Clone, PartialEq)]
pub struct Trap {
    /// "TRAP" (SNMPv1), "TRAP2" (SNMPv2c) or "INFORM".
    pub pdu: String,
    /// The notification's name, e.g. `IB-SM-MIB::ibSmTrapOutOfService`
    /// (for SNMPv1 traps as translated back by snmptrapd).
    pub name: String,
    pub agent_addr: String,
    /// The OBJECTS as `name = value`, without sysUpTime.0, snmpTrapOID.0
    /// and snmpTrapEnterprise.0.
    pub objects: Vec<String>,
    /// When the line was first seen by [`Trapd::wait`].
    pub seen: Option<Instant>,
}

impl Trap {
    pub fn object(&self, name: &str) -> Option<&str> {
        self.objects
            .iter()
            .find(|o| o.starts_with(name))
            .and_then(|o| o.split_once(" = ").map(|x| x.1))
    }
}

const GENERIC: [&str; 6] = [
    "SNMPv2-MIB::coldStart",
    "SNMPv2-MIB::warmStart",
    "IF-MIB::linkDown",
    "IF-MIB::linkUp",
    "SNMPv2-MIB::authenticationFailure",
    "egpNeighborLoss",
];

fn parse(line: &str) -> Option<Trap> {
    let rest = line.strip_prefix("TRAP ")?;
    let mut f = rest.splitn(6, '|');
    let (p, a, _n, w, q, v) = (
        f.next()?,
        f.next()?,
        f.next()?,
        f.next()?,
        f.next()?,
        f.next()?,
    );
    let pdu = p.split(',').next()?.trim().to_string();
    let mut name = String::new();
    let mut objects = Vec::new();
    for vb in v.split('\t') {
        let vb = vb.trim();
        // DISMAN-EVENT-MIB (shipped) names sysUpTime.0 sysUpTimeInstance.
        if vb.starts_with("SNMPv2-MIB::sysUpTime.0")
            || vb.starts_with("DISMAN-EVENT-MIB::sysUpTimeInstance")
            || vb.starts_with("SNMPv2-MIB::snmpTrapEnterprise.0")
        {
            continue;
        }
        if let Some(o) = vb.strip_prefix("SNMPv2-MIB::snmpTrapOID.0 = OID: ") {
            name = o.to_string();
            continue;
        }
        if !vb.is_empty() {
            objects.push(vb.to_string());
        }
    }
    if pdu == "TRAP" {
        name = match w.parse::<usize>() {
            Ok(6) => q.to_string(),
            Ok(g) => GENERIC.get(g).copied().unwrap_or("?").to_string(),
            Err(_) => "?".into(),
        };
    }
    Some(Trap {
        pdu,
        name,
        agent_addr: a.to_string(),
        objects,
        seen: None,
    })
}

/// A running snmptrapd on a loopback port; killed when dropped.
pub struct Trapd {
    child: Option<Child>,
    pub port: u16,
    out: PathBuf,
    /// Lines already returned with their first-seen time.
    seen: std::cell::RefCell<Vec<Trap>>,
    _dir: tempfile::TempDir,
}

fn mibdirs() -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../mibs");
    format!("{}:{}", root.display(), root.join("ietf").display())
}

impl Trapd {
    pub fn start() -> Trapd {
        Trapd::start_on(free_port("127.0.0.1"))
    }

    pub fn start_on(port: u16) -> Trapd {
        Trapd::start_with(port, "")
    }

    /// With `extra` lines in its snmptrapd.conf (e.g. `createUser -e ...`
    /// for SNMPv3 traps).
    pub fn start_with(port: u16, extra: &str) -> Trapd {
        Trapd::start_at(&format!("udp:127.0.0.1:{port}"), port, extra)
    }

    /// Knowing the USM user trapops (SHA-256 authpass-1, AES privpass-1)
    /// under the sender's engine `engine` (hex), for SNMPv3 traps.
    pub fn start_v3(engine: &str) -> Trapd {
        Trapd::start_with(
            free_port("127.0.0.1"),
            &format!("createUser -e 0x{engine} trapops SHA-256 authpass-1 AES privpass-1\n"),
        )
    }

    /// Listening on `transport` (net-snmp's spelling, e.g. `udp6:[::1]:PORT`)
    /// whose port is `port`.
    pub fn start_at(transport: &str, port: u16, extra: &str) -> Trapd {
        require_tool("snmptrapd");
        let dir = tempfile::tempdir().unwrap();
        let conf = dir.path().join("snmptrapd.conf");
        std::fs::write(
            &conf,
            format!("disableAuthorization yes\ndoNotRetainNotificationLogs yes\n{extra}"),
        )
        .unwrap();
        let out = dir.path().join("trapd.out");
        let child = Command::new("snmptrapd")
            .args(["-f", "-Lo", "-C", "-c"])
            .arg(&conf)
            .args(["-M", &mibdirs(), "-m", "ALL", "-F", FORMAT])
            // Its persistent files go to the temporary directory too.
            .env("SNMP_PERSISTENT_DIR", dir.path())
            .arg(transport)
            .stdin(Stdio::null())
            .stdout(std::fs::File::create(&out).unwrap())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn snmptrapd");
        let t = Trapd {
            child: Some(child),
            port,
            out,
            seen: Default::default(),
            _dir: dir,
        };
        // Ready once it has loaded the MIBs and says so.
        crate::common::poll(Duration::from_secs(20), Duration::from_millis(50), || {
            let text = t.text();
            (text.contains("NET-SNMP version"))
                .then_some(())
                .ok_or_else(|| format!("snmptrapd did not start: {text}"))
        });
        t
    }

    /// `127.0.0.1:port`.
    pub fn addr(&self) -> String {
        format!("127.0.0.1:{}", self.port)
    }

    pub fn text(&self) -> String {
        std::fs::read_to_string(&self.out).unwrap_or_default()
    }

    /// Every notification received so far, in order.
    pub fn traps(&self) -> Vec<Trap> {
        let now = Instant::now();
        let all: Vec<Trap> = self.text().lines().filter_map(parse).collect();
        let mut seen = self.seen.borrow_mut();
        for t in all.iter().skip(seen.len()) {
            let mut t = t.clone();
            t.seen = Some(now);
            seen.push(t);
        }
        seen.clone()
    }

    /// After `settle` (time for any late notification to arrive): exactly
    /// `n` notifications named `name` were received.
    pub fn assert_count_after(&self, settle: Duration, name: &str, n: usize) {
        std::thread::sleep(settle);
        assert_eq!(count(&self.traps(), name), n, "{}", self.text());
    }

    /// Polls until `pred` holds for the received notifications (returns
    /// them) or `timeout` passes (panics with what arrived).
    pub fn wait(&self, timeout: Duration, what: &str, pred: impl Fn(&[Trap]) -> bool) -> Vec<Trap> {
        crate::common::poll(timeout, Duration::from_millis(10), || {
            let t = self.traps();
            if pred(&t) {
                return Ok(t);
            }
            Err(format!("waiting for {what}; received:\n{}", self.text()))
        })
    }

    pub fn stop(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}

impl Drop for Trapd {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Notifications named `name` (suffix match, e.g. "ibSmTrapInService").
pub fn named<'a>(traps: &'a [Trap], name: &str) -> Vec<&'a Trap> {
    traps.iter().filter(|t| t.name.ends_with(name)).collect()
}

pub fn count(traps: &[Trap], name: &str) -> usize {
    named(traps, name).len()
}

/// DISMAN-EVENT-MIB notifications named `name` (mteTriggerFired, ...)
/// whose mteHotTrigger is `trigger`.
#[allow(dead_code)] // not every test binary receives DISMAN-EVENT notifications
pub fn of_trigger<'a>(traps: &'a [Trap], name: &str, trigger: &str) -> Vec<&'a Trap> {
    let hot = format!("STRING: {trigger}");
    named(traps, name)
        .into_iter()
        .filter(|x| x.object("DISMAN-EVENT-MIB::mteHotTrigger.0") == Some(&*hot))
        .collect()
}

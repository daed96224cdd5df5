//! SNMPv3 notifications from `Usm::encode_notification`, received by
//! net-snmp's snmptrapd with the same USM user (trapsess -v3 semantics).

use std::io::Read;
use std::net::UdpSocket;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use snmp::oid::Oid;
use snmp::pdu::{ErrorStatus, Pdu, PduBody};
use snmp::usm::{AuthProtocol, Engine, PrivProtocol, SecurityLevel, UserConfig, Usm};
use snmp::value::{Value, VarBind};

const ENGINE: [u8; 8] = [0x80, 0, 0, 0, 5, 1, 2, 3];

fn free_port() -> u16 {
    let s = UdpSocket::bind("127.0.0.1:0").unwrap();
    s.local_addr().unwrap().port()
}

#[test]
fn snmptrapd_receives_auth_priv_traps() {
    let Ok(trapd) = which("snmptrapd") else {
        panic!("snmptrapd not found: apt-get install snmptrapd");
    };
    let dir = tempfile::tempdir().unwrap();
    let conf = dir.path().join("snmptrapd.conf");
    std::fs::write(
        &conf,
        "createUser -e 0x8000000005010203 trapuser SHA-256 authpass-1 AES privpass-1\n\
         authUser log trapuser priv\n",
    )
    .unwrap();
    let port = free_port();
    let log = dir.path().join("trapd.log");
    let mut child = Command::new(trapd)
        .args(["-f", "-C", "-c"])
        .arg(&conf)
        .args(["-Lf"])
        .arg(&log)
        .args(["-On", &format!("udp:127.0.0.1:{port}")])
        .env("SNMP_PERSISTENT_DIR", dir.path())
        .env("MIBS", "")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let users = vec![UserConfig {
        name: "trapuser".into(),
        auth: Some((AuthProtocol::Sha256, "authpass-1".into())),
        privacy: Some((PrivProtocol::Aes128, "privpass-1".into())),
        access: None,
    }];
    let usm = Usm::new(Engine::new(ENGINE.to_vec(), 3), &users).unwrap();
    let trap = Pdu::SnmpV2Trap(PduBody {
        request_id: 77,
        error_status: ErrorStatus::NoError,
        error_index: 0,
        varbinds: vec![
            VarBind::new(
                Oid::new(vec![1, 3, 6, 1, 2, 1, 1, 3, 0]),
                Value::TimeTicks(4242),
            ),
            VarBind::new(
                Oid::new(vec![1, 3, 6, 1, 6, 3, 1, 1, 4, 1, 0]),
                Value::ObjectId(Oid::new(vec![1, 3, 6, 1, 6, 3, 1, 1, 5, 1])),
            ),
            VarBind::new(
                Oid::new(vec![1, 3, 6, 1, 2, 1, 1, 5, 0]),
                Value::OctetString(b"v3-trap-marker".to_vec()),
            ),
        ],
    });
    let mut msg = Vec::new();
    assert!(usm.encode_notification(
        "trapuser",
        SecurityLevel::AuthPriv,
        5,
        trap.clone(),
        &mut msg
    ));
    assert!(!usm.encode_notification("nobody", SecurityLevel::AuthPriv, 5, trap, &mut Vec::new()));
    let sock = UdpSocket::bind("127.0.0.1:0").unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut text = String::new();
    while Instant::now() < deadline {
        // snmptrapd may not be listening yet: resend until it logs.
        sock.send_to(&msg, ("127.0.0.1", port)).unwrap();
        std::thread::sleep(Duration::from_millis(300));
        text.clear();
        if let Ok(mut f) = std::fs::File::open(&log) {
            let _ = f.read_to_string(&mut text);
        }
        if text.contains("v3-trap-marker") {
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    assert!(text.contains("v3-trap-marker"), "snmptrapd log:\n{text}");
    assert!(
        text.contains(".1.3.6.1.6.3.1.1.5.1"),
        "snmptrapd log:\n{text}"
    );
}

fn which(name: &str) -> Result<std::path::PathBuf, ()> {
    let path = std::env::var_os("PATH").ok_or(())?;
    std::env::split_paths(&path)
        .chain([std::path::PathBuf::from("/usr/sbin")])
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .ok_or(())
}

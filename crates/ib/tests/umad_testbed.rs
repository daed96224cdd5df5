//! The testbed itself: ibsim + OpenSM start, answer diags and consoles, and tear down.
use ib_testbed::{Testbed, TestbedConfig, SMALL_NET};

#[test]
fn testbed_starts_answers_and_tears_down() {
    let tb = Testbed::start(TestbedConfig::new(SMALL_NET))
        .unwrap_or_else(|e| panic!("cannot start the ibsim testbed: {e}"));
    let out = tb.run_diag("ibnetdiscover", &[]).unwrap();
    assert!(out.success(), "ibnetdiscover failed: {}", out.stderr);
    assert!(out.stdout.contains("\"Hca4\""), "{}", out.stdout);
    let attached = tb.console("Attached").unwrap();
    assert!(attached.contains("Client"), "{attached}");
    let status = tb.opensm_console("status").unwrap();
    assert!(status.contains("Master"), "{status}");
    let dir = tb.dir().to_path_buf();
    drop(tb);
    assert!(!dir.exists());
}

/// A net file ibsim panics on (one link end enabling 1X only, the other 4X
/// only: "mismatched enabled width") is an error from `start`, never a
/// hang (the teardown once blocked opening the console fifo of a dead ibsim).
#[test]
fn a_net_file_ibsim_panics_on_is_an_error() {
    let net = SMALL_NET.replacen("[1]\t\"Hca1\"[1]", "[1]\t\"Hca1\"[1] w=1", 1);
    let net = net.replacen("[1]\t\"Switch1\"[1]", "[1]\t\"Switch1\"[1] w=2", 1);
    let mut cfg = TestbedConfig::new(&net);
    cfg.up_timeout = std::time::Duration::from_secs(15);
    let r = Testbed::start(cfg);
    assert!(r.is_err(), "ibsim started on {net}");
}

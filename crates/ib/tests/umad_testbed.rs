//! The testbed itself: ibsim + OpenSM start, answer diags and consoles, and tear down.
use ib::testbed::{Testbed, TestbedConfig, SMALL_NET};

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

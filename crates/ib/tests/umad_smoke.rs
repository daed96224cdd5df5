//! Smoke: the libibumad binding and transport talk to ibsim through umad2sim.
use ib::source::umad::ffi::{self, Address};
use ib::source::umad::transport::{Agent, Request, Transport, TransportConfig};
use ib_testbed::{Testbed, TestbedConfig, SMALL_NET};

fn in_child() -> bool {
    std::env::var_os("UMAD_TEST_CHILD").is_some()
}

fn run_child(tb: &Testbed, name: &str) {
    let out = tb
        .command(std::env::current_exe().unwrap())
        .env("UMAD_TEST_CHILD", "1")
        .args(["--exact", name, "--nocapture", "--test-threads=1"])
        .output()
        .unwrap();
    let so = String::from_utf8_lossy(&out.stdout);
    let se = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "child failed:\n{so}\n{se}");
    println!("{so}\n{se}");
}

#[test]
fn smoke_dr_nodeinfo() {
    if !in_child() {
        let tb = Testbed::start(TestbedConfig::new(SMALL_NET))
            .unwrap_or_else(|e| panic!("cannot start the ibsim testbed: {e}"));
        run_child(&tb, "smoke_dr_nodeinfo");
        return;
    }
    let lib = ffi::library().unwrap();
    let names = lib.ca_names().unwrap();
    println!("cas {names:?}");
    let p = lib.resolve(None, None).unwrap();
    println!("port {p:?}");
    let mut t = Transport::open(&p.ca, p.port, TransportConfig::default()).unwrap();
    let mut mad = vec![0u8; 256];
    mad[0] = 1;
    mad[1] = 0x81;
    mad[2] = 1;
    mad[3] = 1; // Get
    mad[16..18].copy_from_slice(&0x0011u16.to_be_bytes());
    mad[32..34].copy_from_slice(&0xffffu16.to_be_bytes());
    mad[34..36].copy_from_slice(&0xffffu16.to_be_bytes());
    let mut reqs = Vec::new();
    for i in 0..1000u32 {
        reqs.push((
            i,
            Request {
                agent: Agent::Smp,
                addr: Address::directed_route(),
                mad: mad.clone(),
            },
        ));
    }
    let t0 = std::time::Instant::now();
    let mut ok = 0;
    t.pipeline(reqs, |_, r| {
        let m = r.unwrap();
        assert_eq!(m[3], 0x81);
        ok += 1;
        Vec::new()
    });
    println!("{ok} in {:?}, stats {:?}", t0.elapsed(), t.stats());
}

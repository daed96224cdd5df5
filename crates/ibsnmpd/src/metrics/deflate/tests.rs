use super::*;
use proptest::prelude::*;
use std::io::Read as _;

/// The raw deflate stream of `pieces`, ended.
fn deflate(pieces: &[&[u8]]) -> Vec<u8> {
    let mut e = Encoder::new();
    let mut out = Vec::new();
    for p in pieces {
        out.extend(e.push(p));
    }
    out.extend(e.end(true));
    out
}

pub(in crate::metrics) fn inflate(z: &[u8]) -> Vec<u8> {
    let mut text = Vec::new();
    flate2::read::DeflateDecoder::new(z)
        .read_to_end(&mut text)
        .expect("a valid deflate stream");
    text
}

#[test]
fn codes_match_rfc1951_tables() {
    assert_eq!(length_code(3), (0, 0, 0));
    assert_eq!(length_code(10), (7, 0, 0));
    assert_eq!(length_code(11), (8, 1, 0));
    assert_eq!(length_code(12), (8, 1, 1));
    assert_eq!(length_code(257), (27, 5, 30));
    assert_eq!(length_code(258), (28, 0, 0));
    for (d, sym) in [
        (1, 0),
        (4, 3),
        (5, 4),
        (7, 5),
        (193, 15),
        (257, 16),
        (32768, 29),
    ] {
        assert_eq!(dist_sym(d), sym, "distance {d}");
    }
    for len in 3..=258 {
        let (sym, n, _) = length_code(len);
        assert_eq!(LENGTH_EXTRA[sym], n, "length {len}");
    }
}

#[test]
fn empty_input_and_empty_pieces() {
    assert_eq!(inflate(&deflate(&[])), b"");
    assert_eq!(inflate(&deflate(&[b"", b"", b""])), b"");
}

/// Exposition-like lines compress several times over, as matches
/// against the line before.
#[test]
fn metric_lines_decode_and_shrink() {
    let mut text = String::new();
    for port in 1..=2000 {
        text.push_str(&format!(
            "infiniband_switch_port_state_id{{guid=\"0x0000000000200{:03x}\",switch=\"edge{:04}\",port=\"{}\",uplink=\"host{:04}\",uplink_port=\"1\"}} {}\n",
            port / 36, port / 36, port % 36 + 1, port, port * 7919 % 1000
        ));
    }
    let z = deflate(&[text.as_bytes()]);
    assert_eq!(inflate(&z), text.as_bytes());
    assert!(z.len() * 5 < text.len(), "{} of {}", z.len(), text.len());
}

/// A line longer than the window, and pieces cut mid-line.
#[test]
fn long_lines_and_cut_pieces() {
    let long = "x\"y".repeat(20_000) + "\n";
    let text = format!("{long}{long}a\"b\"c\n{long}");
    let b = text.as_bytes();
    for cut in [1, 7, 40_000, 60_001, b.len() - 1] {
        let z = deflate(&[&b[..cut], &b[cut..]]);
        assert_eq!(inflate(&z), b);
    }
}

/// A stream ended with a sync flush, then another encoder's final
/// stream: one deflate stream to a decoder.
#[test]
fn sync_flush_then_another_stream() {
    let mut a = Encoder::new();
    let mut z = a.push(b"one \"two\" three\none \"two\" four\n");
    z.extend(a.end(false));
    let mut b = Encoder::new();
    z.extend(b.push(b"five\n"));
    z.extend(b.end(true));
    assert_eq!(inflate(&z), b"one \"two\" three\none \"two\" four\nfive\n");
}

/// Long matches split at 258 without a piece shorter than 3.
#[test]
fn long_equal_lines() {
    for n in [256, 257, 258, 259, 260, 261, 516, 517, 1000] {
        let line = "a".repeat(n) + "\n";
        let text = line.repeat(4);
        assert_eq!(inflate(&deflate(&[text.as_bytes()])), text.as_bytes());
    }
}

/// Few symbols, skewed counts: the code length limits hold.
#[test]
fn skewed_counts_stay_within_limits() {
    let mut f = vec![0u32; 40];
    for (i, x) in f.iter_mut().enumerate() {
        *x = 1 << (i % 31);
    }
    assert!(lengths(&f, 7).iter().all(|&l| l <= 7));
    assert!(lengths(&f, 15).iter().all(|&l| l <= 15));
    assert_eq!(lengths(&[0, 0, 5], 15), vec![1, 0, 1]);
}

/// The cost of an optimal code for these counts: the sum of the merged
/// nodes' counts, merging the two smallest each time.
fn optimal_cost(f: &[u64]) -> u64 {
    use std::cmp::Reverse;
    let mut heap: std::collections::BinaryHeap<_> =
        f.iter().filter(|&&x| x > 0).map(|&x| Reverse(x)).collect();
    let mut cost = 0;
    while let (Some(Reverse(a)), Some(Reverse(b))) = (heap.pop(), heap.pop()) {
        cost += a + b;
        heap.push(Reverse(a + b));
    }
    cost
}

proptest! {
    /// The two-queue build gives a complete code as cheap as the optimal.
    #[test]
    fn huffman_is_complete_and_optimal(f in prop::collection::vec(0u64..1000, 2..300)) {
        let lens = huffman(&f);
        let used = f.iter().filter(|&&x| x > 0).count();
        if used >= 2 {
            let kraft: f64 = lens.iter().filter(|&&l| l > 0).map(|&l| 0.5f64.powi(i32::from(l))).sum();
            prop_assert!((kraft - 1.0).abs() < 1e-9, "{kraft}");
            let cost: u64 = f.iter().zip(&lens).map(|(&x, &l)| x * u64::from(l)).sum();
            prop_assert_eq!(cost, optimal_cost(&f));
            for (&x, &l) in f.iter().zip(&lens) {
                prop_assert_eq!(x == 0, l == 0);
            }
        }
    }
}

fn lines() -> impl Strategy<Value = Vec<u8>> {
    // Text of a few field shapes, so lines share fields and differ in
    // their lengths.
    prop::collection::vec(
        prop::sample::select(vec![
            &b"\""[..],
            b"\n",
            b"name{guid=",
            b"0x1234",
            b"0x12345",
            b",port=",
            b"7",
            b"} 12\n",
            b"aaaaaaaa",
        ]),
        0..400,
    )
    .prop_map(|v| v.concat())
}

proptest! {
    #[test]
    fn any_octets_round_trip(data in prop::collection::vec(any::<u8>(), 0..3000), cut in 0usize..3000) {
        let cut = cut.min(data.len());
        prop_assert_eq!(inflate(&deflate(&[&data[..cut], &data[cut..]])), data);
    }

    #[test]
    fn line_text_round_trips(data in lines(), cuts in prop::collection::vec(0usize..4000, 0..4)) {
        let mut cuts: Vec<usize> = cuts.into_iter().map(|c| c.min(data.len())).collect();
        cuts.sort_unstable();
        let mut pieces = Vec::new();
        let mut at = 0;
        for c in cuts {
            pieces.push(&data[at..c]);
            at = c;
        }
        pieces.push(&data[at..]);
        prop_assert_eq!(inflate(&deflate(&pieces)), data);
    }
}

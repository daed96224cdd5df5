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

fn inflate(z: &[u8]) -> Vec<u8> {
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

/// Sample lines of `labels` (one family, then others after a line of
/// another shape, their names of other lengths), values `values`, coded
/// from their labels' tokens in chunks of `chunk` lines as the renderer
/// hands them over; whether lines were coded from the stream's plan
/// (the labels worked out once, after the codes stay).
fn fused_round_trip(labels: &[String], values: &[u64], chunk: usize) -> bool {
    let mut toks = Vec::new();
    let ranges: Vec<Option<Range<u32>>> = (0..labels.len())
        .map(|i| {
            let start = toks.len() as u32;
            (i > 0 && label_tokens(&labels[i - 1], &labels[i], &mut toks))
                .then_some(start..toks.len() as u32)
        })
        .collect();
    let mut e = Encoder::new();
    let (mut z, mut all) = (Vec::new(), Vec::new());
    let (mut text, mut fused) = (Vec::new(), Vec::new());
    let names = [
        "a_family_total",
        "the_next_one",
        "abc",
        "a_much_longer_family_name_total",
    ];
    for (family, name) in names.iter().enumerate() {
        text.extend_from_slice(b"# TYPE x counter\n");
        let mut prev: Option<(usize, usize)> = None;
        for (i, l) in labels.iter().enumerate() {
            let at = text.len();
            let v = values[(i + family) % values.len()];
            text.extend_from_slice(format!("{name}{{{l}}} {v}\n").as_bytes());
            if let (Some((len, prev_labels)), Some(r)) = (prev, ranges[i].clone()) {
                fused.push(Fused {
                    at,
                    end: text.len(),
                    name: name.len(),
                    labels: l.len(),
                    prev_len: len,
                    prev_labels,
                    toks: r,
                    row: i as u32,
                });
            }
            prev = Some((text.len() - at, l.len()));
            if (i + 1) % chunk == 0 {
                e.push_fused(&text, &fused, &toks, &mut z);
                all.append(&mut text);
                fused.clear();
            }
        }
    }
    e.push_fused(&text, &fused, &toks, &mut z);
    all.append(&mut text);
    let planned = e.plan.as_ref().is_some_and(|p| !p.is_empty());
    z.extend(e.end(true));
    assert_eq!(inflate(&z), all);
    planned
}

#[test]
fn fused_port_lines_round_trip() {
    let labels: Vec<String> = (0..300)
        .map(|p| {
            format!(
                "guid=\"0x0000000000200{:03x}\",switch=\"edge{:04}\",port=\"{}\",uplink=\"host{:04}\",uplink_port=\"1\"",
                p / 36, p / 36, p % 36 + 1, p
            )
        })
        .collect();
    for chunk in [1, 7, 1000] {
        // Past the first blocks, the labels are coded from the plan (a
        // chunk of 1,000 lines makes the whole text one block).
        let planned = fused_round_trip(&labels, &[0, 12345678901234, 7, 42], chunk);
        assert_eq!(planned, chunk < 1000, "chunk {chunk}");
        // Equal values one after another, and values ending alike but
        // of other lengths.
        fused_round_trip(&labels, &[0, 0, 10, 0, 5, 5, 15], chunk);
    }
    // Lines farther apart than the distances read from the per-block
    // table (1,024 octets), more of them than one counted in 8.
    let wide: Vec<String> = (0..40)
        .map(|p| {
            format!(
                "guid=\"0x{p:04x}\",d=\"{}\",port=\"{}\"",
                "d".repeat(1500),
                p % 3
            )
        })
        .collect();
    fused_round_trip(&wide, &[3, 1234567, 0], 1000);
    // Labels too long to be worked out, and longer than the window.
    let long = vec!["x=\"".to_string() + &"y".repeat(40_000) + "\""; 3];
    fused_round_trip(&long, &[1], 2);
}

proptest! {
    #[test]
    fn fused_lines_round_trip(
        labels in prop::collection::vec(lines(), 1..40),
        values in prop::collection::vec(any::<u64>(), 1..5),
        chunk in 1usize..50,
    ) {
        // Labels hold no newline (the exposition escapes it).
        let labels: Vec<String> = labels
            .into_iter()
            .map(|l| String::from_utf8_lossy(&l).replace('\n', "n"))
            .collect();
        fused_round_trip(&labels, &values, chunk);
    }

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

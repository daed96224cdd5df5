//! Sample lines coded from their labels' tokens, some left out of the
//! text: the deflate stream is the whole text's, and so is the CRC.

use std::ops::Range;

use proptest::prelude::*;

use super::Part;
use crate::metrics::crc::Known;
use crate::metrics::deflate::tests::inflate;
use crate::metrics::deflate::{fits, label_tokens, Fused, Source, Tok, Unwritten};

fn source<'a>(text: &'a [u8], toks: &'a [Tok], labels: &'a [u8]) -> Source<'a> {
    Source { text, toks, labels }
}

/// Sample lines of `labels` (one family, then others after a line of
/// another shape, their names of other lengths), values `values`, coded
/// from their labels' tokens in chunks of `chunk` lines as the renderer
/// hands them over, the `n`th line left out of the text when `left(n)`
/// (as gzip scrapes leave out most); whether lines were coded from the
/// stream's plan (the labels worked out once, after the codes stay).
/// The gzip part's CRC is the whole text's too.
fn fused_round_trip(
    labels: &[String],
    values: &[u64],
    chunk: usize,
    left: impl Fn(usize) -> bool,
) -> bool {
    let mut toks = Vec::new();
    let ranges: Vec<Option<Range<u32>>> = (0..labels.len())
        .map(|i| {
            let start = toks.len() as u32;
            (i > 0 && label_tokens(&labels[i - 1], &labels[i], &mut toks))
                .then_some(start..toks.len() as u32)
        })
        .collect();
    // Every row's `{labels} `, back to back, as the rows keep them.
    let mut braced = Vec::new();
    let spans: Vec<(usize, Known)> = labels
        .iter()
        .map(|l| {
            let at = braced.len();
            braced.extend_from_slice(format!("{{{l}}} ").as_bytes());
            (at, Known::of(&braced[at..]))
        })
        .collect();
    let mut part = Part::new();
    let (mut z, mut all) = (Vec::new(), Vec::new());
    let (mut text, mut fused) = (Vec::new(), Vec::new());
    let names = [
        "a_family_total",
        "the_next_one",
        "abc",
        "a_much_longer_family_name_total",
    ];
    let mut n = 0;
    for (family, name) in names.iter().enumerate() {
        text.extend_from_slice(b"# TYPE x counter\n");
        all.extend_from_slice(b"# TYPE x counter\n");
        let mut prev: Option<(usize, usize)> = None;
        for (i, l) in labels.iter().enumerate() {
            let at = text.len();
            let value = values[(i + family) % values.len()];
            let line = format!("{name}{{{l}}} {value}\n");
            all.extend_from_slice(line.as_bytes());
            let (b, known) = spans[i];
            match (prev, ranges[i].clone()) {
                (Some((prev_len, prev_labels)), Some(toks)) => {
                    let out = left(n) && fits(name.len(), prev_len, l.len());
                    if !out {
                        text.extend_from_slice(line.as_bytes());
                    }
                    fused.push(Fused {
                        at,
                        end: text.len(),
                        len: line.len(),
                        name: name.len(),
                        labels: l.len(),
                        prev_len,
                        prev_labels,
                        toks,
                        row: i as u32,
                        braced: b,
                        unwritten: out.then_some(Unwritten {
                            value,
                            name: Known::of(name.as_bytes()),
                            labels: known,
                        }),
                    });
                    n += 1;
                }
                _ => text.extend_from_slice(line.as_bytes()),
            }
            prev = Some((line.len(), l.len()));
            if (i + 1) % chunk == 0 {
                part.push_fused(source(&text, &toks, &braced), &fused, &mut z);
                text.clear();
                fused.clear();
            }
        }
    }
    part.push_fused(source(&text, &toks, &braced), &fused, &mut z);
    let planned = part.encoder().planned();
    let (tail, crc) = part.end(true);
    z.extend(tail);
    assert_eq!(inflate(&z), all);
    assert_eq!(crc.total_len(), all.len() as u64);
    assert_eq!(crc.finalize(), crc32fast::hash(&all));
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
        let planned = fused_round_trip(&labels, &[0, 12345678901234, 7, 42], chunk, |_| false);
        assert_eq!(planned, chunk < 1000, "chunk {chunk}");
        // Equal values one after another, and values ending alike but
        // of other lengths.
        fused_round_trip(&labels, &[0, 0, 10, 0, 5, 5, 15], chunk, |_| false);
        // Lines left out of the text: all, or some here and there.
        for left in [|_| true, |n| n % 3 != 1, |n| n % 50 < 25] {
            let planned = fused_round_trip(&labels, &[0, 12345678901234, 7], chunk, left);
            assert_eq!(planned, chunk < 1000, "chunk {chunk}");
        }
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
    fused_round_trip(&wide, &[3, 1234567, 0], 1000, |_| false);
    fused_round_trip(&wide, &[3, 1234567, 0], 7, |n| n % 2 == 0);
    // Labels too long to be worked out, and longer than the window.
    let long = vec!["x=\"".to_string() + &"y".repeat(40_000) + "\""; 3];
    fused_round_trip(&long, &[1], 2, |_| true);
}

proptest! {
    #[test]
    fn fused_lines_round_trip(
        labels in prop::collection::vec("[a-z0-9\"=,{} ]{0,60}", 1..40),
        values in prop::collection::vec(any::<u64>(), 1..5),
        chunk in 1usize..50,
        left in any::<u64>(),
    ) {
        // Which lines are left out of the text: the bits of `left`.
        fused_round_trip(&labels, &values, chunk, |n| left >> (n % 64) & 1 != 0);
    }
}

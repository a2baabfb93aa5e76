//! Compiling: the split compile is the one-worker compile; identities; diagnostics.

use super::identity::identity_hash;
use super::*;
use crate::text::mix;
use ccv3::Entry;

#[test]
fn two_thread_compile_is_the_one_thread_compile() {
    // Keys and regexes met in both halves, in one only, case-sensitive ones, invalid and
    // refused regexes, decorators with extra keys and problems, duplicate entries.
    let mut entries = Vec::new();
    for i in 0..600 {
        let k = |n: usize| format!("Key{}", n % 97);
        let mut e = ccv3::Entry::new(&[&k(i), &k(i * 7 + 3), "shared"], &format!("c{}", i % 50));
        match i % 6 {
            0 => e.keys.push(format!("/w{}+/i", i % 13)),
            1 => e.keys.push("/(a+)+$/".into()),
            2 => e.keys.push("/[unclosed/".into()),
            3 => e.case_sensitive = Some(true),
            4 => e.content = format!("@@additional_keys extra{}\n@@bogus x\nbody {i}", i % 5),
            _ => e.secondary_keys = Some(vec![k(i + 1), "second".into()]),
        }
        entries.push(e);
    }
    let book = ccv3::Lorebook {
        entries,
        ..Default::default()
    };
    let input = [BookInput {
        book: &book,
        kind: BookKind::Global,
        name: "b".into(),
        world_info: false,
    }];
    let c = LorebookCompiler::new();
    let one = c.compile_with(&input, false);
    let two = c.compile_with(&input, true);
    let facts = |cb: &CompiledBooks| {
        format!(
            "{:?}",
            (
                &cb.keys,
                &cb.key_text,
                &cb.patterns,
                &cb.diagnostics,
                &cb.entries,
                &cb.fan,
                &cb.fan_off,
                &cb.always,
                cb.regexes
                    .iter()
                    .map(|r| (&r.lits, r.engine.is_ok()))
                    .collect::<Vec<_>>(),
                cb.max_depth,
            )
        )
    };
    assert_eq!(facts(&one), facts(&two));
}

/// The identity: [`identity_hash`] of every field, xor the count of earlier entries of the
/// book with the same hash, mixed.
fn reference_ids(name: &str, book: &Lorebook) -> Vec<u64> {
    let mut dup: std::collections::HashMap<u64, u64> = Default::default();
    let seed = Fnv::new().str(name).0;
    book.entries
        .iter()
        .map(|e| {
            let h = identity_hash(e, seed);
            let n = dup.entry(h).or_insert(0);
            let id = mix(h ^ *n);
            *n += 1;
            id
        })
        .collect()
}

#[test]
fn entry_ids_are_stable_and_count_duplicates_in_book_order() {
    let mut book = Lorebook::default();
    for (keys, content) in [
        (&["a", "b"][..], "x"),
        (&["a"][..], "x"),
        (&["a", "b"][..], "x"),
        (&["c"][..], "y"),
        (&["a", "b"][..], "x"),
        (&["a"][..], "x"),
    ] {
        book.entries.push(Entry::new(keys, content));
    }
    book.entries[1].secondary_keys = Some(vec!["b".into()]);
    let c = LorebookCompiler::new().compile(&[BookInput {
        book: &book,
        kind: BookKind::Global,
        name: "w".into(),
        world_info: false,
    }]);
    let want = reference_ids("w", &book);
    let mut got = vec![0u64; book.entries.len()];
    for e in &c.entries {
        got[e.at.index] = c.id(e);
    }
    assert_eq!(got, want);
    for (rank, e) in c.entries.iter().enumerate() {
        assert_eq!(c.by_id().get(&c.id(e)), Some(&(rank as u32)));
    }
}

#[test]
fn entry_ids_count_duplicates_across_books_and_compile_halves() {
    // Two books (the same entries in each, duplicates in both halves of a two-thread
    // compile): counts restart per book and follow book order.
    let mut book = Lorebook::default();
    for i in 0..3000 {
        let n = if i % 7 == 0 { 0 } else { i };
        book.entries
            .push(Entry::new(&["k"], &format!("content {n}")));
    }
    let books = [("one", &book), ("two", &book)].map(|(name, book)| BookInput {
        book,
        kind: BookKind::Global,
        name: name.into(),
        world_info: false,
    });
    let c = LorebookCompiler::new();
    for two_threads in [false, true] {
        let compiled = c.compile_with(&books, two_threads);
        for (bi, (name, _)) in [("one", 0), ("two", 1)].iter().enumerate() {
            let want = reference_ids(name, &book);
            let mut got = vec![0u64; book.entries.len()];
            for e in compiled.entries.iter().filter(|e| e.at.book == bi) {
                got[e.at.index] = compiled.id(e);
            }
            assert_eq!(got, want, "book {name}, two threads: {two_threads}");
        }
    }
}

#[test]
fn diagnostics_keep_book_order_and_invalid_regex_keys_never_match() {
    let mut book = Lorebook::default();
    book.entries
        .push(Entry::new(&["a"], "@@nonsense_decorator\nA"));
    book.entries
        .push(Entry::new(&["/(unclosed/i", "/ok+/"], "B"));
    book.entries
        .push(Entry::new(&["/(unclosed/i"], "@@other_nonsense\nC"));
    let c = LorebookCompiler::new().compile(&[BookInput {
        book: &book,
        kind: BookKind::Global,
        name: "w".into(),
        world_info: false,
    }]);
    let codes: Vec<(&str, &str)> = c
        .diagnostics()
        .iter()
        .map(|d| (d.code.as_str(), d.path.as_str()))
        .collect();
    assert_eq!(
        codes,
        [
            ("lore-decorator", "w: entries[0].content"),
            ("lore-regex-invalid", "w: entries[1].keys[0]"),
            ("lore-decorator", "w: entries[2].content"),
        ]
    );
    let kinds: Vec<bool> = c
        .keys
        .iter()
        .map(|k| matches!(k, KeyKind::Invalid))
        .collect();
    assert_eq!(kinds, [false, true, false, true]);
}

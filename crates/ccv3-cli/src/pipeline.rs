//! Work on many files on every core, with the results handed back in input order as soon as
//! they are ready (issue 16: `validate`, `convert` and `index` of folders).
//!
//! One thread pulls the inputs (a lazy walk) and hands them to the workers; the calling thread
//! receives the results and gives them to a sink in input order. At most [`WINDOW`] inputs are
//! between the walk and the sink at any time, so memory does not grow with the number of inputs,
//! and a slow file holds up the output but not the workers for more than the window.

use crate::walk::{Item, Walk};
use indicatif::{ProgressBar, ProgressStyle};
use std::collections::BTreeMap;
use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Mutex;

/// The most inputs taken from the walk and not yet given to the sink.
pub const WINDOW: usize = 512;

/// Inputs are handed to the workers in batches of this many: one hand-off (and one thread
/// wake-up) per file costs more than reading a small card does.
pub const BATCH: usize = 32;

/// How many workers: one per core the process may use.
pub fn workers() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get().clamp(1, 64))
}

/// Walks `paths` ([`crate::walk`]: folders recursively, in path order), runs `work` on every
/// file found (or path that could not be read) on every core, and `sink` on each result in
/// walk order on the calling thread: the folder commands' (`validate`, `index`, `convert`) one
/// way through an archive. Each worker keeps one [`ccv3::ReadScratch`] for the files it reads
/// (handed to `work`). Stops early with the sink's error.
pub fn each_file<R, E>(
    paths: &[PathBuf],
    work: impl Fn(&mut ccv3::ReadScratch, Item) -> R + Sync,
    sink: impl FnMut(R) -> Result<(), E>,
) -> Result<(), E>
where
    R: Send,
{
    ordered(Walk::new(paths), workers(), work, sink)
}

/// The progress line of a folder command on stderr (`template` in `indicatif`'s syntax, such
/// as `"{spinner} {pos} files read {elapsed}"`), drawn only when stderr is a terminal.
pub fn spinner(template: &str) -> ProgressBar {
    if !std::io::stderr().is_terminal() {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new_spinner();
    if let Ok(style) = ProgressStyle::with_template(template) {
        bar.set_style(style);
    }
    bar
}

/// Runs `work` on every input of `inputs` on `threads` workers, and `sink` on each result in
/// input order on the calling thread. Each worker keeps its own `S` (made with `S::default()`)
/// from one input to the next and hands it to `work`. Stops early (the workers finish the
/// inputs they hold) when `sink` fails, and returns its error.
pub fn ordered<I, T, S, R, E>(
    inputs: I,
    threads: usize,
    work: impl Fn(&mut S, T) -> R + Sync,
    mut sink: impl FnMut(R) -> Result<(), E>,
) -> Result<(), E>
where
    I: Iterator<Item = T> + Send,
    T: Send,
    S: Default,
    R: Send,
{
    let threads = threads.max(1);
    let (job_tx, job_rx) = mpsc::sync_channel::<(u64, Vec<T>)>(threads * 2);
    let job_rx = Mutex::new(job_rx);
    let (res_tx, res_rx) = mpsc::channel::<(u64, Vec<R>)>();
    // One token per batch in flight: the feeder takes one per batch, the sink gives one back
    // per batch it consumed.
    let batches = WINDOW / BATCH;
    let (tok_tx, tok_rx) = mpsc::sync_channel::<()>(batches);
    for _ in 0..batches {
        let _ = tok_tx.send(());
    }
    // Set when the sink failed: the feeder stops, the workers drain what is queued unworked.
    let stop = AtomicBool::new(false);
    let (work, job_rx, stop) = (&work, &job_rx, &stop);
    std::thread::scope(|scope| {
        scope.spawn(move || {
            let mut inputs = inputs.peekable();
            for i in 0u64.. {
                if inputs.peek().is_none() || stop.load(Ordering::Relaxed) || tok_rx.recv().is_err()
                {
                    return;
                }
                let batch: Vec<T> = inputs.by_ref().take(BATCH).collect();
                if job_tx.send((i, batch)).is_err() {
                    return;
                }
            }
        });
        for _ in 0..threads {
            let res_tx = res_tx.clone();
            scope.spawn(move || {
                let mut state = S::default();
                loop {
                    let job = match job_rx.lock() {
                        Ok(rx) => rx.recv(),
                        Err(_) => return,
                    };
                    let Ok((i, batch)) = job else { return };
                    if stop.load(Ordering::Relaxed) {
                        continue;
                    }
                    let results: Vec<R> = batch.into_iter().map(|t| work(&mut state, t)).collect();
                    if res_tx.send((i, results)).is_err() {
                        return;
                    }
                }
            });
        }
        drop(res_tx);
        let mut next = 0u64;
        let mut waiting: BTreeMap<u64, Vec<R>> = BTreeMap::new();
        let mut result = Ok(());
        'outer: for (i, r) in res_rx.iter() {
            waiting.insert(i, r);
            while let Some(batch) = waiting.remove(&next) {
                next += 1;
                for r in batch {
                    if let Err(e) = sink(r) {
                        result = Err(e);
                        break 'outer;
                    }
                }
                let _ = tok_tx.send(());
            }
        }
        if result.is_err() {
            // Stop the feeder (also when it waits for a token) and let the workers drain.
            stop.store(true, Ordering::Relaxed);
            drop(tok_tx);
            for _ in res_rx.iter() {}
        }
        result
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Results come back in input order whatever order the workers finish in.
    #[test]
    fn results_in_input_order() {
        let mut got = Vec::new();
        let r: Result<(), ()> = ordered(
            0..2_000u32,
            3,
            |_: &mut (), i| {
                if i % 7 == 0 {
                    std::thread::yield_now();
                }
                i * 2
            },
            |r| {
                got.push(r);
                Ok(())
            },
        );
        assert!(r.is_ok());
        assert_eq!(got, (0..2_000u32).map(|i| i * 2).collect::<Vec<_>>());
    }

    /// Each worker keeps its state from one input to the next: the counts of the inputs each
    /// worker saw add up to all of them.
    #[test]
    fn each_worker_keeps_its_state() {
        let mut got = Vec::new();
        let r: Result<(), ()> = ordered(
            0..500u32,
            2,
            |seen: &mut u32, i| {
                *seen += 1;
                (i, *seen)
            },
            |r| {
                got.push(r);
                Ok(())
            },
        );
        assert!(r.is_ok());
        assert_eq!(got.len(), 500);
        // A worker's count only grows, so some worker saw at least half the inputs.
        assert!(got.iter().map(|&(_, n)| n).max().unwrap() >= 250);
    }

    /// A failing sink stops the run early with its error.
    #[test]
    fn a_failing_sink_stops_early() {
        let mut seen = 0;
        let r = ordered(
            0..1_000_000u64,
            2,
            |_: &mut (), i| i,
            |_| {
                seen += 1;
                if seen == 10 {
                    Err("stop")
                } else {
                    Ok(())
                }
            },
        );
        assert_eq!(r, Err("stop"));
        assert_eq!(seen, 10);
    }
}

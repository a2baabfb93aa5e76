//! Work shared with a second thread, when the caller asks for threads
//! ([`LorebookCompiler::threads`](crate::LorebookCompiler::threads),
//! [`ScanOptions::threads`](crate::ScanOptions::threads)) and the `parallel` feature is on.
//!
//! Otherwise the library starts no thread: [`both`] runs the two halves one after the other on
//! the calling thread, and every caller gets the same results either way.

/// Runs `here` on this thread and `other` beside it: on a second thread named `name` when the
/// caller asks for `threads` (after `here` on this thread when no thread can be had), else on
/// this thread before `here`. A panic in `other` is resumed on this thread.
#[cfg(feature = "parallel")]
pub(crate) fn both<A, B: Send>(
    threads: bool,
    name: &str,
    here: impl FnOnce() -> A,
    other: impl Fn() -> B + Sync,
) -> (A, B) {
    if !threads {
        let b = other();
        return (here(), b);
    }
    std::thread::scope(|scope| {
        let worker = std::thread::Builder::new()
            .name(name.into())
            .spawn_scoped(scope, &other)
            .ok();
        let a = here();
        let b = match worker.map(|w| w.join()) {
            Some(Ok(b)) => b,
            Some(Err(e)) => std::panic::resume_unwind(e),
            // No second thread: this one does the other half too.
            None => other(),
        };
        (a, b)
    })
}

/// Runs `other` and then `here` on the calling thread (built without the `parallel` feature).
#[cfg(not(feature = "parallel"))]
pub(crate) fn both<A, B: Send>(
    _threads: bool,
    _name: &str,
    here: impl FnOnce() -> A,
    other: impl Fn() -> B + Sync,
) -> (A, B) {
    let b = other();
    (here(), b)
}

#[cfg(test)]
mod tests {
    use super::both;

    #[test]
    fn both_halves_run_once_and_return_in_place() {
        let calls = std::sync::atomic::AtomicUsize::new(0);
        let (a, b) = both(
            true,
            "test",
            || {
                calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                "here"
            },
            || {
                calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                42
            },
        );
        assert_eq!((a, b), ("here", 42));
        assert_eq!(calls.into_inner(), 2);
    }
}

//! Runs the `ccv3` binary on one hostile input and measures what the contract bounds: wall time,
//! peak memory (the child's `ru_maxrss`), exit status, stderr, and the files it left.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// One child at a time: the cases measure peak memory and wall time, and some inputs would take
/// gigabytes if a bound were missing; running them side by side would blur both.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// What one run of the binary did.
#[derive(Debug)]
pub struct Outcome {
    /// Exit code, if the process exited (not killed by a signal).
    pub code: Option<i32>,
    /// The signal that ended it, if any (ours after the time limit, or its own abort).
    pub signal: Option<i32>,
    /// Killed by us after the time limit.
    pub timed_out: bool,
    pub elapsed: Duration,
    /// Peak resident set size in bytes.
    pub peak_rss: u64,
    /// The first MiB of stdout, and its full length.
    pub stdout: Vec<u8>,
    pub stdout_len: u64,
    pub stderr: String,
}

/// Runs `bin args...` in `cwd`, killing it after `limit`.
pub fn run(bin: &Path, args: &[OsString], cwd: &Path, limit: Duration) -> Outcome {
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let out_path = cwd.join(".stdout");
    let err_path = cwd.join(".stderr");
    let stdout = std::fs::File::create(&out_path).expect("stdout file");
    let stderr = std::fs::File::create(&err_path).expect("stderr file");
    let start = Instant::now();
    let mut command = Command::new(bin);
    // A safety net for the machine, well above the 1 GiB the contract allows: a missing bound
    // ends in a failed allocation instead of eating the machine's memory.
    // SAFETY: only async-signal-safe calls between fork and exec.
    unsafe {
        use std::os::unix::process::CommandExt;
        command.pre_exec(|| {
            let cap = libc::rlimit {
                rlim_cur: 6 << 30,
                rlim_max: 6 << 30,
            };
            libc::setrlimit(libc::RLIMIT_AS, &cap);
            Ok(())
        });
    }
    let child = command
        .args(args)
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(stdout)
        .stderr(stderr)
        .env("RUST_BACKTRACE", "1")
        .spawn()
        .expect("spawn ccv3");
    let pid = child.id() as libc::pid_t;
    let mut status: libc::c_int = 0;
    // SAFETY: `rusage` is plain data; wait4 fills it.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let mut timed_out = false;
    // Peak memory is the child's own high-water mark (`VmHWM`), read while it runs: `ru_maxrss`
    // would include the test process's memory at fork, which survives `exec`.
    let status_path = format!("/proc/{pid}/status");
    let mut peak_kib = 0u64;
    loop {
        if let Some(hwm) = vm_hwm_kib(&status_path) {
            peak_kib = peak_kib.max(hwm);
        }
        // SAFETY: waiting on our own child with valid out-pointers.
        let r = unsafe { libc::wait4(pid, &mut status, libc::WNOHANG, &mut usage) };
        if r == pid {
            break;
        }
        if r < 0 {
            panic!("wait4 failed: {}", std::io::Error::last_os_error());
        }
        if start.elapsed() > limit {
            timed_out = true;
            // SAFETY: signalling our own child, then reaping it.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::wait4(pid, &mut status, 0, &mut usage);
            }
            break;
        }
        std::thread::sleep(Duration::from_millis(2));
    }
    let elapsed = start.elapsed();
    drop(child);
    let (code, signal) = if libc::WIFEXITED(status) {
        (Some(libc::WEXITSTATUS(status)), None)
    } else if libc::WIFSIGNALED(status) {
        (None, Some(libc::WTERMSIG(status)))
    } else {
        (None, None)
    };
    let stdout_len = std::fs::metadata(&out_path).map(|m| m.len()).unwrap_or(0);
    let stdout = read_head(&out_path, 1 << 20);
    let stderr = String::from_utf8_lossy(&read_head(&err_path, 1 << 20)).into_owned();
    let _ = std::fs::remove_file(&out_path);
    let _ = std::fs::remove_file(&err_path);
    Outcome {
        code,
        signal,
        timed_out,
        elapsed,
        peak_rss: peak_kib * 1024,
        stdout,
        stdout_len,
        stderr,
    }
}

/// `VmHWM` from `/proc/PID/status`, in KiB.
fn vm_hwm_kib(path: &str) -> Option<u64> {
    let s = std::fs::read_to_string(path).ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

fn read_head(path: &Path, max: u64) -> Vec<u8> {
    use std::io::Read;
    let mut buf = Vec::new();
    if let Ok(f) = std::fs::File::open(path) {
        let _ = f.take(max).read_to_end(&mut buf);
    }
    buf
}

/// Every path under `root` (files, folders, links), relative, sorted; links are not followed.
pub fn listing(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    walk(root, root, &mut out);
    out.sort();
    out
}

fn walk(root: &Path, dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let p = e.path();
        out.push(p.strip_prefix(root).unwrap_or(&p).to_path_buf());
        if e.file_type().map(|t| t.is_dir()).unwrap_or(false) {
            walk(root, &p, out);
        }
    }
}

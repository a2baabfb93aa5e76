//! The clock: the CLI passes "now" to the libraries (which never read the system clock), and
//! `--now` overrides it.

use ccv3_cbs::Timestamp;

/// The system clock, in UTC (unix seconds; 0 if the clock is before 1970).
pub fn clock() -> Timestamp {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX))
        .unwrap_or(0);
    Timestamp::utc(secs)
}

/// Reads `--now` ([`Timestamp::parse`]: RFC 3339 or unix seconds).
pub fn parse_now(s: &str) -> Result<Timestamp, String> {
    Timestamp::parse(s)
}

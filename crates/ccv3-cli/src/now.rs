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

/// Reads `--now`: unix seconds (`1795273620`, `-5`), or an RFC 3339 date-time
/// (`2026-11-25T13:00:00Z`, `2026-11-25 13:00:00.5+02:00`; `t`/`z` in either case, fractions
/// of a second dropped). An offset becomes the local offset of the local-time macros.
pub fn parse_now(s: &str) -> Result<Timestamp, String> {
    let s = s.trim();
    if let Ok(unix) = s.parse::<i64>() {
        return Ok(Timestamp::utc(unix));
    }
    rfc3339(s).ok_or_else(|| {
        format!("{s:?} is neither unix seconds nor an RFC 3339 date-time like 2026-11-25T13:00:00Z")
    })
}

fn rfc3339(s: &str) -> Option<Timestamp> {
    let b = s.as_bytes();
    let num = |from: usize, len: usize| -> Option<i64> {
        let part = b.get(from..from + len)?;
        part.iter().all(u8::is_ascii_digit).then_some(())?;
        std::str::from_utf8(part).ok()?.parse().ok()
    };
    let sep = |at: usize, c: &[u8]| b.get(at).is_some_and(|x| c.contains(x));
    if !(sep(4, b"-") && sep(7, b"-") && sep(10, b"Tt ") && sep(13, b":") && sep(16, b":")) {
        return None;
    }
    let (year, month, day) = (num(0, 4)?, num(5, 2)?, num(8, 2)?);
    let (hour, minute, second) = (num(11, 2)?, num(14, 2)?, num(17, 2)?);
    let leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    let days_in_month = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return None,
    };
    // Second 60 is a leap second: it is read as the next second, as most clocks do.
    if day < 1 || day > days_in_month || hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    let mut at = 19;
    if sep(at, b".") {
        at += 1;
        let start = at;
        while b.get(at).is_some_and(u8::is_ascii_digit) {
            at += 1;
        }
        if at == start {
            return None;
        }
    }
    let offset_minutes: i64 = match b.get(at)? {
        b'Z' | b'z' if at + 1 == b.len() => 0,
        sign @ (b'+' | b'-') if at + 6 == b.len() && sep(at + 3, b":") => {
            let (h, m) = (num(at + 1, 2)?, num(at + 4, 2)?);
            if h > 23 || m > 59 {
                return None;
            }
            let minutes = h * 60 + m;
            if *sign == b'-' {
                -minutes
            } else {
                minutes
            }
        }
        _ => return None,
    };
    let local = days_from_civil(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second;
    let unix = local - offset_minutes * 60;
    Some(Timestamp::utc(unix).with_offset(i32::try_from(offset_minutes).ok()?))
}

/// Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's `days_from_civil`).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn now_reads_unix_seconds_and_rfc3339() {
        assert_eq!(parse_now("1795273620"), Ok(Timestamp::utc(1_795_273_620)));
        assert_eq!(parse_now("-1"), Ok(Timestamp::utc(-1)));
        assert_eq!(parse_now("1970-01-01T00:00:00Z"), Ok(Timestamp::utc(0)));
        // 2026-11-25T13:00:00Z = 1795611600.
        assert_eq!(
            parse_now("2026-11-25T13:00:00Z"),
            Ok(Timestamp::utc(1_795_611_600))
        );
        assert_eq!(
            parse_now("2026-11-25T15:00:00+02:00"),
            Ok(Timestamp::utc(1_795_611_600).with_offset(120))
        );
        assert_eq!(
            parse_now("2026-11-25 08:30:00.25-04:30"),
            Ok(Timestamp::utc(1_795_611_600).with_offset(-270))
        );
        assert_eq!(
            parse_now("2000-02-29t00:00:00z"),
            Ok(Timestamp::utc(951_782_400))
        );
    }

    #[test]
    fn now_rejects_what_is_not_a_time() {
        for bad in [
            "",
            "now",
            "2026-11-25",
            "2026-11-25T13:00:00",
            "2026-13-01T00:00:00Z",
            "2026-02-29T00:00:00Z",
            "2026-11-25T24:00:00Z",
            "2026-11-25T13:00:00+2:00",
            "2026-11-25T13:00:00.Z",
            "2026-11-25T13:00:00Zjunk",
            "２026-11-25T13:00:00Z",
        ] {
            assert!(parse_now(bad).is_err(), "{bad:?}");
        }
    }
}

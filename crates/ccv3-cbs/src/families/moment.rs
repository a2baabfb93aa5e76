//! moment.js date formats and parsing (English locale), as SillyTavern's time macros use them
//! (`{{datetimeformat::...}}`, `{{timeDiff::...}}`). Written from moment.js's documentation
//! (<https://momentjs.com/docs/#/displaying/format/>); reading dates is [`super::moment_parse`].
//!
//! Tokens: `YYYY YY Y Q M Mo MM MMM MMMM D Do DD DDD DDDo DDDD d do dd ddd dddd e E w wo ww W
//! Wo WW gg gggg GG GGGG H HH h hh k kk m mm s ss S... a A Z ZZ X x N...`, the long formats
//! `LT LTS L LL LLL LLLL l ll lll llll`, `[literal text]` and `\x`. Anything else is itself.

use crate::context::Timestamp;

use super::time::{civil, is_leap, Civil, MONTHS, WEEKDAYS};

/// The long date formats of moment's English locale.
fn long_format(token: &str) -> Option<&'static str> {
    Some(match token {
        "LTS" => "h:mm:ss A",
        "LT" => "h:mm A",
        "L" => "MM/DD/YYYY",
        "LL" => "MMMM D, YYYY",
        "LLL" => "MMMM D, YYYY h:mm A",
        "LLLL" => "dddd, MMMM D, YYYY h:mm A",
        "l" => "M/D/YYYY",
        "ll" => "MMM D, YYYY",
        "lll" => "MMM D, YYYY h:mm A",
        "llll" => "ddd, MMM D, YYYY h:mm A",
        _ => return None,
    })
}

/// Formatting tokens, longest first where one is the prefix of another.
const TOKENS: &[&str] = &[
    "YYYYYY", "YYYYY", "YYYY", "YY", "Y", "Qo", "Q", "MMMM", "MMM", "MM", "Mo", "M", "DDDD",
    "DDDo", "DDD", "DD", "Do", "D", "dddd", "ddd", "dd", "do", "d", "e", "E", "wo", "ww", "w",
    "Wo", "WW", "W", "gggg", "gg", "GGGG", "GG", "HH", "H", "hh", "h", "kk", "k", "mm", "m", "ss",
    "s", "NNNNN", "NNNN", "NNN", "NN", "N", "ZZ", "Z", "a", "A", "X", "x",
];

fn ordinal(n: i64) -> String {
    let suffix = match (n % 100, n % 10) {
        (11..=13, _) => "th",
        (_, 1) => "st",
        (_, 2) => "nd",
        (_, 3) => "rd",
        _ => "th",
    };
    format!("{n}{suffix}")
}

pub(crate) fn days_in_year(y: i64) -> i64 {
    if is_leap(y) {
        366
    } else {
        365
    }
}

/// Days since 1970-01-01 of a civil date (the inverse of the calendar in [`super::time`]).
pub(crate) fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let mp = i64::from((m + 9) % 12);
    let doy = (153 * mp + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn day_of_year(t: &Civil) -> i64 {
    i64::from(super::time::day_of_year(t.year, t.month, t.day))
}

/// moment's `firstWeekOffset`: where week 1 of `year` starts, relative to January 1st.
pub(crate) fn first_week_offset(year: i64, dow: i64, doy: i64) -> i64 {
    let fwd = 7 + dow - doy;
    let weekday = (days_from_civil(year, 1, 1) + fwd - 1 + 4).rem_euclid(7);
    let fwdlw = (7 + weekday - dow).rem_euclid(7);
    -fwdlw + fwd - 1
}

pub(crate) fn weeks_in_year(year: i64, dow: i64, doy: i64) -> i64 {
    let off = first_week_offset(year, dow, doy);
    let next = first_week_offset(year + 1, dow, doy);
    (days_in_year(year) - off + next) / 7
}

/// (week, week-year) with weeks starting on `dow` and week 1 holding January `7 + dow - doy`
/// (ISO: 1, 4; moment's English locale: 0, 6).
fn week_of_year(t: &Civil, dow: i64, doy: i64) -> (i64, i64) {
    let off = first_week_offset(t.year, dow, doy);
    let week = (day_of_year(t) - off - 1).div_euclid(7) + 1;
    if week < 1 {
        let y = t.year - 1;
        (week + weeks_in_year(y, dow, doy), y)
    } else if week > weeks_in_year(t.year, dow, doy) {
        (week - weeks_in_year(t.year, dow, doy), t.year + 1)
    } else {
        (week, t.year)
    }
}

fn pad(n: i64, width: usize) -> String {
    if n < 0 {
        format!("-{:0width$}", n.unsigned_abs())
    } else {
        format!("{n:0width$}")
    }
}

fn offset(minutes: i32, colon: bool) -> String {
    let sign = if minutes < 0 { '-' } else { '+' };
    let m = minutes.unsigned_abs();
    let sep = if colon { ":" } else { "" };
    format!("{sign}{:02}{sep}{:02}", m / 60, m % 60)
}

fn token_value(token: &str, t: &Civil, ts: Timestamp) -> String {
    let month = MONTHS
        .get((t.month as usize).saturating_sub(1))
        .copied()
        .unwrap_or_default();
    let weekday = WEEKDAYS.get(t.weekday).copied().unwrap_or_default();
    let h12 = match t.hour % 12 {
        0 => 12,
        h => h,
    };
    let wd = t.weekday as i64;
    match token {
        "YYYYYY" | "YYYYY" => {
            let width = token.len();
            let sign = if t.year < 0 { "-" } else { "+" };
            format!("{sign}{:0width$}", t.year.unsigned_abs())
        }
        "YYYY" if t.year > 9999 => format!("+{}", t.year),
        "YYYY" => pad(t.year, 4),
        "YY" => format!("{:02}", t.year.rem_euclid(100)),
        "Y" if t.year > 9999 => format!("+{}", t.year),
        "Y" => t.year.to_string(),
        "Q" => t.month.div_ceil(3).to_string(),
        "Qo" => ordinal(i64::from(t.month.div_ceil(3))),
        "M" => t.month.to_string(),
        "Mo" => ordinal(i64::from(t.month)),
        "MM" => format!("{:02}", t.month),
        "MMM" => month.get(..3).unwrap_or_default().to_owned(),
        "MMMM" => month.to_owned(),
        "D" => t.day.to_string(),
        "Do" => ordinal(i64::from(t.day)),
        "DD" => format!("{:02}", t.day),
        "DDD" => day_of_year(t).to_string(),
        "DDDo" => ordinal(day_of_year(t)),
        "DDDD" => format!("{:03}", day_of_year(t)),
        "d" | "e" => wd.to_string(),
        "do" => ordinal(wd),
        "dd" => weekday.get(..2).unwrap_or_default().to_owned(),
        "ddd" => weekday.get(..3).unwrap_or_default().to_owned(),
        "dddd" => weekday.to_owned(),
        "E" => (if wd == 0 { 7 } else { wd }).to_string(),
        "w" => week_of_year(t, 0, 6).0.to_string(),
        "wo" => ordinal(week_of_year(t, 0, 6).0),
        "ww" => format!("{:02}", week_of_year(t, 0, 6).0),
        "W" => week_of_year(t, 1, 4).0.to_string(),
        "Wo" => ordinal(week_of_year(t, 1, 4).0),
        "WW" => format!("{:02}", week_of_year(t, 1, 4).0),
        "gg" => format!("{:02}", week_of_year(t, 0, 6).1.rem_euclid(100)),
        "gggg" => pad(week_of_year(t, 0, 6).1, 4),
        "GG" => format!("{:02}", week_of_year(t, 1, 4).1.rem_euclid(100)),
        "GGGG" => pad(week_of_year(t, 1, 4).1, 4),
        "H" => t.hour.to_string(),
        "HH" => format!("{:02}", t.hour),
        "h" => h12.to_string(),
        "hh" => format!("{h12:02}"),
        "k" => (if t.hour == 0 { 24 } else { t.hour }).to_string(),
        "kk" => format!("{:02}", if t.hour == 0 { 24 } else { t.hour }),
        "m" => t.minute.to_string(),
        "mm" => format!("{:02}", t.minute),
        "s" => t.second.to_string(),
        "ss" => format!("{:02}", t.second),
        "a" => (if t.hour < 12 { "am" } else { "pm" }).to_owned(),
        "A" => (if t.hour < 12 { "AM" } else { "PM" }).to_owned(),
        "Z" => offset(ts.utc_offset_minutes, true),
        "ZZ" => offset(ts.utc_offset_minutes, false),
        "X" => ts.unix.to_string(),
        "x" => ts.unix.saturating_mul(1000).to_string(),
        "NNNN" if t.year <= 0 => "Before Christ".to_owned(),
        "NNNN" => "Anno Domini".to_owned(),
        _ if token.starts_with('N') && t.year <= 0 => "BC".to_owned(),
        _ if token.starts_with('N') => "AD".to_owned(),
        // Fractions of a second: the clock has whole seconds.
        _ => "0".repeat(token.len()),
    }
}

/// Formats `ts` (in its own UTC offset) with a moment.js format, stopping once the result
/// passes `cap` bytes (the caller then refuses it).
pub(crate) fn format(fmt: &str, ts: Timestamp, cap: usize) -> String {
    let t = civil(ts);
    let mut out = String::new();
    format_into(fmt, &t, ts, cap, &mut out, true);
    out
}

fn format_into(fmt: &str, t: &Civil, ts: Timestamp, cap: usize, out: &mut String, long: bool) {
    let mut rest = fmt;
    while let Some(c) = rest.chars().next() {
        if out.len() > cap {
            return;
        }
        if c == '[' {
            if let Some(end) = rest.find(']') {
                out.push_str(rest.get(1..end).unwrap_or_default());
                rest = rest.get(end + 1..).unwrap_or_default();
                continue;
            }
        }
        if c == '\\' {
            let mut chars = rest.chars();
            chars.next();
            if let Some(next) = chars.next() {
                out.push(next);
                rest = chars.as_str();
                continue;
            }
        }
        if long {
            let l = [
                "LTS", "LLLL", "llll", "LLL", "lll", "LL", "ll", "LT", "L", "l",
            ]
            .into_iter()
            .find(|l| rest.starts_with(l));
            if let Some(l) = l {
                let expanded = long_format(l).unwrap_or_default();
                format_into(expanded, t, ts, cap, out, false);
                rest = rest.get(l.len()..).unwrap_or_default();
                continue;
            }
        }
        if let Some(tok) = TOKENS.iter().find(|k| rest.starts_with(**k)) {
            out.push_str(&token_value(tok, t, ts));
            rest = rest.get(tok.len()..).unwrap_or_default();
            continue;
        }
        if rest.starts_with('S') {
            let n = rest.bytes().take_while(|b| *b == b'S').count().min(9);
            out.push_str(&"0".repeat(n));
            rest = rest.get(n..).unwrap_or_default();
            continue;
        }
        out.push(c);
        rest = rest.get(c.len_utf8()..).unwrap_or_default();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // 2026-11-21T15:07:09Z, a Saturday.
    const TS: i64 = 1_795_273_629;

    #[test]
    fn moment_tokens_format_like_the_moment_docs() {
        let ts = Timestamp::utc(TS);
        assert_eq!(
            format("YYYY-MM-DD HH:mm:ss", ts, 1000),
            "2026-11-21 15:07:09"
        );
        assert_eq!(
            format("LLLL", ts, 1000),
            "Saturday, November 21, 2026 3:07 PM"
        );
        assert_eq!(
            format("LT|LTS|L|l|ll", ts, 1000),
            "3:07 PM|3:07:09 PM|11/21/2026|11/21/2026|Nov 21, 2026"
        );
        assert_eq!(
            format("Do MMM, ddd dd d E Q [Q] \\Y", ts, 1000),
            "21st Nov, Sat Sa 6 6 4 Q Y"
        );
        assert_eq!(
            format("DDD DDDD W WW w GGGG gggg", ts, 1000),
            "325 325 47 47 47 2026 2026"
        );
        assert_eq!(
            format("h hh k a A Z ZZ X", ts.with_offset(-150), 1000),
            "12 12 12 pm PM -02:30 -0230 1795273629"
        );
        assert_eq!(format("SSS x", ts, 1000), "000 1795273629000");
        // Week years around the new year: 2027-01-01 is a Friday (ISO week 53 of 2026).
        let ny = Timestamp::utc(days_from_civil(2027, 1, 1) * 86_400);
        assert_eq!(format("W GGGG w gggg", ny, 1000), "53 2026 1 2027");
        assert!(format(&"LLLL".repeat(100), ts, 50).len() < 100);
    }
}

//! Reading a date as `moment(text)` does with no format (moment.js 2.30.1, which SillyTavern
//! 1.19.0 bundles; its `configFromString`), for `{{timeDiff}}`. In moment's order:
//!
//! 1. ASP.NET JSON dates: `/Date(1672531200000)/` (milliseconds since 1970).
//! 2. ISO 8601 as moment's docs list it (`#/parsing/string/`): `2023-01-01`, `2023-01`,
//!    `2023`, `20230101`, `202301`, `+002023-01-01`, ISO weeks `2023-W01-7` / `2023W017` /
//!    `2023-W01`, ordinal days `2023-001` / `2023001`; then `T` or a space and `HH`, `HH:mm`,
//!    `HH:mm:ss`, `HH:mm:ss.SSS` (`,` too; without colons after a date without dashes); then
//!    `Z`, `+HH`, `+HHmm` or `+HH:mm`. Year-month, year and week-only forms take no time.
//! 3. RFC 2822: `Sun, 01 Jan 2023 12:00:00 GMT` (`UT`, `GMT`, `EST`...`PDT`, `Z`, `+hhmm`),
//!    with `(comments)` removed; a weekday that is not the date's makes it invalid.
//! 4. Otherwise moment hands the text to JavaScript's `Date`: the forms of V8's legacy date
//!    parser that cards write (`2023/01/02`, `01/02/2023`, `1/2/23`, `Jan 5 2023`,
//!    `5 Jan 2023`, `Sunday, January 1, 2023 3:07 PM`, `Jan 5 2023 12:00 GMT+0200`): numbers
//!    split by `/ - . ,` or spaces, month names (three letters or more), `H:mm[:ss[.mmm]]`,
//!    `AM`/`PM`, zones `UTC`/`GMT`/`Z`/`EST`.../`+hhmm`/`+hh:mm`; words before the first number
//!    are skipped, words after it make the date invalid; a missing year is 2001, two-digit
//!    years are 1950-2049.
//!
//! Times without a zone are local (the caller's offset). Everything is linear in the text.

use super::moment::{days_from_civil, days_in_year, first_week_offset, weeks_in_year};
use super::time::{days_in_month, MONTHS, WEEKDAYS};

/// The latest and earliest years JavaScript dates reach (±8.64e15 ms).
const MAX_YEAR: i64 = 275_760;

/// Unix milliseconds of `text` read as `moment(text)` reads it (see the module docs);
/// `local_offset` is the local time's minutes east of UTC. `None` is moment's invalid date.
pub(crate) fn parse(text: &str, local_offset: i32) -> Option<i64> {
    let s = text.trim();
    if let Some(ms) = asp_net(s) {
        return Some(ms);
    }
    if let Some(iso) = iso(s) {
        return iso.and_then(|d| d.to_ms(local_offset));
    }
    if let Some(rfc) = rfc2822(s) {
        return rfc;
    }
    legacy(s, local_offset)
}

/// A date and time read from text, with its zone if it had one.
#[derive(Debug, Default)]
struct Parts {
    year: i64,
    month: u32,
    day: u32,
    hour: u32,
    minute: u32,
    second: u32,
    ms: u32,
    /// Minutes east of UTC; `None`: local time.
    offset: Option<i32>,
}

impl Parts {
    /// Unix milliseconds, `None` for a day or time that does not exist (moment's overflow).
    fn to_ms(&self, local: i32) -> Option<i64> {
        if !(-MAX_YEAR..=MAX_YEAR).contains(&self.year) {
            return None;
        }
        let (h, mi, sec, ms) = (self.hour, self.minute, self.second, self.ms);
        if self.day == 0 || self.day > days_in_month(self.year, self.month) {
            return None;
        }
        if h > 24 || mi > 59 || sec > 59 || (h == 24 && (mi, sec, ms) != (0, 0, 0)) {
            return None;
        }
        let days = days_from_civil(self.year, self.month, self.day);
        let off = self.offset.unwrap_or(local);
        let secs = days * 86_400 + i64::from(h) * 3600 + i64::from(mi) * 60 + i64::from(sec)
            - i64::from(off) * 60;
        Some(secs * 1000 + i64::from(ms))
    }
}

/// `/Date(1672531200000)/` (moment's `aspNetJsonRegex`, `^\/?Date\((-?\d+)`, any case).
fn asp_net(s: &str) -> Option<i64> {
    let s = s.strip_prefix('/').unwrap_or(s);
    let head = s.get(..5)?;
    if !head.eq_ignore_ascii_case("date(") {
        return None;
    }
    let rest = s.get(5..)?;
    let (neg, digits) = match rest.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, rest),
    };
    let n = digits.bytes().take_while(u8::is_ascii_digit).count();
    let v: i64 = digits.get(..n)?.parse().ok()?;
    Some(if neg { -v } else { v })
}

/// Splits `n` ASCII digits off the front of `s`.
fn digits(s: &str, n: usize) -> Option<(u32, &str)> {
    let d = s.get(..n)?;
    if !d.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((d.parse().ok()?, s.get(n..)?))
}

/// The date part of an ISO 8601 text.
enum IsoDate {
    Calendar { year: i64, month: u32, day: u32 },
    Week { year: i64, week: u32, weekday: u32 },
    Ordinal { year: i64, day: u32 },
}

/// ISO 8601 as moment reads it: `None` when the text is not ISO-shaped (the next readers
/// try), `Some(None)` when it is but names no real date (moment's invalid date).
fn iso(s: &str) -> Option<Option<Parts>> {
    let (year, rest) = iso_year(s)?;
    let extended = rest.starts_with('-');
    let (date, allow_time, rest) = if extended {
        iso_extended_date(year, rest.get(1..)?)?
    } else {
        iso_basic_date(year, rest)?
    };
    let mut parts = Parts::default();
    let mut rest = rest;
    if let Some(r) = rest.strip_prefix(['T', ' ']) {
        if !r.starts_with(|c: char| c.is_ascii_digit()) {
            return None;
        }
        let (h, mi, sec, ms, r) = iso_time(r, extended)?;
        (parts.hour, parts.minute, parts.second, parts.ms) = (h, mi, sec, ms);
        rest = r;
        if !allow_time {
            return Some(None);
        }
    }
    parts.offset = match iso_zone(rest)? {
        Zone::None => None,
        Zone::Offset(m) => Some(m),
    };
    let resolved = match date {
        IsoDate::Calendar { year, month, day } => Some((year, month, day)),
        IsoDate::Week {
            year,
            week,
            weekday,
        } => iso_week_date(year, week, weekday),
        IsoDate::Ordinal { year, day } => ordinal_date(year, day),
    };
    Some(resolved.map(|(y, m, d)| {
        (parts.year, parts.month, parts.day) = (y, m, d);
        parts
    }))
}

/// `YYYY` or `±YYYYYY`, with the number of digits.
fn iso_year(s: &str) -> Option<((i64, usize), &str)> {
    if let Some(sign) = s.get(..1).filter(|c| *c == "+" || *c == "-") {
        let (y, r) = digits(s.get(1..)?, 6)?;
        let y = i64::from(y);
        return Some(((if sign == "-" { -y } else { y }, 6), r));
    }
    let (y, r) = digits(s, 4)?;
    Some(((i64::from(y), 4), r))
}

/// After `YYYY-`: `MM-DD`, `Www-D`, `Www`, `DDD`, `MM` (moment's `extendedIsoRegex`).
fn iso_extended_date(year: (i64, usize), s: &str) -> Option<(IsoDate, bool, &str)> {
    let (y, width) = year;
    if let Some(r) = s.strip_prefix('W') {
        let (week, r) = digits(r, 2)?;
        if width != 4 {
            return None;
        }
        if let Some(r2) = r.strip_prefix('-') {
            if let Some((weekday, r3)) = digits(r2, 1) {
                return Some((
                    IsoDate::Week {
                        year: y,
                        week,
                        weekday,
                    },
                    true,
                    r3,
                ));
            }
        }
        let date = IsoDate::Week {
            year: y,
            week,
            weekday: 1,
        };
        return Some((date, false, r));
    }
    let (a, r) = digits(s, 2)?;
    if let Some((day, r2)) = r.strip_prefix('-').and_then(|r| digits(r, 2)) {
        return Some((
            IsoDate::Calendar {
                year: y,
                month: a,
                day,
            },
            true,
            r2,
        ));
    }
    if width != 4 {
        return None;
    }
    if let Some((c, r2)) = digits(r, 1) {
        let day = a * 10 + c;
        return Some((IsoDate::Ordinal { year: y, day }, true, r2));
    }
    Some((
        IsoDate::Calendar {
            year: y,
            month: a,
            day: 1,
        },
        false,
        r,
    ))
}

/// After `YYYY` (no dash): `MMDD`, `Wwwd`, `Www`, `DDD`, `MM` or nothing (`basicIsoRegex`).
fn iso_basic_date(year: (i64, usize), s: &str) -> Option<(IsoDate, bool, &str)> {
    let (y, width) = year;
    let run = s.bytes().take_while(u8::is_ascii_digit).count();
    if width == 6 {
        let (month, r) = digits(s, 2)?;
        let (day, r) = digits(r, 2)?;
        return Some((
            IsoDate::Calendar {
                year: y,
                month,
                day,
            },
            true,
            r,
        ));
    }
    if let Some(r) = s.strip_prefix('W') {
        let (week, r) = digits(r, 2)?;
        if let Some((weekday, r2)) = digits(r, 1) {
            return Some((
                IsoDate::Week {
                    year: y,
                    week,
                    weekday,
                },
                true,
                r2,
            ));
        }
        return Some((
            IsoDate::Week {
                year: y,
                week,
                weekday: 1,
            },
            false,
            r,
        ));
    }
    match run {
        0 => Some((
            IsoDate::Calendar {
                year: y,
                month: 1,
                day: 1,
            },
            false,
            s,
        )),
        2 => {
            let (month, r) = digits(s, 2)?;
            Some((
                IsoDate::Calendar {
                    year: y,
                    month,
                    day: 1,
                },
                false,
                r,
            ))
        }
        3 => {
            let (day, r) = digits(s, 3)?;
            Some((IsoDate::Ordinal { year: y, day }, true, r))
        }
        4 => {
            let (month, r) = digits(s, 2)?;
            let (day, r) = digits(r, 2)?;
            Some((
                IsoDate::Calendar {
                    year: y,
                    month,
                    day,
                },
                true,
                r,
            ))
        }
        _ => None,
    }
}

/// `HH[:mm[:ss[.SSS]]]` (extended) or `HH[mm[ss[.SSS]]]` (basic): hour, minute, second,
/// milliseconds (the first three fraction digits).
fn iso_time(s: &str, extended: bool) -> Option<(u32, u32, u32, u32, &str)> {
    let (h, mut r) = digits(s, 2)?;
    let mut fields = [0u32; 2];
    let mut read = 0;
    for f in &mut fields {
        let next = if extended {
            r.strip_prefix(':').and_then(|r2| digits(r2, 2))
        } else {
            digits(r, 2)
        };
        match next {
            Some((v, r2)) => {
                *f = v;
                r = r2;
                read += 1;
            }
            None => break,
        }
    }
    let mut ms = 0;
    if read == 2 {
        if let Some(frac) = r.strip_prefix(['.', ',']) {
            let n = frac.bytes().take_while(u8::is_ascii_digit).count();
            if n == 0 {
                return None;
            }
            let first = frac.get(..n.min(3))?;
            ms = format!("{first:0<3}").parse().ok()?;
            r = frac.get(n..)?;
        }
    }
    Some((h, fields[0], fields[1], ms, r))
}

/// A time zone as written after a time.
enum Zone {
    None,
    Offset(i32),
}

/// What follows the time: nothing, `Z` (spaces before it allowed), `±HH`, `±HHmm`, `±HH:mm`.
fn iso_zone(s: &str) -> Option<Zone> {
    if s.is_empty() {
        return Some(Zone::None);
    }
    if s.trim_start() == "Z" {
        return Some(Zone::Offset(0));
    }
    let sign = match s.get(..1)? {
        "+" => 1,
        "-" => -1,
        _ => return None,
    };
    let (h, r) = digits(s.get(1..)?, 2)?;
    let r = r.strip_prefix(':').unwrap_or(r);
    let (m, r) = if r.is_empty() { (0, r) } else { digits(r, 2)? };
    if !r.is_empty() {
        return None;
    }
    Some(Zone::Offset(sign * (h as i32 * 60 + m as i32)))
}

/// The civil date of ISO week `week`, weekday `weekday` (1 Monday to 7 Sunday) of ISO
/// week-year `year` (moment's `dayOfYearFromWeeks` with Monday first, January 4th in week 1).
fn iso_week_date(year: i64, week: u32, weekday: u32) -> Option<(i64, u32, u32)> {
    if !(1..=7).contains(&weekday) || week < 1 || i64::from(week) > weeks_in_year(year, 1, 4) {
        return None;
    }
    let day = 1
        + 7 * (i64::from(week) - 1)
        + i64::from((weekday + 6) % 7)
        + first_week_offset(year, 1, 4);
    let (y, doy) = if day <= 0 {
        (year - 1, days_in_year(year - 1) + day)
    } else if day > days_in_year(year) {
        (year + 1, day - days_in_year(year))
    } else {
        (year, day)
    };
    ordinal_date(y, u32::try_from(doy).ok()?)
}

/// The civil date of day `day` (from 1) of `year`; `None` past the year's end.
fn ordinal_date(year: i64, day: u32) -> Option<(i64, u32, u32)> {
    if day == 0 || i64::from(day) > days_in_year(year) {
        return None;
    }
    let mut left = day;
    for month in 1..=12 {
        let len = days_in_month(year, month);
        if left <= len {
            return Some((year, month, left));
        }
        left -= len;
    }
    None
}

/// RFC 2822 (moment's `configFromRFC2822`): `[Ddd, ]D Mon YYYY HH:mm[:ss] ZONE`, names in
/// their exact case. Days and times past their range roll over, as `Date.UTC` does. `None`
/// when the text is not RFC 2822; `Some(None)` when its weekday is not the date's (moment
/// keeps that flag, so the date is invalid even though its fallback would read it).
fn rfc2822(s: &str) -> Option<Option<i64>> {
    let cleaned = strip_comments(s);
    let mut words: Vec<&str> = cleaned.split(' ').collect();
    let weekday = match words.first() {
        Some(w) if w.len() >= 3 && WEEKDAYS.iter().any(|d| d.get(..3) == w.get(..3)) => {
            let w = words.remove(0);
            let name = w.strip_suffix(',').unwrap_or(w);
            if name.len() != 3 {
                return None;
            }
            Some(WEEKDAYS.iter().position(|d| d.get(..3) == Some(name))?)
        }
        _ => None,
    };
    let [day, month, year, time, zone] = words.as_slice() else {
        return None;
    };
    let day: i64 = short_number(day, 1, 2)?;
    let month = MONTHS.iter().position(|m| m.get(..3) == Some(*month))? as u32 + 1;
    let year: i64 = short_number(year, 2, 4)?;
    let year = match year {
        0..=49 => 2000 + year,
        50..=999 => 1900 + year,
        y => y,
    };
    let mut clock = time.split(':');
    let h: i64 = short_number(clock.next()?, 2, 2)?;
    let mi: i64 = short_number(clock.next()?, 2, 2)?;
    let sec: i64 = match clock.next() {
        Some(t) => short_number(t, 2, 2)?,
        None => 0,
    };
    if clock.next().is_some() {
        return None;
    }
    let offset = match *zone {
        "UT" | "GMT" | "Z" | "z" => 0,
        "EDT" => -240,
        "EST" | "CDT" => -300,
        "CST" | "MDT" => -360,
        "MST" | "PDT" => -420,
        "PST" => -480,
        z => {
            let sign = match z.get(..1)? {
                "+" => 1,
                "-" => -1,
                _ => return None,
            };
            let hm: i64 = short_number(z.get(1..)?, 4, 4)?;
            sign * (hm / 100 * 60 + hm % 100)
        }
    };
    let days = days_from_civil(year, month, 1) + day - 1;
    if let Some(w) = weekday {
        if (days + 4).rem_euclid(7) != w as i64 {
            return Some(None);
        }
    }
    let secs = days * 86_400 + h * 3600 + mi * 60 + sec - offset * 60;
    Some(Some(secs * 1000))
}

/// `s` as moment cleans it for RFC 2822: `(comments)` and tabs/newlines become spaces, runs of
/// whitespace one space, the ends trimmed.
fn strip_comments(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(open) = rest.find('(') {
        out.push_str(rest.get(..open).unwrap_or_default());
        let after = rest.get(open + 1..).unwrap_or_default();
        match after.find([')', '(']) {
            Some(close) if after.get(close..close + 1) == Some(")") => {
                out.push(' ');
                rest = after.get(close + 1..).unwrap_or_default();
            }
            _ => {
                out.push('(');
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// A number of `min..=max` ASCII digits.
fn short_number(s: &str, min: usize, max: usize) -> Option<i64> {
    if !(min..=max).contains(&s.len()) || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// One piece of a text for the legacy reader.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Token<'s> {
    Number(&'s str),
    Word(&'s str),
    Symbol(char),
}

/// Numbers, words and symbols; whitespace and `(comments)` are dropped.
fn tokens(s: &str) -> Vec<Token<'_>> {
    let mut out = Vec::new();
    let mut rest = s;
    while let Some(c) = rest.chars().next() {
        let take = |pred: fn(char) -> bool| rest.find(|ch: char| !pred(ch)).unwrap_or(rest.len());
        if c.is_ascii_digit() {
            let n = take(|ch| ch.is_ascii_digit());
            out.push(Token::Number(rest.get(..n).unwrap_or_default()));
            rest = rest.get(n..).unwrap_or_default();
        } else if c.is_alphabetic() {
            let n = take(char::is_alphabetic);
            out.push(Token::Word(rest.get(..n).unwrap_or_default()));
            rest = rest.get(n..).unwrap_or_default();
        } else if c == '(' {
            let close = rest.find(')').map_or(rest.len(), |i| i + 1);
            rest = rest.get(close..).unwrap_or_default();
        } else {
            if !c.is_whitespace() {
                out.push(Token::Symbol(c));
            }
            rest = rest.get(c.len_utf8()..).unwrap_or_default();
        }
    }
    out
}

/// A number token's value, `None` past nine digits.
fn small(n: &str) -> Option<i64> {
    if n.len() > 9 {
        return None;
    }
    n.parse().ok()
}

/// The zones V8 knows by name, in minutes east of UTC.
fn named_zone(word: &str) -> Option<i32> {
    Some(match word {
        "utc" | "ut" | "gmt" | "z" => 0,
        "edt" => -240,
        "est" | "cdt" => -300,
        "cst" | "mdt" => -360,
        "mst" | "pdt" => -420,
        "pst" => -480,
        _ => return None,
    })
}

/// JavaScript's `Date` on the forms of V8's legacy date parser listed in the module docs.
fn legacy(s: &str, local: i32) -> Option<i64> {
    let toks = tokens(s);
    let mut comps: Vec<i64> = Vec::with_capacity(3);
    let mut named_month: Option<u32> = None;
    let mut time: Option<(i64, i64, i64, i64)> = None;
    let mut pm: Option<bool> = None;
    let mut offset: Option<i32> = None;
    let mut seen_number = false;
    let mut i = 0;
    while let Some(tok) = toks.get(i).copied() {
        i += 1;
        match tok {
            Token::Number(n) if toks.get(i) == Some(&Token::Symbol(':')) && time.is_none() => {
                let h = small(n)?;
                let Some(Token::Number(m)) = toks.get(i + 1).copied() else {
                    return None;
                };
                i += 2;
                let mut t = (h, small(m)?, 0, 0);
                if toks.get(i) == Some(&Token::Symbol(':')) {
                    let Some(Token::Number(sec)) = toks.get(i + 1).copied() else {
                        return None;
                    };
                    t.2 = small(sec)?;
                    i += 2;
                    if toks.get(i) == Some(&Token::Symbol('.')) {
                        if let Some(Token::Number(f)) = toks.get(i + 1).copied() {
                            let first = f.get(..f.len().min(3)).unwrap_or_default();
                            t.3 = format!("{first:0<3}").parse().ok()?;
                            i += 2;
                        }
                    }
                }
                time = Some(t);
                seen_number = true;
            }
            Token::Symbol(sign @ ('+' | '-'))
                if (time.is_some() || offset.is_some())
                    && matches!(toks.get(i), Some(Token::Number(_))) =>
            {
                let Some(Token::Number(n)) = toks.get(i).copied() else {
                    return None;
                };
                i += 1;
                let minutes = if toks.get(i) == Some(&Token::Symbol(':')) {
                    let Some(Token::Number(m)) = toks.get(i + 1).copied() else {
                        return None;
                    };
                    i += 2;
                    small(n)? * 60 + small(m)?
                } else if n.len() <= 2 {
                    small(n)? * 60
                } else {
                    let hm = small(n)?;
                    hm / 100 * 60 + hm % 100
                };
                let minutes = i32::try_from(minutes).ok()?;
                let signed = if sign == '-' { -minutes } else { minutes };
                offset = Some(offset.unwrap_or(0).checked_add(signed)?);
            }
            Token::Number(n) => {
                if comps.len() == 3 {
                    return None;
                }
                comps.push(small(n)?);
                seen_number = true;
            }
            Token::Word(w) => {
                let lower = w.to_lowercase();
                if let Some(z) = named_zone(&lower) {
                    offset = Some(z);
                } else if lower == "am" || lower == "pm" {
                    pm = Some(lower == "pm");
                } else if let Some(m) = lower.get(..3).and_then(|prefix| {
                    MONTHS
                        .iter()
                        .position(|m| m.get(..3).is_some_and(|p| p.eq_ignore_ascii_case(prefix)))
                }) {
                    if named_month.is_some() {
                        return None;
                    }
                    named_month = Some(m as u32 + 1);
                } else if lower == "t" && seen_number {
                    // The `T` between an ISO-like date and its time.
                } else if seen_number {
                    return None;
                }
            }
            Token::Symbol(_) => {}
        }
    }
    let is_day = |n: i64| (1..=31).contains(&n);
    let comp = |i: usize| comps.get(i).copied();
    let (year, month, day) = match named_month {
        None => {
            let first = comp(0)?;
            if comps.len() == 3 && !is_day(first) {
                (comp(0), comp(1)?, comp(2)?)
            } else {
                (comp(2), first, comp(1).unwrap_or(1))
            }
        }
        Some(m) => {
            if comps.len() > 2 {
                return None;
            }
            let first = comp(0)?;
            if is_day(first) {
                (comp(1), i64::from(m), first)
            } else {
                (Some(first), i64::from(m), comp(1).unwrap_or(1))
            }
        }
    };
    let year = match year {
        None => 2001,
        Some(y @ 0..=49) => y + 2000,
        Some(y @ 50..=99) => y + 1900,
        Some(y) => y,
    };
    if !(1..=12).contains(&month) || !is_day(day) {
        return None;
    }
    let (mut h, mi, sec, ms) = time.unwrap_or_default();
    if let Some(pm) = pm {
        if h > 12 {
            return None;
        }
        h = match (pm, h) {
            (false, 12) => 0,
            (true, h) if h < 12 => h + 12,
            (_, h) => h,
        };
    }
    let parts = Parts {
        year,
        month: month as u32,
        day: day as u32,
        hour: u32::try_from(h).ok()?,
        minute: u32::try_from(mi).ok()?,
        second: u32::try_from(sec).ok()?,
        ms: u32::try_from(ms).ok()?,
        offset,
    };
    parts.to_ms(local)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(y: i64, m: u32, d: u32) -> i64 {
        days_from_civil(y, m, d) * 86_400_000
    }
    const H: i64 = 3_600_000;

    #[test]
    fn moment_2_30_iso_8601_forms() {
        // moment.js 2.30.1 `isoDates` / `isoTimes` / `tzRegex` (moment docs, "String").
        let base = day(2023, 1, 1);
        assert_eq!(parse("2023-01-01", 0), Some(base));
        assert_eq!(parse("2023-01-01 12:00:00", 0), Some(base + 12 * H));
        assert_eq!(
            parse("2023-01-01T12:00:00.5Z", 120),
            Some(base + 12 * H + 500)
        );
        assert_eq!(
            parse("2023-01-01T12:00:00,123456Z", 0),
            Some(base + 12 * H + 123)
        );
        assert_eq!(parse("2023-01-01T12:00+02:00", 0), Some(base + 10 * H));
        assert_eq!(parse("2023-01-01T12+0200", 0), Some(base + 10 * H));
        assert_eq!(parse("2023-01-01T12:00 Z", 0), Some(base + 12 * H));
        assert_eq!(parse("2023-01-01 12:00", 60), Some(base + 11 * H));
        assert_eq!(parse("2023-01", 0), Some(base));
        assert_eq!(parse("2023", 0), Some(base));
        assert_eq!(parse("20230102", 0), Some(day(2023, 1, 2)));
        assert_eq!(
            parse("20230102T1230", 0),
            Some(day(2023, 1, 2) + 12 * H + 1_800_000)
        );
        assert_eq!(parse("202302", 0), Some(day(2023, 2, 1)));
        assert_eq!(parse("+002023-01-01", 0), Some(base));
        // Ordinal days and ISO weeks (2023-W01-1 is Monday January 2nd).
        assert_eq!(parse("2023-032", 0), Some(day(2023, 2, 1)));
        assert_eq!(parse("2023032", 0), Some(day(2023, 2, 1)));
        assert_eq!(parse("2023-W01-1", 0), Some(day(2023, 1, 2)));
        assert_eq!(parse("2023W017", 0), Some(day(2023, 1, 8)));
        assert_eq!(parse("2023-W01", 0), Some(day(2023, 1, 2)));
        assert_eq!(parse("2026-W53-5", 0), Some(day(2027, 1, 1)));
        // Shapes moment reads as ISO but no real date: invalid, no fallback.
        assert_eq!(parse("2023-02-30", 0), None);
        assert_eq!(parse("2023-366", 0), None);
        assert_eq!(parse("2023-W54", 0), None);
        assert_eq!(parse("2023-W01-8", 0), None);
        assert_eq!(parse("2023-01T12:00", 0), None);
        assert_eq!(parse("2023-01-01T25:00", 0), None);
        assert_eq!(parse("2023-01-01T24:00", 0), Some(day(2023, 1, 2)));
    }

    #[test]
    fn moment_2_30_asp_net_and_rfc_2822() {
        // moment.js 2.30.1 `aspNetJsonRegex`, `rfc2822`, `obsOffsets`.
        assert_eq!(parse("/Date(1672531200000)/", 0), Some(1_672_531_200_000));
        assert_eq!(parse("Date(-5)", 0), Some(-5));
        let noon = day(2023, 1, 1) + 12 * H;
        assert_eq!(parse("Sun, 01 Jan 2023 12:00:00 GMT", 0), Some(noon));
        assert_eq!(parse("1 Jan 2023 14:00 +0200", 0), Some(noon));
        assert_eq!(parse("01 Jan 23 07:00 EST", 0), Some(noon));
        assert_eq!(
            parse("Sun, 01 Jan 2023 12:00:00 (comment) Z", 0),
            Some(noon)
        );
        // A weekday that is not the date's: invalid (moment keeps its `weekdayMismatch` flag).
        assert_eq!(rfc2822("Mon, 01 Jan 2023 12:00:00 GMT"), Some(None));
        assert_eq!(parse("Mon, 01 Jan 2023 12:00:00 GMT", 0), None);
    }

    #[test]
    fn javascript_date_fallback_forms() {
        // The forms V8's legacy parser reads (`new Date(text)` in Node 22), which moment 2.30.1
        // falls back to: each value below was checked against Node with TZ=UTC.
        let d = day(2023, 1, 5);
        assert_eq!(parse("Jan 5 2023", 0), Some(d));
        assert_eq!(parse("5 Jan 2023", 0), Some(d));
        assert_eq!(parse("2023 Jan 5", 0), Some(d));
        assert_eq!(parse("Janu 5 2023", 0), Some(d));
        assert_eq!(parse("(c) Jan 5 2023", 0), Some(d));
        assert_eq!(parse("Jan-05-2023", 0), Some(d));
        assert_eq!(parse("05-Jan-2023", 0), Some(d));
        assert_eq!(parse("2023.01.05", 0), Some(d));
        assert_eq!(parse("01/05/2023", 0), Some(d));
        assert_eq!(parse("2023/01/05", 0), Some(d));
        assert_eq!(parse("1/5/23", 0), Some(d));
        assert_eq!(parse("Jan 2023", 0), Some(day(2023, 1, 1)));
        assert_eq!(parse("Jan 5", 0), Some(day(2001, 1, 5)));
        assert_eq!(parse("1/2", 0), Some(day(2001, 1, 2)));
        assert_eq!(parse("5", 0), Some(day(2001, 5, 1)));
        assert_eq!(
            parse("Sunday, January 1, 2023 3:07 PM", 0),
            Some(day(2023, 1, 1) + 15 * H + 420_000)
        );
        assert_eq!(
            parse("January 1, 2023 15:07", 0),
            Some(day(2023, 1, 1) + 15 * H + 420_000)
        );
        assert_eq!(parse("12:00 Jan 5 2023", 0), Some(d + 12 * H));
        assert_eq!(parse("Jan 5 2023 12:00 GMT+0200", 0), Some(d + 10 * H));
        assert_eq!(parse("Jan 5 2023 12:00 +02:00", 0), Some(d + 10 * H));
        assert_eq!(parse("Jan 5 2023 12:00 EST", 0), Some(d + 17 * H));
        assert_eq!(parse("Jan 5 2023 12:00 UTC", 60), Some(d + 12 * H));
        assert_eq!(parse("Jan 5 2023 12:00:30.5", 0), Some(d + 12 * H + 30_500));
        assert_eq!(parse("Jan 5 2023 12:00 pm", 0), Some(d + 12 * H));
        assert_eq!(parse("Jan 5 2023 12:00 am", 0), Some(d));
        assert_eq!(parse("2023-01-05 12:00 pm", 0), Some(d + 12 * H));
        assert_eq!(parse("2023-1-5", 60), Some(d - H));
        assert_eq!(parse("Jan 5 2023 foo", 0), None);
        assert_eq!(parse("13/01/2023", 0), None);
        assert_eq!(parse("Jan 5 2023 12pm", 0), None);
        assert_eq!(parse("tomorrow", 0), None);
        assert_eq!(parse("", 0), None);
    }

    #[test]
    fn hostile_dates_stay_bounded() {
        assert_eq!(parse("99999999999999999999/1/1", 0), None);
        assert_eq!(parse("+999999-01-01", 0), None);
        assert_eq!(parse("Jan 5 2023 12:00 +99999999999", 0), None);
        let long = "1/".repeat(100_000);
        assert_eq!(parse(&long, 0), None);
        assert_eq!(parse(&"(".repeat(100_000), 0), None);
        assert_eq!(parse("ééé 5 2023", 0), None);
    }
}

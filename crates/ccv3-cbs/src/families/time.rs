//! Time macros, [`crate::Family::Time`], read from the context's clock
//! ([`crate::Context::now`]); without a clock they expand to an empty string.
//!
//! Formats follow SillyTavern (moment.js, English locale), in local time
//! ([`crate::Timestamp::utc_offset_minutes`]):
//!
//! | macro | format | example |
//! |---|---|---|
//! | `{{time}}` | `h:mm AM` | `3:07 PM` |
//! | `{{date}}` | `MMMM D, YYYY` | `November 21, 2026` |
//! | `{{weekday}}` | `dddd` | `Saturday` |
//! | `{{isotime}}` | `HH:mm` | `15:07` |
//! | `{{isodate}}` | `YYYY-MM-DD` | `2026-11-21` |
//! | `{{unixtime}}` | unix seconds | `1795273620` |
//! | `{{idle_duration}}` | time since the last user message, humanised | `5 minutes` |
//!
//! `{{time::UTC+2}}` (and the legacy `{{time_UTC+2}}`) is the time at that offset in hours.
//! `idle_duration` follows SillyTavern: system messages are skipped, so is the newest
//! message, and the next user message's time ([`crate::Message::time`]) counts; without one
//! it is `just now`. Humanising follows moment.js thresholds: under 45 s `a few
//! seconds`, under 90 s `a minute`, under 45 min `N minutes`, under 90 min `an hour`, under
//! 22 h `N hours`, under 36 h `a day`, under 26 days `N days`, under 45 days `a month`, under
//! 320 days `N months`, under 548 days `a year`, else `N years`.
//!
//! ```
//! use ccv3_cbs::{expand, Context, Message, Role, Timestamp};
//! // 2026-11-21T15:07:00Z
//! let ctx = Context::new()
//!     .with_now(Timestamp::utc(1_795_273_620))
//!     .with_message(Message::new(Role::User, "Bob", "hi").at(1_795_273_620 - 300))
//!     .with_message(Message::new(Role::Char, "Alice", "hello"));
//! assert_eq!(expand("{{time}}", &ctx), "3:07 PM");
//! assert_eq!(expand("{{date}}", &ctx), "November 21, 2026");
//! assert_eq!(expand("{{weekday}}", &ctx), "Saturday");
//! assert_eq!(expand("{{isotime}} {{isodate}}", &ctx), "15:07 2026-11-21");
//! assert_eq!(expand("{{unixtime}}", &ctx), "1795273620");
//! assert_eq!(expand("{{idle_duration}}", &ctx), "5 minutes");
//! let east = Context::new().with_now(Timestamp::utc(1_795_273_620).with_offset(600));
//! assert_eq!(expand("{{isodate}} {{isotime}}", &east), "2026-11-22 01:07");
//! assert_eq!(expand("[{{time}}]", &Context::new()), "[]");
//! ```

use crate::context::{Role, Timestamp};
use crate::expand::Call;
use crate::registry::{Family, Registry};

pub(crate) const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
pub(crate) const WEEKDAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];

/// A broken-down local time.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Civil {
    pub year: i64,
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
    pub weekday: usize,
}

/// Days since 1970-01-01 to (year, month, day) in the proleptic Gregorian calendar
/// (the era-based algorithm published by Howard Hinnant, re-derived here).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097); // [0, 146096]
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365; // [0, 399]
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100); // [0, 365]
    let mp = (5 * doy + 2) / 153; // [0, 11]
    let d = doy - (153 * mp + 2) / 5 + 1; // [1, 31]
    let m = if mp < 10 { mp + 3 } else { mp - 9 }; // [1, 12]
    (if m <= 2 { y + 1 } else { y }, m as u32, d as u32)
}

/// `true` for a leap year of the proleptic Gregorian calendar.
pub(crate) fn is_leap(year: i64) -> bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
}

/// The number of days of `month` (1 to 12) in `year`; 0 for a month that does not exist.
pub(crate) fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if is_leap(year) => 29,
        2 => 28,
        _ => 0,
    }
}

/// The day of the year (1 for January 1st) of a civil date.
pub(crate) fn day_of_year(year: i64, month: u32, day: u32) -> u32 {
    (1..month.min(13))
        .map(|m| days_in_month(year, m))
        .sum::<u32>()
        + day
}

/// A timestamp broken down at its offset.
pub(crate) fn civil(ts: Timestamp) -> Civil {
    let local = ts
        .unix
        .saturating_add(i64::from(ts.utc_offset_minutes).saturating_mul(60));
    let days = local.div_euclid(86_400);
    let secs = local.rem_euclid(86_400);
    let (year, month, day) = civil_from_days(days);
    Civil {
        year,
        month,
        day,
        hour: (secs / 3600) as u32,
        minute: (secs % 3600 / 60) as u32,
        second: (secs % 60) as u32,
        weekday: (days + 4).rem_euclid(7) as usize,
    }
}

/// moment.js `humanize()` without suffix.
pub(crate) fn humanize(seconds: i64) -> String {
    let s = seconds.unsigned_abs() as f64;
    let min = (s / 60.0).round();
    let hours = (s / 3600.0).round();
    let days = (s / 86_400.0).round();
    let plural = |n: f64, unit: &str| format!("{} {unit}s", n as u64);
    if s < 45.0 {
        "a few seconds".to_owned()
    } else if s < 90.0 {
        "a minute".to_owned()
    } else if min < 45.0 {
        plural(min, "minute")
    } else if min < 90.0 {
        "an hour".to_owned()
    } else if hours < 22.0 {
        plural(hours, "hour")
    } else if hours < 36.0 {
        "a day".to_owned()
    } else if days < 26.0 {
        plural(days, "day")
    } else if days < 45.0 {
        "a month".to_owned()
    } else if days < 320.0 {
        plural((days / 30.4).round().max(2.0), "month")
    } else if days < 548.0 {
        "a year".to_owned()
    } else {
        plural((days / 365.25).round().max(2.0), "year")
    }
}

fn with_clock(f: fn(Civil, Timestamp) -> String) -> impl Fn(&mut Call<'_, '_>) -> Option<String> {
    move |c| {
        Some(
            c.context()
                .now
                .map(|ts| f(civil(ts), ts))
                .unwrap_or_default(),
        )
    }
}

/// Adds the time macros.
///
/// ```
/// let mut registry = ccv3_cbs::Registry::empty();
/// ccv3_cbs::families::time::register(&mut registry);
/// assert!(registry.contains("time"));
/// ```
pub fn register(r: &mut Registry) {
    let f = Family::Time;
    r.register_all(f, &["time"], |c| {
        let Some(now) = c.context().now else {
            return Some(String::new());
        };
        // `{{time::UTC+2}}`: the time at that offset; another argument gives the local time
        // (SillyTavern's time-macros.js).
        let now = match super::sillytavern::utc_offset(&c.raw()) {
            Some(minutes) => now.with_offset(minutes),
            None => now,
        };
        let t = civil(now);
        let h12 = match t.hour % 12 {
            0 => 12,
            h => h,
        };
        let ampm = if t.hour < 12 { "AM" } else { "PM" };
        Some(format!("{h12}:{:02} {ampm}", t.minute))
    });
    r.register_all(
        f,
        &["date"],
        with_clock(|t, _| {
            let month = MONTHS
                .get((t.month as usize).saturating_sub(1))
                .unwrap_or(&"");
            format!("{month} {}, {}", t.day, t.year)
        }),
    );
    r.register_all(
        f,
        &["weekday"],
        with_clock(|t, _| WEEKDAYS.get(t.weekday).unwrap_or(&"").to_string()),
    );
    r.register_all(
        f,
        &["isotime"],
        with_clock(|t, _| format!("{:02}:{:02}", t.hour, t.minute)),
    );
    r.register_all(
        f,
        &["isodate"],
        with_clock(|t, _| format!("{:04}-{:02}-{:02}", t.year, t.month, t.day)),
    );
    r.register_all(f, &["unixtime"], with_clock(|_, ts| ts.unix.to_string()));
    r.register_all(f, &["idleduration"], |c| {
        let Some(now) = c.context().now else {
            return Some(String::new());
        };
        // SillyTavern's getTimeSinceLastMessage: system messages are skipped, and so is the
        // newest other message (the one being answered); then the first user message.
        let last = c
            .context()
            .messages
            .iter()
            .rev()
            .filter(|m| m.role != Role::System)
            .skip(1)
            .find(|m| m.role == Role::User)
            .and_then(|m| m.time);
        Some(match last {
            Some(t) => humanize(now.unix.saturating_sub(t)),
            None => "just now".to_owned(),
        })
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates_match_known_days() {
        let c = civil(Timestamp::utc(0));
        assert_eq!((c.year, c.month, c.day, c.weekday), (1970, 1, 1, 4));
        let c = civil(Timestamp::utc(951_782_400)); // 2000-02-29
        assert_eq!((c.year, c.month, c.day), (2000, 2, 29));
        let c = civil(Timestamp::utc(-1)); // 1969-12-31T23:59:59
        assert_eq!(
            (c.year, c.month, c.day, c.hour, c.second),
            (1969, 12, 31, 23, 59)
        );
        // Extremes must not overflow.
        let _ = civil(Timestamp::utc(i64::MAX).with_offset(i32::MAX));
        let _ = civil(Timestamp::utc(i64::MIN).with_offset(i32::MIN));
    }

    #[test]
    fn one_month_table_serves_risu_and_moment() {
        // Gregorian leap years: every 4th, not every 100th, but every 400th.
        assert_eq!(days_in_month(2024, 2), 29);
        assert_eq!(days_in_month(1900, 2), 28);
        assert_eq!(days_in_month(2000, 2), 29);
        assert_eq!((days_in_month(2023, 4), days_in_month(2023, 12)), (30, 31));
        assert_eq!((days_in_month(2023, 0), days_in_month(2023, 13)), (0, 0));
        assert_eq!(day_of_year(2024, 12, 31), 366);
        assert_eq!(day_of_year(2023, 3, 1), 60);
        assert_eq!(day_of_year(2023, 99, 1), 366);
    }

    #[test]
    fn humanize_follows_moment_thresholds() {
        assert_eq!(humanize(10), "a few seconds");
        assert_eq!(humanize(60), "a minute");
        assert_eq!(humanize(300), "5 minutes");
        assert_eq!(humanize(3600), "an hour");
        assert_eq!(humanize(3 * 3600), "3 hours");
        assert_eq!(humanize(86_400), "a day");
        assert_eq!(humanize(3 * 86_400), "3 days");
        assert_eq!(humanize(i64::MIN), humanize(i64::MIN));
    }
}

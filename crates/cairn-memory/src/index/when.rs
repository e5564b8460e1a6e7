//! What a query says about time: the days it asks about ("in May", "last week", "in
//! 2023", "3 weeks ago", "on 2026-05-14") and whether it asks for the latest state of
//! something ("now", "currently", "last time").
//!
//! Dates are read relative to the search's today. A month named without a year is its
//! latest occurrence that has begun (May asked in February is last year's May). The words
//! of a date expression are taken out of the text that is searched: "may" would otherwise
//! match every "may" of every note, and "week" every log that mentions one.

use chrono::{Datelike, Duration, NaiveDate, Weekday};

/// A query read for time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Asked {
    /// The query without its date expressions (the whole query when that would leave no
    /// word).
    pub text: String,
    /// The days asked about, first and last inclusive (several expressions: from the
    /// earliest to the latest).
    pub window: Option<Days>,
    /// The query asks for how things are now, or were last.
    pub latest: bool,
}

/// Words that ask for the latest state.
const LATEST: [&str; 9] = [
    "now",
    "currently",
    "current",
    "latest",
    "recently",
    "nowadays",
    "anymore",
    "still",
    "lately",
];
/// Two-word phrases that ask for the latest state.
const LATEST_PAIRS: [(&str, &str); 4] = [
    ("last", "time"),
    ("most", "recent"),
    ("these", "days"),
    ("right", "now"),
];

/// Words before a month or year that belong to the date expression.
const LEADS: [&str; 11] = [
    "in", "during", "on", "of", "since", "around", "back", "early", "mid", "late", "from",
];

const MONTHS: [&str; 12] = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
];

const NUMBERS: [&str; 12] = [
    "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
    "twelve",
];

/// Reads `query` for time as asked on `today`.
pub fn read(query: &str, today: NaiveDate) -> Asked {
    let words: Vec<&str> = query.split_whitespace().collect();
    let plain: Vec<String> = words.iter().map(|w| bare(w)).collect();
    let mut used = vec![false; words.len()];
    let mut window: Option<Days> = None;
    let mut latest = false;
    let mut i = 0;
    while i < plain.len() {
        let next = plain.get(i + 1).map(String::as_str).unwrap_or("");
        if LATEST.contains(&plain[i].as_str()) || LATEST_PAIRS.contains(&(plain[i].as_str(), next))
        {
            latest = true;
        }
        // A window that runs backwards ("since 2150") asks for no day there is.
        match expression(&plain, i, today).filter(|(_, _, (from, to))| from <= to) {
            Some((start, end, (from, to))) => {
                used[start..end].iter_mut().for_each(|u| *u = true);
                // The word before a date ("in", "during") goes with it.
                if start > 0 && LEADS.contains(&plain[start - 1].as_str()) {
                    used[start - 1] = true;
                }
                window = Some(match window {
                    Some((a, b)) => (a.min(from), b.max(to)),
                    None => (from, to),
                });
                i = end;
            }
            None => i += 1,
        }
    }
    let kept: Vec<&str> = words
        .iter()
        .zip(&used)
        .filter(|(_, used)| !**used)
        .map(|(w, _)| *w)
        .collect();
    let text = if kept.iter().any(|w| w.chars().any(char::is_alphanumeric)) {
        kept.join(" ")
    } else {
        query.trim().to_string()
    };
    Asked {
        text,
        window,
        latest,
    }
}

/// A word lower-cased, without the punctuation around it or a possessive ("May," →
/// "may", "yesterday's" → "yesterday", "3rd" stays).
fn bare(word: &str) -> String {
    let word = word.trim_matches(|c: char| !c.is_alphanumeric() && c != '-');
    let word = word
        .strip_suffix("'s")
        .or_else(|| word.strip_suffix("\u{2019}s"))
        .unwrap_or(word);
    word.to_lowercase()
}

/// Days, first and last.
type Days = (NaiveDate, NaiveDate);

/// The date expression at word `i`: the words it takes (first, past the last; a day
/// before a month is taken too) and its days.
fn expression(words: &[String], i: usize, today: NaiveDate) -> Option<(usize, usize, Days)> {
    let word = words[i].as_str();
    let next = words.get(i + 1).map(String::as_str).unwrap_or("");
    let after = words.get(i + 2).map(String::as_str).unwrap_or("");
    let before = i.checked_sub(1).map_or("", |b| words[b].as_str());
    if let Ok(day) = NaiveDate::parse_from_str(word, "%Y-%m-%d") {
        return Some((i, i + 1, (day, day)));
    }
    match word {
        "today" | "tonight" => return Some((i, i + 1, (today, today))),
        "yesterday" => {
            let day = today - Duration::days(1);
            return Some((i, i + 1, (day, day)));
        }
        "last" | "past" | "previous" | "this" => {
            if let Some(days) = relative(word, next, today) {
                return Some((i, i + 2, days));
            }
        }
        _ => {}
    }
    if before == "on" {
        if let Ok(weekday) = word.parse::<Weekday>() {
            let day = if today.weekday() == weekday {
                today
            } else {
                last_weekday(weekday, today)
            };
            return Some((i, i + 1, (day, day)));
        }
    }
    if let Some(n) = count(word) {
        if after == "ago" {
            if let Some(days) = ago(n, next, today) {
                return Some((i, i + 3, days));
            }
        }
    }
    if let Some(month) = month(word) {
        let year = year(next);
        let day_after = day_of_month(next);
        let day_before = day_of_month(before).filter(|_| i > 0);
        // "may" and "march" are words too: a month needs a lead word, a year or a day.
        let led = LEADS.contains(&before);
        if !(led || year.is_some() || day_after.is_some() || day_before.is_some()) {
            return None;
        }
        let year_after_day = day_after.and_then(|_| self::year(after));
        let end = i
            + 1
            + usize::from(year.is_some() || day_after.is_some())
            + usize::from(year_after_day.is_some());
        let start = if day_before.is_some() { i - 1 } else { i };
        let year = year
            .or(year_after_day)
            .unwrap_or_else(|| latest_year_of(month, today));
        let first = NaiveDate::from_ymd_opt(year, month, 1)?;
        let last = last_of_month(first);
        let day = day_after.or(day_before);
        let days = match (day, before) {
            (Some(d), _) => {
                let day = NaiveDate::from_ymd_opt(year, month, d)?;
                (day, day)
            }
            (None, "early") => (first, first + Duration::days(9)),
            (None, "mid") => (first + Duration::days(10), first + Duration::days(19)),
            (None, "late") => (first + Duration::days(20), last),
            (None, "since") => (first, today),
            _ => (first, last),
        };
        return Some((start, end, days));
    }
    if let Some(y) = year(word) {
        if LEADS.contains(&before) {
            let first = NaiveDate::from_ymd_opt(y, 1, 1)?;
            let last = NaiveDate::from_ymd_opt(y, 12, 31)?;
            let days = if before == "since" {
                (first, today)
            } else {
                (first, last)
            };
            return Some((i, i + 1, days));
        }
    }
    None
}

/// "last week", "past month", "this year", "last monday", "last weekend".
fn relative(which: &str, unit: &str, today: NaiveDate) -> Option<Days> {
    let yesterday = today - Duration::days(1);
    let this_monday = today - Duration::days(i64::from(today.weekday().num_days_from_monday()));
    let this_month = today.with_day(1)?;
    let this_year = NaiveDate::from_ymd_opt(today.year(), 1, 1)?;
    let days = match (which, unit) {
        ("this", "week") => (this_monday, today),
        ("this", "month") => (this_month, today),
        ("this", "year") => (this_year, today),
        ("past", "week") => (today - Duration::days(7), yesterday),
        ("past", "month") => (today - Duration::days(30), yesterday),
        ("past", "year") => (today - Duration::days(365), yesterday),
        (_, "week") => (this_monday - Duration::days(7), yesterday),
        (_, "month") => {
            let last = this_month - Duration::days(1);
            (last.with_day(1)?, last)
        }
        (_, "year") => (
            NaiveDate::from_ymd_opt(today.year() - 1, 1, 1)?,
            NaiveDate::from_ymd_opt(today.year() - 1, 12, 31)?,
        ),
        ("this", _) => return None,
        (_, "weekend") => {
            let saturday = last_weekday(Weekday::Sat, today);
            (saturday, saturday + Duration::days(1))
        }
        (_, unit) => {
            let weekday = unit.parse::<Weekday>().ok()?;
            let day = last_weekday(weekday, today);
            (day, day)
        }
    };
    Some(days)
}

/// "3 days ago" (a day either side), "two weeks ago" (that week), "5 months ago",
/// "a year ago".
fn ago(n: u32, unit: &str, today: NaiveDate) -> Option<Days> {
    let n = i64::from(n);
    let unit = unit.strip_suffix('s').unwrap_or(unit);
    let days = match unit {
        "day" => {
            let day = today - Duration::days(n);
            (day - Duration::days(1), day + Duration::days(1))
        }
        "week" => {
            let day = today - Duration::days(7 * n);
            (day - Duration::days(3), day + Duration::days(3))
        }
        "month" => {
            let months = i64::from(today.year()) * 12 + i64::from(today.month0()) - n;
            let first = NaiveDate::from_ymd_opt(
                i32::try_from(months.div_euclid(12)).ok()?,
                u32::try_from(months.rem_euclid(12)).ok()? + 1,
                1,
            )?;
            (first, last_of_month(first))
        }
        "year" => {
            let year = today.year() - i32::try_from(n).ok()?;
            (
                NaiveDate::from_ymd_opt(year, 1, 1)?,
                NaiveDate::from_ymd_opt(year, 12, 31)?,
            )
        }
        _ => return None,
    };
    Some(days)
}

/// The latest `weekday` before `today`.
fn last_weekday(weekday: Weekday, today: NaiveDate) -> NaiveDate {
    let back = (7 + today.weekday().num_days_from_monday() - weekday.num_days_from_monday()) % 7;
    today - Duration::days(i64::from(if back == 0 { 7 } else { back }))
}

fn last_of_month(first: NaiveDate) -> NaiveDate {
    let next = if first.month() == 12 {
        NaiveDate::from_ymd_opt(first.year() + 1, 1, 1)
    } else {
        NaiveDate::from_ymd_opt(first.year(), first.month() + 1, 1)
    };
    next.map_or(first, |n| n - Duration::days(1))
}

/// The year of the latest `month` that has begun by `today`.
fn latest_year_of(month: u32, today: NaiveDate) -> i32 {
    if month <= today.month() {
        today.year()
    } else {
        today.year() - 1
    }
}

/// A month's number from its name or an abbreviation of three letters or more ("sept").
fn month(word: &str) -> Option<u32> {
    let at = MONTHS
        .iter()
        .position(|m| *m == word || (word.len() >= 3 && m.starts_with(word)))?;
    u32::try_from(at + 1).ok()
}

/// A year from 1970 to 2199.
fn year(word: &str) -> Option<i32> {
    (word.len() == 4)
        .then(|| word.parse::<i32>().ok())
        .flatten()
        .filter(|y| (1970..2200).contains(y))
}

/// A day of the month: "3", "3rd", "21st".
fn day_of_month(word: &str) -> Option<u32> {
    let digits = word.trim_end_matches(|c: char| c.is_ascii_alphabetic());
    let suffix = &word[digits.len()..];
    if !matches!(suffix, "" | "st" | "nd" | "rd" | "th") || digits.is_empty() || digits.len() > 2 {
        return None;
    }
    digits.parse().ok().filter(|d| (1..=31).contains(d))
}

/// A small count: digits, "a"/"an", or a number word up to twelve.
fn count(word: &str) -> Option<u32> {
    match word {
        "a" | "an" => Some(1),
        _ => word
            .parse::<u32>()
            .ok()
            .filter(|n| (1..1000).contains(n))
            .or_else(|| {
                NUMBERS
                    .iter()
                    .position(|n| *n == word)
                    .and_then(|p| u32::try_from(p + 1).ok())
            }),
    }
}

#[cfg(test)]
#[path = "when_tests.rs"]
mod tests;

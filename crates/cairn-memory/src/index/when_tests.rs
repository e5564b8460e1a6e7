#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::*;

fn day(text: &str) -> NaiveDate {
    NaiveDate::parse_from_str(text, "%Y-%m-%d").unwrap()
}

/// Wednesday, 2 December 2026.
fn today() -> NaiveDate {
    day("2026-12-02")
}

fn window(query: &str) -> Option<(String, String)> {
    read(query, today())
        .window
        .map(|(a, b)| (a.to_string(), b.to_string()))
}

fn span(a: &str, b: &str) -> Option<(String, String)> {
    Some((a.to_string(), b.to_string()))
}

#[test]
fn a_month_is_its_latest_occurrence_and_leaves_the_searched_words() {
    let asked = read("What did we decide in May?", today());
    assert_eq!(asked.window, Some((day("2026-05-01"), day("2026-05-31"))));
    assert_eq!(asked.text, "What did we decide");
    assert_eq!(window("during December"), span("2026-12-01", "2026-12-31"));
    assert_eq!(
        read("plans for january", day("2026-03-01")).window,
        None,
        "a month with no lead word, year or day is a word"
    );
    assert_eq!(window("in March 2025"), span("2025-03-01", "2025-03-31"));
    assert_eq!(
        window("the gig on May 3rd"),
        span("2026-05-03", "2026-05-03")
    );
    assert_eq!(window("14 Sept 2025"), span("2025-09-14", "2025-09-14"));
    assert_eq!(window("early June"), span("2026-06-01", "2026-06-10"));
    assert_eq!(window("late feb"), span("2026-02-21", "2026-02-28"));
    assert_eq!(read("the gig on May 3rd", today()).text, "the gig");
    assert_eq!(read("14 Sept 2025 trip", today()).text, "trip");
}

#[test]
fn a_modal_may_or_a_march_is_not_a_date() {
    for query in [
        "you may want to march on",
        "May said hello",
        "what may I bring",
    ] {
        let asked = read(query, today());
        assert_eq!(asked.window, None, "{query}");
        assert_eq!(asked.text, query);
    }
}

#[test]
fn relative_days_weeks_months_and_years() {
    assert_eq!(window("yesterday's call"), span("2026-12-01", "2026-12-01"));
    assert_eq!(
        window("what did Ana say last week"),
        span("2026-11-23", "2026-12-01")
    );
    assert_eq!(window("last month"), span("2026-11-01", "2026-11-30"));
    assert_eq!(window("this year"), span("2026-01-01", "2026-12-02"));
    assert_eq!(window("last year"), span("2025-01-01", "2025-12-31"));
    assert_eq!(window("last monday"), span("2026-11-30", "2026-11-30"));
    assert_eq!(window("last wednesday"), span("2026-11-25", "2026-11-25"));
    assert_eq!(window("on Wednesday"), span("2026-12-02", "2026-12-02"));
    assert_eq!(window("3 days ago"), span("2026-11-28", "2026-11-30"));
    assert_eq!(window("two weeks ago"), span("2026-11-15", "2026-11-21"));
    assert_eq!(window("five months ago"), span("2026-07-01", "2026-07-31"));
    assert_eq!(window("a year ago"), span("2025-01-01", "2025-12-31"));
    assert_eq!(window("in 2023"), span("2023-01-01", "2023-12-31"));
    assert_eq!(window("since 2024"), span("2024-01-01", "2026-12-02"));
    assert_eq!(window("on 2026-05-14"), span("2026-05-14", "2026-05-14"));
    assert_eq!(
        window("2023 was a good year"),
        None,
        "a bare number is no date"
    );
    assert_eq!(
        window("since 2150"),
        None,
        "a window that runs backwards is no window"
    );
    assert_eq!(
        read("what did Ana say last week", today()).text,
        "what did Ana say"
    );
}

#[test]
fn several_expressions_span_from_the_first_to_the_last() {
    assert_eq!(
        window("between March and May"),
        None,
        "months without lead words stay words"
    );
    assert_eq!(
        window("in March or in May"),
        span("2026-03-01", "2026-05-31")
    );
}

#[test]
fn the_latest_is_asked_with_now_currently_or_last_time() {
    for query in [
        "where do they live now",
        "Where does Maya currently work?",
        "what did the plumber say last time",
        "the most recent plan",
        "is he still at the bank",
    ] {
        assert!(read(query, today()).latest, "{query}");
    }
    for query in ["where did they live", "what did the plumber say"] {
        assert!(!read(query, today()).latest, "{query}");
    }
}

#[test]
fn a_query_of_date_words_only_keeps_its_text() {
    let asked = read("in May", today());
    assert_eq!(asked.text, "in May");
    assert!(asked.window.is_some());
}

use proptest::prelude::*;

proptest! {
    /// Whatever the query (words, numbers, dates out of range, any script), reading it
    /// never panics, a window it finds runs forwards, and the text searched is never empty
    /// when the query has a word.
    #[test]
    fn any_query_reads_without_panicking(
        words in proptest::collection::vec(
            prop_oneof![
                proptest::sample::select(vec![
                    "in", "on", "since", "early", "late", "last", "past", "this", "ago", "a",
                    "may", "feb", "sept", "december", "week", "weekend", "month", "year",
                    "days", "weeks", "months", "years", "monday", "yesterday", "today", "now",
                    "31st", "0", "999", "1000", "2199", "2200", "1969", "9999-99-99",
                    "2026-02-30", "2026-02-28", "31", "30", "29",
                ]).prop_map(str::to_string),
                "\\PC{0,12}",
            ],
            0..10,
        ),
        days in -800_000i64..800_000,
    ) {
        let today = NaiveDate::from_ymd_opt(2026, 12, 2).unwrap() + chrono::Duration::days(days);
        let query = words.join(" ");
        let asked = read(&query, today);
        if let Some((first, last)) = asked.window {
            prop_assert!(first <= last, "{query}: {first} > {last}");
        }
        if query.chars().any(char::is_alphanumeric) {
            prop_assert!(asked.text.chars().any(char::is_alphanumeric), "{query}");
        }
    }
}

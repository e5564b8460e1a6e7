//! Time in search over a year of daily logs: an old fact is not buried by recent logs
//! that share a word with its question, the newer of two statements of a changed fact
//! comes first, and a question that names a month gets that month's logs.

use super::*;

/// The day the searches are made on.
fn today() -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, 12, 2).unwrap()
}

/// Everyday lines, each sharing a common word or two with the questions below.
const FILLER: [&str; 6] = [
    "Sam said the weekend was busy with the kids.",
    "Need to call someone about the car someday.",
    "Saw live music downtown after work.",
    "Talked about the weather and what to cook.",
    "Said hello to the neighbours, they say the street is noisy.",
    "The team decided nothing much today.",
];

/// A workspace with a daily log on each of the 366 days before [`today`]: each has two
/// filler lines, and the logs named in `facts` have their line too.
fn year_of_logs(facts: &[(&str, &str)]) -> (tempfile::TempDir, Workspace) {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::open_or_create(&dir.path().join("ws")).unwrap();
    for back in 1..=366 {
        let day = today() - chrono::Duration::days(back);
        let name = day.format("%Y-%m-%d").to_string();
        let mut text = format!("# {name}\n\n## 18:00\n");
        for i in 0..2 {
            text.push_str(&format!(
                "- {}\n",
                FILLER[(back as usize + i * 3) % FILLER.len()]
            ));
        }
        for (on, fact) in facts {
            if *on == name {
                text.push_str(&format!("- {fact}\n"));
            }
        }
        write(ws.root(), &format!("memory/{name}.md"), &text);
    }
    (dir, ws)
}

fn ask(index: &MemoryIndex, text: &str, mode: SearchMode) -> Vec<SearchHit> {
    index
        .search(&SearchQuery {
            today: Some(today()),
            corpus: Corpus::Memory,
            mode: Some(mode),
            limit: 5,
            ..SearchQuery::new(text)
        })
        .unwrap()
        .results
}

#[test]
fn a_fact_said_once_a_year_ago_is_in_the_top_three() {
    let (_dir, ws) = year_of_logs(&[(
        "2025-12-04",
        "The plumber said the boiler pressure valve must be replaced before winter.",
    )]);
    let index = MemoryIndex::open(&ws, options()).unwrap();
    index.sync().unwrap();
    let hits = ask(
        &index,
        "What did the plumber say about the boiler valve?",
        SearchMode::Keyword,
    );
    let at = paths(&hits)
        .iter()
        .position(|p| *p == "memory/2025-12-04.md");
    assert!(at.is_some_and(|at| at < 3), "{:?}", paths(&hits));
    assert_eq!(
        hits[at.unwrap()].day.as_deref(),
        Some("2025-12-04"),
        "a hit shows its day"
    );
}

#[test]
fn of_two_statements_of_a_changed_fact_the_newer_comes_first() {
    let (_dir, ws) = year_of_logs(&[
        ("2026-03-10", "We live in Lisbon, by the river."),
        (
            "2026-10-20",
            "We moved to Porto, we live near the market now.",
        ),
    ]);
    let index = MemoryIndex::open(&ws, options()).unwrap();
    index.sync().unwrap();
    let hits = ask(&index, "Where do we live now?", SearchMode::Keyword);
    assert_eq!(
        &paths(&hits)[..2],
        ["memory/2026-10-20.md", "memory/2026-03-10.md"],
        "the newer first, the older still above logs that only share a word"
    );
    // Asked without "now", the older statement still comes before the filler.
    let hits = ask(&index, "where did we live", SearchMode::Keyword);
    assert!(
        paths(&hits)[..2].contains(&"memory/2026-03-10.md"),
        "{:?}",
        paths(&hits)
    );
}

#[test]
fn what_was_decided_in_may_returns_mays_logs_first() {
    let (_dir, ws) = year_of_logs(&[
        ("2026-01-15", "We decided to repaint the hallway green."),
        ("2026-05-07", "We decided to book the ferry to the islands."),
        ("2026-05-21", "We decided to sell the old bike."),
        ("2026-09-02", "We decided to plant tomatoes next spring."),
        ("2026-11-28", "We decided on the blue sofa."),
    ]);
    let index = MemoryIndex::open(&ws, options()).unwrap();
    index.sync().unwrap();
    let hits = ask(&index, "what did we decide in May", SearchMode::Keyword);
    let mut first: Vec<&str> = paths(&hits)[..2].to_vec();
    first.sort();
    assert_eq!(
        first,
        ["memory/2026-05-07.md", "memory/2026-05-21.md"],
        "{:?}",
        paths(&hits)
    );
    assert!(hits[..2]
        .iter()
        .all(|h| h.day.as_deref().is_some_and(|d| d.starts_with("2026-05"))));
    // "last week" asks for the days of the week before today's.
    let hits = ask(&index, "what did we decide last week", SearchMode::Keyword);
    assert_eq!(
        paths(&hits)[0],
        "memory/2026-11-28.md",
        "{:?}",
        paths(&hits)
    );
}

#[test]
fn recency_off_ranks_logs_by_their_words_alone() {
    // Days whose logs hold the same filler, so that only their age tells them apart.
    let (_dir, ws) = year_of_logs(&[
        ("2025-12-11", "Bought winter tyres for the car."),
        ("2026-11-30", "Bought winter tyres for the car."),
    ]);
    let ranked = |strength: f64| {
        let index = MemoryIndex::open(
            &ws,
            IndexOptions {
                recency_strength: strength,
                ..options()
            },
        )
        .unwrap();
        index.sync().unwrap();
        let hits = ask(&index, "winter tyres", SearchMode::Keyword);
        (hits[0].score, hits[1].score, hits[0].path.clone())
    };
    let (newer, older, first) = ranked(cairn_memory::index::RECENCY_STRENGTH);
    assert_eq!(first, "memory/2026-11-30.md");
    assert!(
        older < newer && older > 0.8 * newer,
        "{newer} {older}: a tie settled, not a cliff"
    );
    let (a, b, _) = ranked(0.0);
    assert_eq!(a, b, "off: the same words score the same");
}

#[test]
fn a_session_is_dated_by_the_day_it_began() {
    let (_dir, ws) = fixture();
    let index = MemoryIndex::open(&ws, options()).unwrap();
    index.sync().unwrap();
    let hits = index
        .search(&SearchQuery {
            corpus: Corpus::Sessions,
            ..query("where is the bicycle parked")
        })
        .unwrap()
        .results;
    assert_eq!(hits[0].path, "sessions/0001.jsonl");
    assert_eq!(hits[0].day.as_deref(), Some("2026-03-02"));
    // Asked about another month, the session still comes, with the days asked about first.
    let asked = index
        .search(&SearchQuery {
            corpus: Corpus::Sessions,
            ..query("where did I park the bicycle in March")
        })
        .unwrap()
        .results;
    assert_eq!(asked[0].path, "sessions/0001.jsonl");
}

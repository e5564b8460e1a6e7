//! The generated conversations: for each person a year (or `--months`) of session days
//! with the workspace's user, two or three a week, each day 10 to 30 turns of small talk
//! with the fact-bearing turns of the person's plans placed among them; then the questions,
//! chosen by category from what the plans ask. Everything is drawn from one seeded random
//! source, so a seed always writes the same files and asks the same questions.

use std::path::Path;

use anyhow::Context as _;
use chrono::{Days, Months, NaiveDate};
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use rand::{Rng, SeedableRng};
use serde_json::json;

use super::facts::{self, shared_words, Calendar, Category, Plan};
use super::words::{self, NAMES};

/// The last day of every generated conversation.
pub const END: NaiveDate = match NaiveDate::from_ymd_opt(2026, 11, 30) {
    Some(date) => date,
    None => panic!("not a date"),
};

/// The share of each person's questions by category (paraphrases, which need wording
/// that avoids the evidence's words, are as many as their facts allow).
const SHARES: [(Category, f64); 5] = [
    (Category::Single, 0.30),
    (Category::Multi, 0.10),
    (Category::Temporal, 0.24),
    (Category::Changed, 0.06),
    (Category::Paraphrase, 0.30),
];

/// A turn of a conversation.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Turn {
    pub by_user: bool,
    pub text: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Day {
    pub date: NaiveDate,
    /// The id of the day's session transcript.
    pub session: String,
    pub turns: Vec<Turn>,
}

/// Where a turn is: its day and its place in the day (both from 0).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct At {
    pub day: usize,
    pub turn: usize,
}

/// How a conversation is written into its workspace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Form {
    /// `memory/YYYY-MM-DD.md`, a heading then one `Speaker: text` line per turn.
    Logs,
    /// `sessions/<id>.jsonl`, a header, the title, then one message per turn.
    Sessions,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conversation {
    pub user: String,
    pub other: String,
    pub days: Vec<Day>,
}

/// The first line of a turn in either form: a daily log has its heading and a blank line
/// before the turns, a session its header and its title.
const FIRST_TURN_LINE: usize = 3;

impl Conversation {
    pub fn speaker(&self, turn: &Turn) -> &str {
        if turn.by_user {
            &self.user
        } else {
            &self.other
        }
    }

    /// The turn at `at` as a daily log line: `Speaker: text`.
    pub fn line(&self, at: At) -> String {
        let turn = &self.days[at.day].turns[at.turn];
        format!("{}: {}", self.speaker(turn), turn.text)
    }

    /// The workspace-relative path and 1-based line of the turn at `at`.
    pub fn locate(&self, form: Form, at: At) -> (String, usize) {
        (
            Self::path(form, &self.days[at.day]),
            at.turn + FIRST_TURN_LINE,
        )
    }

    fn path(form: Form, day: &Day) -> String {
        match form {
            Form::Logs => cairn_memory::daily_log::path(day.date),
            Form::Sessions => format!("sessions/{}.jsonl", day.session),
        }
    }

    /// Writes every day in `form` under the workspace at `root`.
    pub fn write(&self, form: Form, root: &Path) -> anyhow::Result<()> {
        for day in &self.days {
            let text = match form {
                Form::Logs => self.log_text(day),
                Form::Sessions => self.session_text(day)?,
            };
            let file = root.join(Self::path(form, day));
            if let Some(dir) = file.parent() {
                std::fs::create_dir_all(dir)?;
            }
            std::fs::write(&file, text)
                .with_context(|| format!("cannot write {}", file.display()))?;
        }
        Ok(())
    }

    fn log_text(&self, day: &Day) -> String {
        let mut text = format!("{}\n", cairn_memory::daily_log::heading(day.date));
        for turn in &day.turns {
            text.push_str(&format!("{}: {}\n", self.speaker(turn), turn.text));
        }
        text
    }

    /// The day as Cairn writes a session: a header line, the title, then the messages
    /// (the user's as `user`, the other person's as `assistant`), a minute apart from 19:00.
    fn session_text(&self, day: &Day) -> anyhow::Result<String> {
        let at = |minute: usize| {
            let time = day.date.and_hms_opt(19, 0, 0).unwrap_or_default()
                + chrono::Duration::minutes(minute as i64);
            time.format("%Y-%m-%dT%H:%M:%S.000Z").to_string()
        };
        let header = cairn_protocol::session::SessionHeader::new(day.session.clone(), at(0));
        let mut lines = vec![
            serde_json::to_string(&header)?,
            json!({"type": "session_info", "id": "00000000", "parent_id": null, "ts": at(0),
                   "title": format!("Chat with {}", self.other)})
            .to_string(),
        ];
        for (n, turn) in day.turns.iter().enumerate() {
            let text = format!("{}: {}", self.speaker(turn), turn.text);
            let mut message = json!({"role": if turn.by_user { "user" } else { "assistant" },
                                     "content": [{"type": "text", "text": text}]});
            if !turn.by_user {
                message["stop_reason"] = json!("end_turn");
            }
            let parent = if n == 0 {
                "00000000".to_string()
            } else {
                format!("{:08x}", n)
            };
            lines.push(
                json!({"type": "message", "id": format!("{:08x}", n + 1), "parent_id": parent,
                       "ts": at(n + 1), "message": message})
                .to_string(),
            );
        }
        Ok(lines.join("\n") + "\n")
    }
}

/// A question, with the turns that answer it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Question {
    pub category: Category,
    pub text: String,
    pub evidence: Vec<At>,
    /// For a changed fact: the turn with the older value.
    pub older: Option<At>,
    /// A word of the answer, held by the first evidence turn.
    pub answer: String,
}

/// One person's conversation and the questions about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Person {
    pub conversation: Conversation,
    pub questions: Vec<Question>,
    /// Every fact-bearing turn (the exact-line questions copy some).
    pub facts: Vec<At>,
}

/// What a seed generates.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Generated {
    pub people: Vec<Person>,
    /// The day searches are made on: the day after the last session.
    pub today: NaiveDate,
}

/// `people` conversations over `months` months ending on [`END`], about `questions`
/// questions in all.
pub fn generate(seed: u64, people: usize, months: u32, questions: usize) -> Generated {
    let mut rng = StdRng::seed_from_u64(seed);
    let start = END
        .checked_sub_months(Months::new(months))
        .and_then(|d| d.checked_add_days(Days::new(1)))
        .unwrap_or(END);
    let today = END.checked_add_days(Days::new(1)).unwrap_or(END);
    let mut names: Vec<&str> = NAMES.to_vec();
    names.shuffle(&mut rng);
    let user = names.pop().unwrap_or("Sam");
    let wanted = questions.div_ceil(people.max(1));
    let people = (0..people)
        .map(|n| {
            let other = names[n % names.len()];
            person(&mut rng, start, today, user, other, wanted)
        })
        .collect();
    Generated { people, today }
}

/// Two or three days a week from `start` to [`END`] (which is always one).
fn session_days(rng: &mut StdRng, start: NaiveDate) -> Vec<NaiveDate> {
    let mut dates = Vec::new();
    let mut week = start;
    while week <= END {
        let mut days: Vec<u64> = (0..7).collect();
        days.shuffle(rng);
        let mut chosen: Vec<u64> = days[..rng.random_range(2..=3)].to_vec();
        chosen.sort_unstable();
        for offset in chosen {
            if let Some(date) = week
                .checked_add_days(Days::new(offset))
                .filter(|d| *d <= END)
            {
                dates.push(date);
            }
        }
        week = week
            .checked_add_days(Days::new(7))
            .unwrap_or(END.succ_opt().unwrap_or(END));
    }
    if dates.last() != Some(&END) {
        dates.push(END);
    }
    dates
}

fn person(
    rng: &mut StdRng,
    start: NaiveDate,
    today: NaiveDate,
    user: &str,
    other: &str,
    wanted: usize,
) -> Person {
    let dates = session_days(rng, start);
    let plans = facts::plans(
        rng,
        &Calendar {
            dates: &dates,
            today,
        },
        other,
    );
    // Each day's fact turns: (plan, line) pairs.
    let mut on_day: Vec<Vec<(usize, usize)>> = vec![Vec::new(); dates.len()];
    for (p, plan) in plans.iter().enumerate() {
        for (l, line) in plan.lines.iter().enumerate() {
            on_day[line.day].push((p, l));
        }
    }
    let mut placed: Vec<Vec<At>> = plans
        .iter()
        .map(|p| vec![At { day: 0, turn: 0 }; p.lines.len()])
        .collect();
    let mut days = Vec::with_capacity(dates.len());
    for (d, date) in dates.iter().enumerate() {
        let facts = &on_day[d];
        let total = rng.random_range(10..=30).max(facts.len() + 6);
        let mut slots: Vec<usize> = (1..total).collect();
        slots.shuffle(rng);
        let mut turns: Vec<Option<Turn>> = vec![None; total];
        for (&(p, l), &slot) in facts.iter().zip(&slots) {
            let line = &plans[p].lines[l];
            turns[slot] = Some(Turn {
                by_user: line.by_user,
                text: line.text.clone(),
            });
            placed[p][l] = At { day: d, turn: slot };
        }
        let mut by_user = rng.random_bool(0.5);
        let turns = turns
            .into_iter()
            .map(|turn| {
                by_user = !by_user;
                turn.unwrap_or_else(|| Turn {
                    by_user,
                    text: words::small_talk(rng),
                })
            })
            .collect();
        days.push(Day {
            date: *date,
            session: session_id(rng, *date),
            turns,
        });
    }
    let conversation = Conversation {
        user: user.to_string(),
        other: other.to_string(),
        days,
    };
    let (questions, facts) = questions(rng, &conversation, &plans, &placed, wanted);
    Person {
        conversation,
        questions,
        facts,
    }
}

/// A session id shaped like the app's (a version 7 UUID: the day's time, then random bits).
fn session_id(rng: &mut StdRng, date: NaiveDate) -> String {
    let millis = date
        .and_hms_opt(19, 0, 0)
        .map_or(0, |t| t.and_utc().timestamp_millis()) as u64;
    format!(
        "{:08x}-{:04x}-7{:03x}-{:04x}-{:012x}",
        millis >> 16,
        millis & 0xffff,
        rng.random_range(0..0x1000u32),
        0x8000 | rng.random_range(0..0x4000u32),
        rng.random_range(0..1u64 << 48)
    )
}

/// The questions the plans ask, by category as [`SHARES`] says, `wanted` in all when
/// there are that many; and every fact-bearing turn.
fn questions(
    rng: &mut StdRng,
    conversation: &Conversation,
    plans: &[Plan],
    placed: &[Vec<At>],
    wanted: usize,
) -> (Vec<Question>, Vec<At>) {
    let mut pool: Vec<Question> = Vec::new();
    let mut facts = Vec::new();
    for (plan, at) in plans.iter().zip(placed) {
        facts.extend(at.iter().copied());
        for asked in &plan.asked {
            let question = Question {
                category: asked.category,
                text: asked.text.clone(),
                evidence: asked.evidence.iter().map(|&i| at[i]).collect(),
                older: asked.older.map(|i| at[i]),
                answer: asked.answer.clone(),
            };
            let keeps_to_its_rule = asked.category != Category::Paraphrase
                || shared_words(&question.text, &conversation.line(question.evidence[0])) <= 1;
            if keeps_to_its_rule {
                pool.push(question);
            }
        }
    }
    pool.shuffle(rng);
    let mut chosen: Vec<Question> = Vec::new();
    let mut rest: Vec<Question> = Vec::new();
    for (category, share) in SHARES {
        let quota = (wanted as f64 * share).round() as usize;
        let mut of = pool.iter().filter(|q| q.category == category).cloned();
        chosen.extend(of.by_ref().take(quota));
        rest.extend(of);
    }
    let missing = wanted.saturating_sub(chosen.len());
    chosen.extend(rest.into_iter().take(missing));
    chosen.sort_by_key(|q| (q.category, q.evidence.first().map(|a| (a.day, a.turn))));
    (chosen, facts)
}

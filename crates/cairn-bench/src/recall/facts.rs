//! What the generator knows about each person, as plans: the fact-bearing turns to place
//! (each on a chosen day) and the questions those turns answer, written from the facts
//! alone. Every fact family draws its values without repeats within a person, so each
//! question has one answer.

use chrono::{Datelike, NaiveDate};
use rand::rngs::StdRng;
use rand::seq::{IndexedRandom, SliceRandom};
use rand::Rng;

use super::values::*;
use super::words::{content_words, pick, NAMES};

/// The kinds of question.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Category {
    /// A fact stated once, in one turn.
    Single,
    /// Needs two turns on different days; both are evidence.
    Multi,
    /// Asked with a date expression (or "when"); the evidence is on the right day.
    Temporal,
    /// A fact stated, then changed months later; the newer turn is the evidence.
    Changed,
    /// Shares at most one content word with its evidence.
    Paraphrase,
}

impl Category {
    pub const ALL: [Category; 5] = [
        Category::Single,
        Category::Multi,
        Category::Temporal,
        Category::Changed,
        Category::Paraphrase,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Category::Single => "single",
            Category::Multi => "multi",
            Category::Temporal => "temporal",
            Category::Changed => "changed",
            Category::Paraphrase => "paraphrase",
        }
    }
}

/// A fact-bearing turn, to be placed on day `day` (an index into the session days).
#[derive(Debug, Clone)]
pub struct Line {
    pub day: usize,
    /// Said by the workspace's user rather than the other person.
    pub by_user: bool,
    pub text: String,
}

/// A question about the lines of one plan (`evidence` and `older` index `Plan::lines`).
#[derive(Debug, Clone)]
pub struct Asked {
    pub category: Category,
    pub text: String,
    pub evidence: Vec<usize>,
    pub older: Option<usize>,
    /// A word of the answer, which the first evidence line holds.
    pub answer: String,
}

#[derive(Debug, Clone, Default)]
pub struct Plan {
    pub lines: Vec<Line>,
    pub asked: Vec<Asked>,
}

/// The session days of one conversation, and the day searches are made on.
pub struct Calendar<'a> {
    pub dates: &'a [NaiveDate],
    pub today: NaiveDate,
}

impl Calendar<'_> {
    /// A day between the fractions `from` and `to` of the span (by index).
    fn day_between(&self, rng: &mut StdRng, from: f64, to: f64) -> usize {
        let n = self.dates.len();
        let lo = ((n as f64 * from) as usize).min(n - 1);
        let hi = ((n as f64 * to) as usize).clamp(lo + 1, n);
        rng.random_range(lo..hi)
    }

    /// The months the span covers, each with its session days.
    fn months(&self) -> Vec<(NaiveDate, Vec<usize>)> {
        let mut months: Vec<(NaiveDate, Vec<usize>)> = Vec::new();
        for (i, date) in self.dates.iter().enumerate() {
            let first = date.with_day(1).unwrap_or(*date);
            match months.last_mut() {
                Some((m, days)) if *m == first => days.push(i),
                _ => months.push((first, vec![i])),
            }
        }
        months
    }

    /// "in May", or "in November 2025" when the span holds two Novembers.
    fn in_month(&self, month: NaiveDate) -> String {
        let twice = self
            .months()
            .iter()
            .filter(|(m, _)| m.month() == month.month())
            .count()
            > 1;
        if twice {
            format!("in {}", month.format("%B %Y"))
        } else {
            format!("in {}", month.format("%B"))
        }
    }
}

/// Every plan for one person, `other` (the one the workspace's user talks with).
pub fn plans(rng: &mut StdRng, cal: &Calendar, other: &str) -> Vec<Plan> {
    let mut plans = Vec::new();
    singles(rng, cal, other, &mut plans);
    multis(rng, cal, other, &mut plans);
    changes(rng, cal, other, &mut plans);
    temporal(rng, cal, other, &mut plans);
    plans
}

/// `n` distinct values of `pool`, in a random order.
fn distinct<T: Copy>(rng: &mut StdRng, pool: &[T], n: usize) -> Vec<T> {
    let mut all: Vec<T> = pool.to_vec();
    all.shuffle(rng);
    all.truncate(n);
    all
}

/// A fact stated once, asked plainly and (when the wording allows) in other words.
fn single(
    cal: &Calendar,
    rng: &mut StdRng,
    said: String,
    plain: String,
    other_words: String,
    answer: &str,
) -> Plan {
    let day = cal.day_between(rng, 0.0, 1.0);
    let mut asked = vec![Asked {
        category: Category::Single,
        text: plain,
        evidence: vec![0],
        older: None,
        answer: answer.to_string(),
    }];
    asked.push(Asked {
        category: Category::Paraphrase,
        text: other_words,
        evidence: vec![0],
        older: None,
        answer: answer.to_string(),
    });
    Plan {
        lines: vec![Line {
            day,
            by_user: false,
            text: said,
        }],
        asked,
    }
}

fn singles(rng: &mut StdRng, cal: &Calendar, p: &str, plans: &mut Vec<Plan>) {
    let (animal, other_word) = *PETS.choose(rng).unwrap_or(&PETS[0]);
    let pet = pick(rng, PET_NAMES);
    plans.push(single(
        cal,
        rng,
        format!("We got a {animal} from the shelter, we call him {pet}."),
        format!("What is the name of {p}'s {animal}?"),
        format!("How is {p}'s {other_word} named?"),
        pet,
    ));
    let (company, role) = (pick(rng, COMPANIES), pick(rng, ROLES));
    plans.push(single(
        cal,
        rng,
        format!("I start at {company} on Monday, as a {role}."),
        format!("Which company does {p} start at as a {role}?"),
        format!("Who is {p}'s employer?"),
        company.split(' ').next().unwrap_or(company),
    ));
    let hobby = pick(rng, HOBBIES);
    plans.push(single(
        cal,
        rng,
        format!("I've taken up {hobby}, the class is every Thursday."),
        format!("What hobby has {p} taken up?"),
        format!("Which pastime did {p} begin recently?"),
        hobby,
    ));
    let (kid, age) = (pick(rng, NAMES), rng.random_range(4..15));
    plans.push(single(
        cal,
        rng,
        format!("Our daughter {kid} turned {age} this week, we had a small party."),
        format!("How old did {p}'s daughter {kid} turn?"),
        format!("What age is {p}'s little girl?"),
        &age.to_string(),
    ));
    for (pro, other_word, advice) in distinct(rng, PROFESSIONALS, PROFESSIONALS.len()) {
        let advice = pick(rng, advice);
        plans.push(single(
            cal,
            rng,
            format!("The {pro} said I should {advice}."),
            format!("What did the {pro} tell {p} to do?"),
            format!("What did {p}'s {other_word} recommend?"),
            advice.split(' ').next_back().unwrap_or(advice),
        ));
    }
    let shops = distinct(rng, SHOPS, SHOPS.len());
    for (n, (item, other_word)) in distinct(rng, ITEMS, ITEMS.len()).into_iter().enumerate() {
        let shop = shops[n % shops.len()];
        let price = rng.random_range(2..90) * 10;
        plans.push(single(
            cal,
            rng,
            format!("I bought a {item} at {shop}, it was {price} euros."),
            format!("Where did {p} buy the {item}?"),
            format!("From which store did {p} get the {other_word}?"),
            shop.split(' ').next_back().unwrap_or(shop),
        ));
    }
    let names = distinct(rng, NAMES, RELATIONS.len());
    for ((relation, _), name) in distinct(rng, RELATIONS, RELATIONS.len())
        .into_iter()
        .zip(names)
    {
        let job = pick(rng, JOBS);
        plans.push(single(
            cal,
            rng,
            format!("My {relation} {name} works as a {job} now."),
            format!("What does {p}'s {relation} {name} work as?"),
            format!("What does {name} do for a living?"),
            job,
        ));
    }
    for (thing, other_word, values) in FAVOURITES {
        let value = pick(rng, values);
        plans.push(single(
            cal,
            rng,
            format!("My favourite {thing} is {value}, no contest."),
            format!("What is {p}'s favourite {thing}?"),
            format!("Which {other_word} does {p} like best?"),
            value,
        ));
    }
}

/// A trip named for its occasion on one day and its hotel on a later one; a friend's visit and where they
/// were taken.
fn multis(rng: &mut StdRng, cal: &Calendar, p: &str, plans: &mut Vec<Plan>) {
    let months = cal.months().len();
    let trips = months.min(OCCASIONS.len());
    let places = distinct(rng, DESTINATIONS, trips);
    let hotels = distinct(rng, HOTELS, trips);
    for ((occasion, dest), hotel) in distinct(rng, OCCASIONS, trips)
        .into_iter()
        .zip(places)
        .zip(hotels)
    {
        let a = cal.day_between(rng, 0.0, 0.9);
        let b = (a + rng.random_range(1..12)).min(cal.dates.len() - 1);
        if a == b {
            continue;
        }
        plans.push(Plan {
            lines: vec![
                Line {
                    day: a,
                    by_user: false,
                    text: format!("For {occasion} we're going to {dest}, just the two of us."),
                },
                Line {
                    day: b,
                    by_user: false,
                    text: format!("We booked the {hotel} in {dest}, breakfast included."),
                },
            ],
            asked: vec![Asked {
                category: Category::Multi,
                text: format!("Which hotel did {p} book for the trip for {occasion}?"),
                evidence: vec![0, 1],
                older: None,
                answer: hotel.split(' ').next_back().unwrap_or(hotel).to_string(),
            }],
        });
    }
    let visits = (months / 2).clamp(1, 5);
    let friends = distinct(rng, NAMES, visits);
    let cities = distinct(rng, CITIES, visits);
    for ((friend, city), restaurant) in
        friends
            .into_iter()
            .zip(cities)
            .zip(distinct(rng, RESTAURANTS, visits))
    {
        let a = cal.day_between(rng, 0.0, 0.8);
        let b = (a + rng.random_range(1..4)).min(cal.dates.len() - 1);
        if a == b {
            continue;
        }
        plans.push(Plan {
            lines: vec![
                Line {
                    day: a,
                    by_user: false,
                    text: format!("My old friend {friend} is coming to visit from {city}."),
                },
                Line {
                    day: b,
                    by_user: false,
                    text: format!(
                        "We took {friend} to {restaurant} for dinner, the fish was great."
                    ),
                },
            ],
            asked: vec![Asked {
                category: Category::Multi,
                text: format!("Where did {p} take the friend visiting from {city} for dinner?"),
                evidence: vec![0, 1],
                older: None,
                answer: restaurant
                    .split(' ')
                    .next_back()
                    .unwrap_or(restaurant)
                    .to_string(),
            }],
        });
    }
}

/// A fact stated early and changed later: (first, then, question), `{0}` the old value and
/// `{1}` the new one.
const CHANGES: &[(&[&str], &str, &str, &str)] = &[
    (
        CITIES,
        "We live in {0}, in a flat near the station.",
        "We moved to {1}, we live in a house now.",
        "Which city does {p} live in now?",
    ),
    (
        CARS,
        "I drive an old {0}, it still runs fine.",
        "I sold the {0}, now I drive a {1}.",
        "What car does {p} drive now?",
    ),
    (
        GYMS,
        "I go to the gym at {0} before work.",
        "I switched gyms, now I go to {1} before work.",
        "Which gym does {p} go to now?",
    ),
    (
        PHONES,
        "My phone is a {0}, the battery is fine.",
        "I got a new phone, a {1}, the battery is better.",
        "What phone does {p} have now?",
    ),
    (
        SALONS,
        "My hairdresser is at {0}, on the corner.",
        "I changed hairdresser, I go to {1} now.",
        "Which hairdresser does {p} go to now?",
    ),
    (
        CAFES,
        "My usual coffee place is {0}.",
        "My usual coffee place is {1} now, the other one closed.",
        "What is {p}'s usual coffee place now?",
    ),
];

fn changes(rng: &mut StdRng, cal: &Calendar, p: &str, plans: &mut Vec<Plan>) {
    for (pool, first, then, question) in CHANGES {
        let values = distinct(rng, pool, 2);
        let (Some(old), Some(new)) = (values.first(), values.get(1)) else {
            continue;
        };
        let a = cal.day_between(rng, 0.0, 0.35);
        let b = cal.day_between(rng, 0.6, 1.0);
        let fill = |t: &str| t.replace("{0}", old).replace("{1}", new);
        plans.push(Plan {
            lines: vec![
                Line {
                    day: a,
                    by_user: false,
                    text: fill(first),
                },
                Line {
                    day: b,
                    by_user: false,
                    text: fill(then),
                },
            ],
            asked: vec![Asked {
                category: Category::Changed,
                text: question.replace("{p}", p),
                evidence: vec![1],
                older: Some(0),
                answer: new.split(' ').next_back().unwrap_or(new).to_string(),
            }],
        });
    }
}

fn one(day: usize, by_user: bool, text: String, question: String, answer: &str) -> Plan {
    Plan {
        lines: vec![Line { day, by_user, text }],
        asked: vec![Asked {
            category: Category::Temporal,
            text: question,
            evidence: vec![0],
            older: None,
            answer: answer.to_string(),
        }],
    }
}

/// A decision and an outing in every month, something done last week, and dated events
/// asked with "when".
fn temporal(rng: &mut StdRng, cal: &Calendar, p: &str, plans: &mut Vec<Plan>) {
    let months = cal.months();
    let decisions = distinct(rng, DECISIONS, months.len());
    let outings = distinct(rng, OUTINGS, months.len());
    for (n, (month, days)) in months.iter().enumerate() {
        let when = cal.in_month(*month);
        if let Some(decision) = decisions.get(n) {
            let day = *days.choose(rng).unwrap_or(&days[0]);
            plans.push(one(
                day,
                true,
                format!("So it's settled, we decided to {decision}."),
                format!("What did {p} and I decide {when}?"),
                decision.split(' ').next_back().unwrap_or(decision),
            ));
        }
        if let Some((show, venue)) = outings.get(n) {
            let day = *days.choose(rng).unwrap_or(&days[0]);
            plans.push(one(
                day,
                false,
                format!("We saw {show} at the {venue} last night."),
                format!("What show did {p} see {when}?"),
                show.split(' ').next_back().unwrap_or(show),
            ));
        }
    }
    let last_week: Vec<usize> = (0..cal.dates.len())
        .filter(|&i| (2..=7).contains(&(cal.today - cal.dates[i]).num_days()))
        .collect();
    let events = distinct(rng, EVENTS, EVENTS.len());
    let mut events = events.into_iter();
    if let (Some(&day), Some((done, _))) = (last_week.choose(rng), events.next()) {
        plans.push(one(
            day,
            false,
            format!("Guess what, I {done} this morning."),
            format!("What did {p} do last week?"),
            done.split(' ').next_back().unwrap_or(done),
        ));
    }
    let dated = (cal.dates.len() / 10).clamp(1, 15);
    for (done, asked) in events.take(dated) {
        let day = cal.day_between(rng, 0.0, 0.95);
        plans.push(one(
            day,
            false,
            format!("Big day, I {done} today."),
            format!("When did {p} {asked}?"),
            done.split(' ').next_back().unwrap_or(done),
        ));
    }
}

/// Whether a paraphrase keeps to its rule: at most one content word of the question in
/// the evidence line.
pub fn shared_words(question: &str, evidence: &str) -> usize {
    let line = content_words(evidence);
    let mut asked = content_words(question);
    asked.sort();
    asked.dedup();
    asked.iter().filter(|w| line.contains(w)).count()
}

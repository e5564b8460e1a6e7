//! The words conversations are made of: names, the values facts take, and the small talk
//! around them. Small talk draws on the same everyday nouns the facts use (car, doctor,
//! trip, hotel, dog, bought ...), so a fact's words also recur on many days that say nothing
//! about it, as in a real year of chat.

use rand::rngs::StdRng;
use rand::seq::IndexedRandom;
use rand::Rng;

/// First names for the user, the people they talk with, and everyone mentioned.
pub const NAMES: &[&str] = &[
    "Maya", "Tomas", "Ines", "Arjun", "Leila", "Jonas", "Priya", "Mateo", "Hana", "Oskar", "Nadia",
    "Felix", "Greta", "Rafael", "Yara", "Emil", "Sofia", "Kenji", "Lotte", "Amir", "Clara",
    "Bruno", "Elif", "Marcus", "Noor", "Viktor", "Aiko", "Dario", "Freya", "Hugo", "Ingrid",
    "Jasper", "Kira", "Luca", "Mira", "Nils", "Olga", "Pablo", "Rosa", "Stefan", "Talia", "Umar",
    "Vera", "Wim", "Zara", "Anton", "Bea", "Cyrus", "Dana", "Esme",
];

/// The user's days: the nouns small talk is about.
const THINGS: &[&str] = &[
    "car",
    "bus",
    "train",
    "dog",
    "cat",
    "kitchen",
    "garden",
    "office",
    "laptop",
    "phone",
    "doctor",
    "dentist",
    "hotel",
    "trip",
    "flight",
    "weekend",
    "meeting",
    "project",
    "report",
    "deadline",
    "neighbour",
    "landlord",
    "bakery",
    "market",
    "gym",
    "bike",
    "coffee",
    "soup",
    "pasta",
    "bread",
    "rain",
    "wind",
    "heating",
    "washing machine",
    "fridge",
    "school",
    "parcel",
    "bill",
    "holiday",
    "concert",
    "match",
    "series",
    "book",
    "podcast",
    "recipe",
];

const PLACES: &[&str] = &[
    "the station",
    "the supermarket",
    "the park",
    "work",
    "the city centre",
    "the pharmacy",
    "the post office",
    "the library",
    "the high street",
    "the bakery",
    "the market",
    "the gym",
    "the school gate",
    "the garage",
    "the harbour",
    "the cinema",
];

const ADJECTIVES: &[&str] = &[
    "busy",
    "quiet",
    "strange",
    "long",
    "lovely",
    "exhausting",
    "slow",
    "chaotic",
    "fine",
    "grey",
    "sunny",
    "cold",
    "boring",
    "hectic",
    "relaxed",
    "weird",
    "noisy",
    "calm",
];

const WEATHER: &[&str] = &[
    "rain", "wind", "fog", "heat", "drizzle", "sleet", "storm", "frost", "humidity", "snow",
];

const FOODS: &[&str] = &[
    "lentil soup",
    "pizza",
    "curry",
    "noodles",
    "a salad",
    "roast chicken",
    "pancakes",
    "dumplings",
    "risotto",
    "tacos",
    "fish pie",
    "a sandwich",
    "porridge",
    "stir fry",
    "chili",
    "lasagne",
    "omelette",
    "falafel",
];

const WEEKDAYS: &[&str] = &[
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
    "Sunday",
];

const RELATIVES: &[&str] = &[
    "mum",
    "dad",
    "sister",
    "brother",
    "aunt",
    "uncle",
    "cousin",
    "grandmother",
    "neighbour",
    "colleague",
    "boss",
    "flatmate",
];

const SHOWS: &[&str] = &[
    "that cooking show",
    "the news",
    "a documentary about whales",
    "the football",
    "an old western",
    "the quiz show",
    "a crime series",
    "the tennis",
    "a nature programme",
];

/// One line of small talk by a speaker: `{t}` a thing, `{p}` a place, `{a}` an adjective,
/// `{w}` weather, `{f}` a food, `{d}` a weekday, `{r}` a relative, `{s}` a show.
const SAID: &[&str] = &[
    "How was your {d}?",
    "Pretty {a}, the {w} kept me inside most of the day.",
    "The {t} was a problem again this morning.",
    "I went to {p} after lunch, it was {a}.",
    "We had {f} for dinner, nothing special.",
    "My {r} called about the {t} again.",
    "Work has been {a}, the {t} is taking forever.",
    "Did you watch {s} last night?",
    "I fell asleep during {s}, as usual.",
    "The {w} is supposed to last until {d}.",
    "I need to sort out the {t} before {d}.",
    "Traffic near {p} was {a} today.",
    "I made {f}, it turned out better than last time.",
    "My {r} wants to come over on {d}.",
    "Honestly the {t} can wait until next week.",
    "I walked past {p} and thought of you.",
    "The {t} at {p} is closed for repairs.",
    "Everyone at work is talking about the {t}.",
    "I'm so tired, the {t} kept me up.",
    "We should get {f} again sometime.",
    "It was {a} at {p}, lots of people around.",
    "The {w} ruined my plans for the {t}.",
    "I finally paid the {t}, one thing off the list.",
    "My {r} sent me a photo of their {t}.",
    "I'm thinking about the {t} all the time, it's silly.",
    "There was a queue at {p} again.",
    "Did you hear what happened with the {t} at {p}?",
    "My {r} says the {t} is fine, I'm not so sure.",
    "Lunch was {f} at my desk.",
    "The kids at {p} were {a} today.",
    "I read something about the {t} on the train.",
    "No news on the {t} yet.",
    "This {w} makes everyone {a}.",
    "I'll call my {r} on {d}.",
    "Can you believe it's {d} already?",
    "I've been meaning to fix the {t} for weeks.",
    "The doctor's waiting room was {a} again.",
    "Someone's dog was barking outside {p} all evening.",
    "I looked at hotel prices for a trip, then gave up.",
    "The car needs washing, the {w} made a mess of it.",
    "I bought {f} on the way home, too tired to cook.",
    "We talked about a holiday but decided nothing.",
];

const REPLIES: &[&str] = &[
    "Oh no, really?",
    "That sounds lovely.",
    "Ha, typical.",
    "How did that go?",
    "Same here, honestly.",
    "I know what you mean.",
    "Tell me more.",
    "That's annoying.",
    "Nice, good for you.",
    "Hmm, I'm not sure about that.",
    "Fair enough.",
    "Wow.",
    "Let's see how it goes.",
    "That makes sense.",
    "Sounds like a plan.",
    "Poor you.",
];

/// A line of small talk.
pub fn small_talk(rng: &mut StdRng) -> String {
    if rng.random_bool(0.3) {
        return pick(rng, REPLIES).to_string();
    }
    let mut line = pick(rng, SAID).to_string();
    for (slot, words) in [
        ("{t}", THINGS),
        ("{p}", PLACES),
        ("{a}", ADJECTIVES),
        ("{w}", WEATHER),
        ("{f}", FOODS),
        ("{d}", WEEKDAYS),
        ("{r}", RELATIVES),
        ("{s}", SHOWS),
    ] {
        while line.contains(slot) {
            line = line.replacen(slot, pick(rng, words), 1);
        }
    }
    line
}

/// One of `words` (the empty string for none).
pub fn pick<'a>(rng: &mut StdRng, words: &[&'a str]) -> &'a str {
    words.choose(rng).copied().unwrap_or_default()
}

/// Words a question shares with anything: they carry no content.
pub const STOPWORDS: &[&str] = &[
    "a", "an", "the", "and", "or", "of", "to", "in", "on", "at", "for", "with", "from", "by", "is",
    "are", "was", "were", "be", "been", "do", "does", "did", "has", "have", "had", "i", "me", "my",
    "we", "our", "us", "you", "your", "he", "she", "his", "her", "him", "they", "their", "them",
    "it", "its", "this", "that", "these", "those", "what", "which", "who", "whom", "where", "when",
    "how", "why", "there", "here", "now", "so", "as", "just", "all", "any", "some", "no", "not",
    "up", "out", "about", "into", "over", "after", "before", "s", "than", "then", "too", "very",
    "can", "will", "would", "should", "could", "get", "got", "one", "new", "old", "last", "next",
];

/// The content words of `text`: lowercased, split at anything but letters and digits,
/// stopwords left out, each cut to a crude stem (so "moved" and "move" are one word).
pub fn content_words(text: &str) -> Vec<String> {
    text.split(|c: char| !c.is_alphanumeric())
        .map(str::to_lowercase)
        .filter(|w| !w.is_empty() && !STOPWORDS.contains(&w.as_str()))
        .map(|w| stem(&w))
        .collect()
}

fn stem(word: &str) -> String {
    for suffix in ["ing", "ed", "es", "s"] {
        if let Some(root) = word.strip_suffix(suffix) {
            if root.chars().count() >= 3 {
                return root.trim_end_matches('e').to_string();
            }
        }
    }
    word.trim_end_matches('e').to_string()
}

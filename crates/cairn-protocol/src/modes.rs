//! Choices a conversation runs with: how queued messages are delivered, and how much the
//! model reasons before it answers.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// How a queue (steering, follow-ups) is delivered at a save point.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum QueueMode {
    /// Every waiting message at once, as one turn.
    #[default]
    All,
    /// The oldest waiting message; the next waits for the next save point.
    OneAtATime,
}

impl QueueMode {
    pub fn name(self) -> &'static str {
        match self {
            QueueMode::All => "all",
            QueueMode::OneAtATime => "one-at-a-time",
        }
    }
}

/// How much the model reasons before it answers. `Off` sends no reasoning request at
/// all; the others map to what the provider takes (a budget of thinking tokens, a
/// reasoning effort, a template's switch).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "snake_case")]
pub enum ThinkingLevel {
    #[default]
    Off,
    Low,
    Medium,
    High,
}

impl ThinkingLevel {
    pub const ALL: [ThinkingLevel; 4] = [
        ThinkingLevel::Off,
        ThinkingLevel::Low,
        ThinkingLevel::Medium,
        ThinkingLevel::High,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ThinkingLevel::Off => "off",
            ThinkingLevel::Low => "low",
            ThinkingLevel::Medium => "medium",
            ThinkingLevel::High => "high",
        }
    }

    /// The level named `name` (`off`, `low`, `medium`, `high`).
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|l| l.name().eq_ignore_ascii_case(name.trim()))
    }
}

impl std::fmt::Display for ThinkingLevel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_read_back_and_serde_agrees() {
        for level in ThinkingLevel::ALL {
            assert_eq!(ThinkingLevel::parse(level.name()), Some(level));
            assert_eq!(
                serde_json::to_value(level).unwrap(),
                serde_json::json!(level.name())
            );
        }
        assert_eq!(ThinkingLevel::parse("extreme"), None);
        for mode in [QueueMode::All, QueueMode::OneAtATime] {
            assert_eq!(
                serde_json::to_value(mode).unwrap(),
                serde_json::json!(mode.name())
            );
        }
    }
}

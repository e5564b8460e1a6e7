//! Pictures in a run: the user's pictures join their message, a model that does not see
//! is said to get their text only, and a model that sees is sent each picture's scaled
//! copy (made once, in the document reader's child, and kept in memory).

use std::collections::HashMap;

use cairn_protocol::{AgentEvent, ContentBlock, Message, NoticeLevel, Picture};

use super::flow::{Flow, Run};

impl Run {
    /// Records the user's message: its text, then its pictures.
    pub(super) async fn add_user_message_with(
        &mut self,
        text: String,
        pictures: Vec<Picture>,
    ) -> Flow {
        self.inner.events.emit(AgentEvent::MessageStart {
            role: "user".into(),
        });
        let mut content = Vec::with_capacity(1 + pictures.len());
        if !text.is_empty() || pictures.is_empty() {
            content.push(ContentBlock::Text { text });
        }
        let count = pictures.len();
        content.extend(pictures.into_iter().map(ContentBlock::Image));
        self.record_message(Message::User { content }).await?;
        let info = self.settings.provider.info();
        if count > 0 && !info.vision {
            let given = if count == 1 {
                "the text read from the picture and its size, not the picture itself"
            } else {
                "the text read from the pictures and their sizes, not the pictures themselves"
            };
            self.notice(
                NoticeLevel::Info,
                format!("{} does not see pictures: it was given {given}", info.model),
            );
        }
        Ok(())
    }

    /// For a model that sees, attaches the copy it is sent to every picture in the context
    /// that has none. A picture whose file is gone is told as text, with a notice.
    pub(super) async fn attach_pictures(&mut self) {
        let info = self.settings.provider.info();
        if !info.vision {
            return;
        }
        let unsent = self.inner.session().unsent_pictures();
        if unsent.is_empty() {
            return;
        }
        let attachments = self.inner.workspace.attachments().clone();
        let side = info.image_max_side;
        let made = tokio::task::spawn_blocking(move || {
            let mut copies = HashMap::new();
            let mut problems = Vec::new();
            for picture in unsent {
                match attachments.sent_copy(&picture, side) {
                    Ok(copy) => {
                        copies.insert(picture.sha256.clone(), copy);
                    }
                    Err(why) => problems.push(why),
                }
            }
            (copies, problems)
        })
        .await;
        let (copies, problems) = made.unwrap_or_default();
        for why in problems {
            self.notice(
                NoticeLevel::Warning,
                format!("{why}; the model is told of it as text"),
            );
        }
        self.inner.session().attach_sent(&copies);
    }
}

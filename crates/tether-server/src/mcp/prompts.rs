//! The prompts a client offers its user: continue a past chat, summarise past work on a topic.

use rmcp::handler::server::router::prompt::PromptRouter;
use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{PromptMessage, Role};
use rmcp::{prompt, prompt_router, schemars};
use serde::Deserialize;

use super::server::TetherMcp;

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub(crate) struct ContinueArgs {
    /// Session id or nickname
    session: String,
}

#[derive(Debug, Deserialize, schemars::JsonSchema)]
pub(crate) struct TopicArgs {
    /// What to look for, e.g. a feature or a file
    topic: String,
}

#[prompt_router(vis = "pub(crate)")]
impl TetherMcp {
    pub(crate) fn prompts() -> PromptRouter<Self> {
        Self::prompt_router()
    }

    /// Continue the work of a past chat (Cursor's, Claude Code's, Codex's or Gemini CLI's): reads
    /// its end and picks up from there
    #[prompt(name = "continue_session")]
    async fn continue_session(&self, Parameters(a): Parameters<ContinueArgs>) -> Vec<PromptMessage> {
        let s = a.session;
        vec![PromptMessage::new_text(
            Role::User,
            format!(
                "Continue the work of the earlier chat `{s}` (a Cursor, Claude Code, Codex or Gemini CLI chat). First call the tether tool session_read \
                 with session=\"{s}\" (read its last messages; page back with offset if needed), summarise \
                 where it stopped and what was left to do, then carry on from there."
            ),
        )]
    }

    /// Summarise what past chats did about a topic
    #[prompt(name = "summarize_work")]
    async fn summarize_work(&self, Parameters(a): Parameters<TopicArgs>) -> Vec<PromptMessage> {
        let topic = a.topic;
        vec![PromptMessage::new_text(
            Role::User,
            format!(
                "Summarise what my past Cursor chats did about \"{topic}\". Use the tether tool \
                 sessions_find with query=\"{topic}\" and project=\"all\", read the most relevant hits with \
                 session_read (small windows, `around` the topic), and give a dated summary with the chat ids."
            ),
        )]
    }
}

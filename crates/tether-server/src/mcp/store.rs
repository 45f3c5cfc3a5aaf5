//! rmcp's session store, in our SQLite: a client that initialised before a restart keeps its
//! `Mcp-Session-Id` afterwards instead of getting 404 (which Cursor shows as a red server).

use std::sync::Arc;

use rmcp::transport::streamable_http_server::session::{SessionState, SessionStore, SessionStoreError};
use tether_core::Tether;

pub(crate) struct SqliteSessions(pub(crate) Arc<Tether>);

#[async_trait::async_trait]
impl SessionStore for SqliteSessions {
    async fn load(&self, id: &str) -> Result<Option<SessionState>, SessionStoreError> {
        let (t, id) = (Arc::clone(&self.0), id.to_owned());
        let raw = tokio::task::spawn_blocking(move || t.mcp_sessions().load(&id)).await??;
        Ok(raw.map(|s| serde_json::from_str(&s)).transpose()?)
    }

    async fn store(&self, id: &str, state: &SessionState) -> Result<(), SessionStoreError> {
        let (t, id, s) = (Arc::clone(&self.0), id.to_owned(), serde_json::to_string(state)?);
        tokio::task::spawn_blocking(move || t.mcp_sessions().save(&id, &s)).await??;
        Ok(())
    }

    async fn delete(&self, id: &str) -> Result<(), SessionStoreError> {
        let (t, id) = (Arc::clone(&self.0), id.to_owned());
        tokio::task::spawn_blocking(move || t.mcp_sessions().delete(&id)).await??;
        Ok(())
    }
}

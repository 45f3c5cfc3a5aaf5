//! MCP over stdin/stdout (`tether mcp stdio`), for clients that start a process instead of
//! connecting. No doorbell and no runner here: stdio cannot push (Cursor ignores it there), and
//! runs must not die with a chat's stdio process; the daemon rings and runs. This process still
//! answers with the piggyback notice. Logs must go to stderr.

use std::sync::Arc;

use rmcp::ServiceExt;

use crate::{ServeError, Server, TetherMcp};

/// Serves MCP on stdin/stdout until the client closes it.
pub async fn serve_stdio(server: Arc<Server>) -> Result<(), ServeError> {
    let svc =
        TetherMcp::new(server).serve(rmcp::transport::stdio()).await.map_err(|e| ServeError::Stdio(e.to_string()))?;
    svc.waiting().await.map_err(|e| ServeError::Stdio(e.to_string()))?;
    Ok(())
}

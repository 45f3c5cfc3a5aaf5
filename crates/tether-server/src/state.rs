//! What every transport of one daemon shares: the engine, the credentials it checks (the MCP
//! token, which `token rotate` replaces while serving; the hook token), the GUI's logins, and
//! the MCP sessions' live state.

use std::sync::{Arc, RwLock};

use tether_core::Tether;

use crate::http::login::UiAuth;
use crate::mcp::sessions::Sessions;

/// What every HTTP route and MCP handler gets.
pub type Ctx = Arc<Server>;

pub struct Server {
    pub tether: Arc<Tether>,
    token: RwLock<String>,
    pub(crate) hook_token: String,
    pub(crate) ui: UiAuth,
    pub(crate) mcp: Sessions,
    /// Edit hooks waiting to be recorded (a bounded queue, one thread).
    pub(crate) edits: crate::edits::Edits,
    /// The webhook secret, read once it exists: an unchecked caller never makes Tether touch the
    /// keyring again and again.
    pub(crate) webhook_secret: std::sync::Mutex<Option<String>>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server").finish_non_exhaustive()
    }
}

impl Server {
    pub fn new(tether: Arc<Tether>, token: String, hook_token: String) -> Arc<Self> {
        Arc::new(Self {
            edits: crate::edits::Edits::start(Arc::clone(&tether)),
            tether,
            token: RwLock::new(token),
            hook_token,
            ui: UiAuth::default(),
            mcp: Sessions::default(),
            webhook_secret: Default::default(),
        })
    }

    pub(crate) fn token_matches(&self, given: &str) -> bool {
        tether_core::token::matches(&self.token.read().unwrap_or_else(|p| p.into_inner()), given)
    }

    /// Replaces the token in its store and in this server at once.
    pub fn rotate_token(&self) -> tether_core::Result<()> {
        let (new, _) = tether_core::token::rotate(&self.tether.paths)?;
        *self.token.write().unwrap_or_else(|p| p.into_inner()) = new;
        Ok(())
    }

    /// Edit hooks dropped since start because they came faster than they could be recorded.
    pub fn edit_hooks_dropped(&self) -> u64 {
        self.edits.dropped()
    }

    /// How many MCP sessions are connected.
    pub fn mcp_sessions(&self) -> usize {
        self.mcp.count()
    }
}

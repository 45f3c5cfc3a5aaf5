//! The GUI's logins: one-time codes (`tether open`'s link, 60 s, usable once) and the browser
//! sessions they became (an HttpOnly cookie). In memory: a restarted daemon asks the browser to
//! log in again, which `tether open` makes one command.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

const CODE_TTL: Duration = Duration::from_secs(60);
/// How long a login lasts.
pub(crate) const COOKIE_TTL: Duration = Duration::from_secs(30 * 24 * 3600);

/// One-time login codes and the browser sessions they became. In memory: a restarted daemon
/// asks the browser to log in again, which `tether open` makes one command.
#[derive(Default)]
pub(crate) struct UiAuth {
    codes: Mutex<HashMap<String, Instant>>,
    cookies: Mutex<HashMap<String, Instant>>,
}

impl UiAuth {
    pub(crate) fn new_code(&self) -> String {
        let code = tether_core::token::generate();
        let mut codes = self.codes.lock().unwrap_or_else(|p| p.into_inner());
        codes.retain(|_, at| at.elapsed() < CODE_TTL);
        codes.insert(code.clone(), Instant::now());
        code
    }

    /// Spends a code (once) and returns the new cookie value.
    pub(crate) fn redeem(&self, code: &str) -> Option<String> {
        let at = self.codes.lock().unwrap_or_else(|p| p.into_inner()).remove(code)?;
        (at.elapsed() < CODE_TTL).then(|| {
            let cookie = tether_core::token::generate();
            self.cookies.lock().unwrap_or_else(|p| p.into_inner()).insert(cookie.clone(), Instant::now());
            cookie
        })
    }

    pub(crate) fn cookie_ok(&self, value: &str) -> bool {
        let mut cookies = self.cookies.lock().unwrap_or_else(|p| p.into_inner());
        cookies.retain(|_, at| at.elapsed() < COOKIE_TTL);
        // Compared in constant time against each: the set is tiny.
        cookies.keys().any(|k| tether_core::token::matches(k, value))
    }
}

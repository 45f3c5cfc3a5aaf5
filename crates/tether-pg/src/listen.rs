//! Hearing the team database's board writes as they commit: one session of its own that
//! `LISTEN`s on `tether_board` (the schema's trigger notifies it whenever a board revision moves)
//! and calls back for each notification. It reconnects by itself; a notification missed while it
//! was away is the pollers' to catch (the rows are the truth, the notification only a wake-up).

use std::sync::Arc;
use std::time::Duration;

use tokio_postgres::AsyncMessage;

use crate::conn::{Target, runtime};

/// The channel the team schema's trigger notifies.
pub const CHANNEL: &str = "tether_board";

/// Listening; dropping it stops.
#[derive(Debug)]
pub struct Listening {
    task: tokio::task::JoinHandle<()>,
}

impl Drop for Listening {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Calls `heard` for every board write any machine commits (and once after each reconnect, since
/// writes may have been missed meanwhile), until the returned handle is dropped.
pub fn listen(target: Target, password: Option<String>, heard: Arc<dyn Fn() + Send + Sync>) -> Listening {
    let task = runtime().spawn(async move {
        let mut wait = Duration::from_millis(250);
        loop {
            match session(&target, password.as_deref(), &heard).await {
                Ok(()) => wait = Duration::from_millis(250),
                Err(e) => tracing::debug!(error = %e, "listening to the team database"),
            }
            tokio::time::sleep(wait).await;
            wait = (wait * 2).min(Duration::from_secs(5));
        }
    });
    Listening { task }
}

async fn session(target: &Target, password: Option<&str>, heard: &Arc<dyn Fn() + Send + Sync>) -> Result<(), String> {
    let mut config = target.config_for(password).map_err(|e| e.to_string())?;
    config.connect_timeout(Duration::from_secs(5));
    let tls = target.tls().map_err(|e| e.to_string())?;
    let (client, mut connection) = config.connect(tls).await.map_err(|e| e.to_string())?;
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<()>();
    let driver = tokio::spawn(async move {
        loop {
            match std::future::poll_fn(|cx| connection.poll_message(cx)).await {
                Some(Ok(AsyncMessage::Notification(_))) => {
                    if tx.send(()).is_err() {
                        return;
                    }
                }
                Some(Ok(_)) => {}
                Some(Err(_)) | None => return,
            }
        }
    });
    client.batch_execute(&format!("LISTEN {CHANNEL}")).await.map_err(|e| e.to_string())?;
    heard();
    while rx.recv().await.is_some() {
        // A burst of commits is one wake-up.
        while rx.try_recv().is_ok() {}
        heard();
    }
    driver.abort();
    Err("the listening session ended".into())
}

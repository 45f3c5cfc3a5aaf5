//! `tether signal …` / `tether signals …`: one thin call into the board per subcommand. At the
//! CLI you are the person, `human`.

use tether_core::Tether;
use tether_core::board::signals::{NewSignal, Recipient, Sender, SignalFilter};

use crate::cli::{SignalCmd, SignalsCmd};
use crate::output;

pub fn signal(t: &Tether, cmd: SignalCmd) -> anyhow::Result<()> {
    let b = t.board();
    match cmd {
        SignalCmd::Send { to, kind, body, reply_to, task, action_required, out } => {
            let new = NewSignal {
                to: Some(to),
                kind: Some(kind),
                body,
                reply_to,
                task,
                action_required: action_required.then_some(true),
            };
            let s = b.send_signal(&Sender::Human, &new)?;
            render(out.json, &s, output::signal_sent)
        }
        SignalCmd::Show { id, out } => {
            let d = b.signal(&id)?;
            render(out.json, &d, output::signal_detail)
        }
        SignalCmd::Reply { id, body, kind, out } => {
            let new = NewSignal { reply_to: Some(id), kind, body, ..Default::default() };
            let s = b.send_signal(&Sender::Human, &new)?;
            render(out.json, &s, output::signal_sent)
        }
    }
}

pub fn signals(t: &Tether, cmd: SignalsCmd) -> anyhow::Result<()> {
    let b = t.board();
    match cmd {
        SignalsCmd::List { to, from, agent, trace, open, limit, out } => {
            let list = b.signals(&SignalFilter { to, from, agent, trace, open, limit })?;
            render(out.json, list.as_slice(), output::signals)
        }
        SignalsCmd::Pending(out) => {
            let list = b.drain_signals(&Recipient::Human)?;
            render(out.json, list.as_slice(), output::inbox)
        }
    }
}

fn render<T: serde::Serialize + ?Sized>(json: bool, v: &T, text: fn(&T)) -> anyhow::Result<()> {
    if json {
        output::json(v)
    } else {
        text(v);
        Ok(())
    }
}

//! The `tether` binary: parses arguments and calls tether-core. No business logic here.

// `println!` and `print!` for this crate: a closed stdout (`tether … | head -c 1`) ends the
// process quietly instead of panicking, as std's do. Defined before the modules so it shadows
// std's in all of them.
macro_rules! println {
    () => { $crate::write_stdout(format_args!("\n")) };
    ($($arg:tt)*) => { $crate::write_stdout(format_args!("{}\n", format_args!($($arg)*))) };
}
macro_rules! print {
    ($($arg:tt)*) => { $crate::write_stdout(format_args!($($arg)*)) };
}

mod cli;
mod commands;
mod hook;
mod output;
mod runs;
mod settings;
mod signals;
mod stats;
mod tasks;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    tether_cloud::install_tls_provider();
    let cli = cli::Cli::parse();
    init_logging(cli.verbose);
    match commands::run(cli) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            // Scripts branch on the code; people read the message.
            match e.downcast_ref::<tether_core::Error>().map(tether_core::Error::code) {
                Some(code) if code != tether_core::ErrorCode::Internal => {
                    let code = serde_json::to_value(code).ok();
                    eprintln!("error[{}]: {e:#}", code.as_ref().and_then(|c| c.as_str()).unwrap_or("?"));
                }
                _ => eprintln!("error: {e:#}"),
            }
            ExitCode::FAILURE
        }
    }
}

fn write_stdout(args: std::fmt::Arguments<'_>) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_fmt(args).and_then(|()| out.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("error: writing to stdout: {e}");
        std::process::exit(1);
    }
}

fn init_logging(verbose: u8) {
    let default = match verbose {
        0 => "warn",
        1 => "info,tether_core=info",
        _ => "debug",
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("TETHER_LOG").unwrap_or_else(|_| default.into());
    tracing_subscriber::fmt().with_env_filter(filter).with_writer(std::io::stderr).with_target(false).init();
}

//! Entry point: parse the command line, set up stderr logging and a runtime, dispatch.

mod cli;

use std::process::ExitCode;

use clap::Parser;

/// A one-shot command whose reader goes away (`knowcode query … | head -1`) ends the way any
/// Unix tool does, killed by SIGPIPE, instead of panicking in `println!`. The servers keep
/// Rust's default (SIGPIPE ignored, a failed write is an error) so a client that hangs up
/// never takes them down.
fn end_quietly_on_closed_stdout() {
    #[cfg(unix)]
    // SAFETY: runs before any thread exists and only restores the signal's default action.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_env_filter(
            // lance's scanner warns about a scoring-column deprecation on every search.
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "warn,lance::dataset::scanner=error".into()),
        )
        .init();
    let cli = cli::Cli::parse();
    if !cli.serves() {
        end_quietly_on_closed_stdout();
    }
    // Whether errors are wanted as JSON on stdout too (every `--json` command's contract).
    let json = std::env::args().skip(1).any(|arg| arg == "--json");
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(err) => {
            eprintln!("error: cannot start the async runtime: {err}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(cli::run(cli)) {
        Ok(code) => code,
        Err(err) => match err.downcast_ref::<knowcode::error::KnowcodeError>() {
            Some(known) => cli::report_error(known, json),
            None => {
                eprintln!("error: {err:#}");
                ExitCode::FAILURE
            }
        },
    }
}

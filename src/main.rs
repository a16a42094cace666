//! Entry point: parse the command line, set up stderr logging and a runtime, dispatch.

mod cli;

use std::process::ExitCode;

use clap::Parser;

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

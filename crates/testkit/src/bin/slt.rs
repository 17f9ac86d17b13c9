//! `slt`: runs sqllogictest files against a server speaking the PostgreSQL wire protocol.
//!
//! ```text
//! cargo run -p myriad-testkit --bin slt -- --url postgres://postgres@127.0.0.1:5432/postgres tests/slt
//! ```
//!
//! Each argument is a `.slt` file or a directory whose `*.slt` files run in name order. Every
//! file gets a fresh connection. Exit status: 0 when all pass, 1 when any fails, 2 on bad usage.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;

#[derive(Parser)]
#[command(about = "Run sqllogictest files over the PostgreSQL wire protocol")]
struct Args {
    /// Connection URL, e.g. postgres://postgres@127.0.0.1:5432/postgres
    #[arg(long)]
    url: String,
    /// Label for `skipif`/`onlyif` records (repeatable), e.g. `--label myriad`
    #[arg(long = "label")]
    labels: Vec<String>,
    /// `.slt` files, or directories whose `*.slt` files are run
    #[arg(required = true)]
    paths: Vec<PathBuf>,
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    let files = match myriad_testkit::command_line_files(&args.paths, "slt") {
        Ok(files) => files,
        Err(e) => {
            eprintln!("slt: {e}");
            return ExitCode::from(2);
        }
    };
    match myriad_testkit::run_files_with_labels(&args.url, &files, &args.labels).await {
        Ok(()) => {
            eprintln!("slt: all {} files passed", files.len());
            ExitCode::SUCCESS
        }
        Err(report) => {
            print!("{report}");
            ExitCode::FAILURE
        }
    }
}

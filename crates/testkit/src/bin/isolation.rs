//! `isolation`: runs multi-session isolation specs against a server speaking the PostgreSQL wire
//! protocol and compares each transcript with `expected/<name>.out` beside the spec.
//!
//! ```text
//! cargo run -p myriad-testkit --bin isolation -- --url postgres://postgres@127.0.0.1:5432/postgres tests/isolation
//! ```
//!
//! Each argument is a `.spec` file or a directory whose `*.spec` files run in name order. With
//! `--bless` the transcripts are written as the expected files instead (do that against
//! PostgreSQL 15 only: `scripts/pg-isolation --bless`). Exit status: 0 when all pass, 1 when any
//! fails, 2 on bad usage. See `myriad_testkit::isolation` for the format.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use myriad_testkit::isolation::{self, Options};

#[derive(Parser)]
#[command(
    about = "Run isolation specs over the PostgreSQL wire protocol",
    args_override_self = true
)]
struct Args {
    /// Connection URL, e.g. postgres://postgres@127.0.0.1:5432/postgres
    #[arg(long)]
    url: String,
    /// The server under test, e.g. `--label myriad`: `expected/<name>.<label>.out`, where it
    /// exists, replaces `expected/<name>.out` (the last `--label` counts)
    #[arg(long)]
    label: Option<String>,
    /// Write the transcripts as the expected files instead of comparing
    #[arg(long)]
    bless: bool,
    /// `.spec` files, or directories whose `*.spec` files are run
    #[arg(required = true)]
    paths: Vec<PathBuf>,
}

#[tokio::main]
async fn main() -> ExitCode {
    let args = Args::parse();
    let files = match myriad_testkit::command_line_files(&args.paths, "spec") {
        Ok(files) => files,
        Err(e) => {
            eprintln!("isolation: {e}");
            return ExitCode::from(2);
        }
    };
    let options = Options {
        label: args.label,
        bless: args.bless,
    };
    match isolation::run_specs_with_options(&args.url, &files, &options).await {
        Ok(()) if options.bless => {
            eprintln!("isolation: blessed {} specs", files.len());
            ExitCode::SUCCESS
        }
        Ok(()) => {
            eprintln!("isolation: all {} specs passed", files.len());
            ExitCode::SUCCESS
        }
        Err(report) => {
            print!("{report}");
            ExitCode::FAILURE
        }
    }
}

//! `myriad`: start the server.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use myriad_server::{Config, Server};

/// The server's allocator (DESIGN.md L2: chosen by measurement).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Myriad: a PostgreSQL-compatible SQL database server.
#[derive(Parser, Debug)]
#[command(version, about)]
struct Args {
    /// Address to listen on [default: 127.0.0.1:5433]
    #[arg(long)]
    listen: Option<String>,
    /// Data directory, created on first start [default: ./myriad-data]
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// TOML configuration file (see README); options given here override it
    #[arg(long)]
    config: Option<PathBuf>,
}

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("MYRIAD_LOG")
                .unwrap_or_else(|_| "info".into()),
        )
        .init();
    let args = Args::parse();
    let mut config = match &args.config {
        Some(p) => match Config::from_file(p) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("myriad: {e}");
                return ExitCode::FAILURE;
            }
        },
        None => Config::default(),
    };
    if let Some(l) = args.listen {
        config.listen = l;
    }
    if let Some(d) = args.data_dir {
        config.data_dir = d;
    }
    let runtime = match tokio::runtime::Runtime::new() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("myriad: could not start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(async move {
        let server = match Server::start(&config).await {
            Ok(s) => s,
            Err(e) => {
                eprintln!("myriad: {e}");
                return ExitCode::FAILURE;
            }
        };
        wait_for_signal().await;
        tracing::info!("shutting down");
        match server.shutdown().await {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("myriad: shutdown failed: {e}");
                ExitCode::FAILURE
            }
        }
    })
}

async fn wait_for_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = match signal(SignalKind::terminate()) {
        Ok(s) => s,
        Err(_) => {
            let _ = tokio::signal::ctrl_c().await;
            return;
        }
    };
    tokio::select! {
        _ = tokio::signal::ctrl_c() => {}
        _ = term.recv() => {}
    }
}

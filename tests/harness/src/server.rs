//! The fixture server, started from its binary on a free port.

use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{ChildStdout, Command};

use crate::process::Process;

/// How to start the fixture server.
pub struct ServerOptions<'a> {
    /// The `fixture-server` binary.
    pub binary: &'a Path,
    /// The repository the server serves.
    pub root: &'a Path,
    /// Whether to serve a second origin (another port) for cross-origin fetches.
    pub second_origin: bool,
    /// Extra folders to serve: a URL path prefix (`/e2e`) and a folder relative to `root`.
    pub mounts: &'a [(&'a str, &'a str)],
}

/// The running fixture server, stopped when this is dropped: its main origin (`base`) and,
/// when asked for, its second origin, both without a trailing slash.
pub struct Server {
    _process: Process,
    /// The main origin, such as `http://127.0.0.1:41234`.
    pub base: String,
    /// The second origin, when [`ServerOptions::second_origin`] asked for one.
    pub second: Option<String>,
}

/// Starts the fixture server on 127.0.0.1 with port 0 (and second port 0), and reads the
/// origins it prints (waiting up to [`PRINTED_WITHIN`] for each).
pub async fn start_server(options: &ServerOptions<'_>) -> Result<Server, String> {
    let mut command = Command::new(options.binary);
    command.args(["--host", "127.0.0.1", "--port", "0"]);
    if options.second_origin {
        command.args(["--second-port", "0"]);
    }
    for (prefix, folder) in options.mounts {
        command.args(["--mount", &format!("{prefix}={folder}")]);
    }
    let mut child = command
        .arg("--root")
        .arg(options.root)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("{}: {e}", options.binary.display()))?;
    let stdout = child.stdout.take().ok_or("no stdout")?;
    let process = Process::new(child);
    let mut urls = printed_urls(stdout, 1 + usize::from(options.second_origin)).await?;
    let second = if options.second_origin {
        urls.pop()
    } else {
        None
    };
    Ok(Server {
        _process: process,
        base: urls.pop().unwrap_or_default(),
        second,
    })
}

/// How long the fixture server may take to print each origin: it loads and runs every fixture
/// first. Generous, as the wait ends when the line comes; only a server that never prints
/// waits this long.
const PRINTED_WITHIN: Duration = Duration::from_secs(60);

/// The URLs ending the first `count` lines the server prints, without a trailing slash.
async fn printed_urls(stdout: ChildStdout, count: usize) -> Result<Vec<String>, String> {
    let mut lines = BufReader::new(stdout).lines();
    let mut urls = Vec::new();
    for _ in 0..count {
        let line = tokio::time::timeout(PRINTED_WITHIN, lines.next_line())
            .await
            .map_err(|_| {
                format!(
                    "the fixture server printed no URL in {} s",
                    PRINTED_WITHIN.as_secs()
                )
            })?
            .map_err(|e| format!("the fixture server's stdout: {e}"))?
            .ok_or("the fixture server exited before printing its URLs")?;
        let url = line.rsplit(' ').next().unwrap_or_default();
        urls.push(url.trim_end_matches('/').to_owned());
    }
    Ok(urls)
}

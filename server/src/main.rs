//! `fixture-server`: the page, the wasm package and a scripted rate-limited service, for
//! trying the retry budget by hand and for the end-to-end tests. See `README.md` beside this
//! crate for the routes and the log format.

mod app;
mod body;
mod catalog;
mod cli;
mod faults;
mod log;
mod palettes;
mod reply;
mod serve;
mod shift;
mod state;

use std::io::Write;
use std::net::{IpAddr, SocketAddr};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use tokio::net::TcpListener;

use crate::catalog::Catalog;
use crate::cli::Options;
use crate::state::AppState;

/// Reads the command line and runs the server on a multi-threaded runtime.
fn main() -> ExitCode {
    let port_env = std::env::var("PORT").ok();
    let options = match cli::parse(std::env::args().skip(1), port_env.as_deref()) {
        Ok(options) => options,
        // `--help` (on stdout, exit 0) or a usage error (on stderr, exit 2).
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(u8::try_from(e.exit_code()).unwrap_or(2));
        }
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => {
            eprintln!("fixture-server: cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(run(options))
}

/// Loads the scenarios, listens, and serves until a shutdown signal.
async fn run(options: Options) -> ExitCode {
    let started = Instant::now();
    let Some(catalog) = load_scenarios(&options) else {
        return ExitCode::FAILURE;
    };
    if !mounts_are_folders(&options) {
        return ExitCode::FAILURE;
    }
    warn_missing(&options.root);
    let Some((listeners, origins)) = open_listeners(&options).await else {
        return ExitCode::FAILURE;
    };
    let state = Arc::new(AppState::new(catalog, started, &origins));
    let router = app::router(Arc::clone(&state), &options.root, &options.mounts);
    serve::serve(
        listeners,
        router,
        state,
        options.header_timeout,
        shutdown_signal(),
    )
    .await;
    eprintln!("fixture-server: stopped");
    ExitCode::SUCCESS
}

/// The fixture scenarios and the faulted ones of the fault file; `None`, after printing every
/// problem, when there is any.
fn load_scenarios(options: &Options) -> Option<Catalog> {
    let fixtures = options.root.join("fixtures");
    let mut catalog = match Catalog::load(&fixtures) {
        Ok((catalog, files)) => {
            eprintln!(
                "fixture-server: {} scenario(s) from {} file(s) in {}: {}",
                catalog.len(),
                files.len(),
                fixtures.display(),
                catalog.names().join(", ")
            );
            catalog
        }
        Err(problems) => {
            let whose = format!("the scenarios in {}", fixtures.display());
            return refuse(&problems, &whose);
        }
    };
    if let Some(path) = options.fault_file() {
        let loaded = faults::read(&path)
            .map_err(|e| vec![e])
            .and_then(|file| catalog.add_faulted(&relative_name(&path, &options.root), file));
        if let Err(problems) = loaded {
            return refuse(&problems, &format!("the fault file {}", path.display()));
        }
        eprintln!(
            "fixture-server: {} faulted scenario(s) from {}",
            catalog.faulted_len(),
            path.display()
        );
    }
    Some(catalog)
}

/// Prints each of `problems` (with `whose`) and that the server refuses to start; `None`.
fn refuse<T>(problems: &[String], whose: &str) -> Option<T> {
    for problem in problems {
        eprintln!("fixture-server: {problem}");
    }
    eprintln!(
        "fixture-server: refusing to start: {} problem(s) with {whose}",
        problems.len()
    );
    None
}

/// Whether every `--mount` names a folder under the root, links followed (the command line
/// only saw its path: a link inside the root may lead out of it); says which do not.
fn mounts_are_folders(options: &Options) -> bool {
    let mut all = true;
    let root = std::fs::canonicalize(&options.root);
    for (prefix, dir) in &options.mounts {
        let folder = options.root.join(dir);
        let problem = if folder.is_dir() {
            let resolved = root.as_ref().map_err(ToString::to_string).and_then(|root| {
                let real = std::fs::canonicalize(&folder).map_err(|e| e.to_string())?;
                Ok((real.starts_with(root), real))
            });
            match resolved {
                Ok((true, _)) => None,
                Ok((false, real)) => Some(format!(
                    "{} leads to {}, outside the root",
                    folder.display(),
                    real.display()
                )),
                Err(e) => Some(format!("{} cannot be resolved: {e}", folder.display())),
            }
        } else {
            Some(format!("{} is not a folder", folder.display()))
        };
        if let Some(problem) = problem {
            eprintln!(
                "fixture-server: --mount {prefix}={}: {problem}; refusing to start",
                dir.display()
            );
            all = false;
        }
    }
    all
}

/// Warns about files under `root` without which the page cannot work.
fn warn_missing(root: &std::path::Path) {
    for (path, hint) in [
        ("www/index.html", "the page will not load"),
        (
            "crate/pkg/retry_budget.js",
            "build the wasm package first (wasm-pack build), or /pkg/ will be empty",
        ),
        (
            "crate/pkg-full/retry_budget.js",
            "build the full package first (scripts/run does): the page loads /pkg-full/",
        ),
    ] {
        if !root.join(path).is_file() {
            eprintln!(
                "fixture-server: warning: {} is missing: {hint}",
                root.join(path).display()
            );
        }
    }
}

/// Listens on the port and on the second port, if any, and prints their addresses to stdout;
/// returns the listeners and the server's origins (`http://HOST:PORT`).
async fn open_listeners(options: &Options) -> Option<(Vec<TcpListener>, Vec<String>)> {
    let mut ports = vec![(options.port, "listening on")];
    ports.extend(options.second_port.map(|port| (port, "second origin on")));
    let mut listeners = Vec::new();
    let mut lines = Vec::new();
    let mut origins = Vec::new();
    for (port, what) in ports {
        let (listener, url) = listen(&options.host, port).await?;
        listeners.push(listener);
        lines.push(format!("fixture-server {what} {url}"));
        origins.push(url.trim_end_matches('/').to_string());
    }
    let mut stdout = std::io::stdout().lock();
    let printed = lines
        .iter()
        .try_for_each(|line| writeln!(stdout, "{line}"))
        .and_then(|()| stdout.flush());
    if let Err(e) = printed {
        eprintln!("fixture-server: cannot print the address: {e}");
    }
    Some((listeners, origins))
}

/// Binds `host:port`; returns the listener and its URL (`http://HOST:PORT/`, with `HOST` as
/// given and the port bound).
async fn listen(host: &str, port: u16) -> Option<(TcpListener, String)> {
    let listener = match TcpListener::bind((host, port)).await {
        Ok(listener) => listener,
        Err(e) => {
            eprintln!("fixture-server: cannot listen on {host}:{port}: {e}");
            return None;
        }
    };
    let address = match listener.local_addr() {
        Ok(address) => address,
        Err(e) => {
            eprintln!("fixture-server: cannot read the listening address: {e}");
            return None;
        }
    };
    Some((listener, format!("{}/", origin(host, address))))
}

/// The origin a browser names the server by when it is reached at `host` (the `--host` value)
/// and bound at `address`: `http://HOST:PORT`, the host as the user gave it, so that a page
/// loaded from `http://localhost:P` finds its own origins in the policy's `connect-src`. An IP
/// address is written as the URL standard writes it (an IPv6 one in brackets, as browsers do),
/// a shorthand IPv4 one (`127.1`, `0x7f.1`) included: a browser reads a host whose last label
/// is a number as IPv4 and writes it in full, so it is written as the address it was bound to.
fn origin(host: &str, address: SocketAddr) -> String {
    let port = address.port();
    let last = host.rsplit('.').next().unwrap_or(host);
    let hex = last.strip_prefix("0x").or_else(|| last.strip_prefix("0X"));
    let numeric = !last.is_empty() && last.bytes().all(|b| b.is_ascii_digit())
        || hex.is_some_and(|h| h.bytes().all(|b| b.is_ascii_hexdigit()));
    match host.parse::<IpAddr>() {
        Ok(IpAddr::V4(ip)) => format!("http://{ip}:{port}"),
        Ok(IpAddr::V6(ip)) => format!("http://[{ip}]:{port}"),
        Err(_) if numeric && address.is_ipv4() => format!("http://{}:{port}", address.ip()),
        Err(_) => format!("http://{host}:{port}"),
    }
}

/// `path` relative to `root` when it is inside it (for messages), else as given.
fn relative_name(path: &std::path::Path, root: &std::path::Path) -> String {
    path.strip_prefix(root)
        .unwrap_or(path)
        .display()
        .to_string()
}

/// Ctrl-C, or SIGTERM on Unix.
async fn shutdown_signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = terminate => {}
    }
}

#[cfg(test)]
mod tests {
    use super::origin;
    use std::net::SocketAddr;

    #[test]
    fn an_origin_names_the_host_as_given_and_brackets_ipv6() {
        let at = |ip: &str, port| SocketAddr::new(ip.parse().expect("an address"), port);
        let local = |port| at("127.0.0.1", port);
        assert_eq!(origin("localhost", local(8080)), "http://localhost:8080");
        assert_eq!(origin("127.0.0.1", local(1)), "http://127.0.0.1:1");
        assert_eq!(origin("0.0.0.0", at("0.0.0.0", 2)), "http://0.0.0.0:2");
        assert_eq!(origin("::1", at("::1", 3)), "http://[::1]:3");
        assert_eq!(origin("0:0::1", at("::1", 4)), "http://[::1]:4");
        assert_eq!(origin("fixture.test", local(5)), "http://fixture.test:5");
        // Shorthand IPv4, as a browser writes it.
        assert_eq!(origin("127.1", local(6)), "http://127.0.0.1:6");
        assert_eq!(origin("0x7f.1", local(7)), "http://127.0.0.1:7");
        assert_eq!(origin("2130706433", local(8)), "http://127.0.0.1:8");
        // A name whose last label has letters is a name.
        assert_eq!(origin("host.x1", local(9)), "http://host.x1:9");
    }
}

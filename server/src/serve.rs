//! The connection loop: HTTP/1.1 on hyper, each connection on its own task, the router as the
//! service. Every listener (the main port and an optional second origin) feeds the same loop.

use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::Request;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, Notify};
use tokio::task::JoinHandle;
use tower::ServiceExt;

use crate::state::{AppState, LogNote};

/// How long in-flight requests may go on after a shutdown signal.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// A handle on the connection a request came in on, given to handlers as a request extension:
/// the `reset` fault uses it to end the connection with a TCP reset.
#[derive(Clone, Debug, Default)]
pub struct Connection(Arc<ConnectionInner>);

/// A connection's reset request, shared by its requests and its task.
#[derive(Debug, Default)]
struct ConnectionInner {
    /// Whether a reset was asked for.
    reset: AtomicBool,
    /// Wakes the connection's task when it is.
    wake: Notify,
}

impl Connection {
    /// Resets the connection (RST, no orderly close): whatever is in flight on it is lost.
    pub fn reset(&self) {
        self.0.reset.store(true, Ordering::SeqCst);
        self.0.wake.notify_one();
    }

    /// Completes once [`Connection::reset`] has been called.
    async fn reset_requested(&self) {
        while !self.0.reset.load(Ordering::SeqCst) {
            self.0.wake.notified().await;
        }
    }
}

/// Serves `router` on every listener until `shutdown` completes, then lets open requests
/// finish (for at most [`SHUTDOWN_GRACE`]). A connection that has not sent a complete request
/// head `header_timeout` after the server began waiting for one is closed.
pub async fn serve(
    listeners: Vec<TcpListener>,
    router: Router,
    state: Arc<AppState>,
    header_timeout: Duration,
    shutdown: impl Future<Output = ()>,
) {
    let graceful = GracefulShutdown::new();
    let (mut accepted, acceptors) = accept_all(listeners);
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let stream = tokio::select! {
            stream = accepted.recv() => match stream {
                Some(stream) => stream,
                None => break,
            },
            () = &mut shutdown => break,
        };
        serve_connection(stream, &router, &state, header_timeout, &graceful);
    }
    for acceptor in acceptors {
        acceptor.abort();
    }
    let open = graceful.count();
    eprintln!("fixture-server: shutting down ({open} open connection(s))");
    tokio::select! {
        () = graceful.shutdown() => {}
        () = tokio::time::sleep(SHUTDOWN_GRACE) => {
            eprintln!("fixture-server: requests still open after {SHUTDOWN_GRACE:?}; stopping anyway");
        }
    }
}

/// Accepts on every listener, each on its own task, into one channel; returns the channel and
/// the tasks.
fn accept_all(listeners: Vec<TcpListener>) -> (mpsc::Receiver<TcpStream>, Vec<JoinHandle<()>>) {
    let (accepted_tx, accepted) = mpsc::channel::<TcpStream>(64);
    let acceptors = listeners
        .into_iter()
        .map(|listener| {
            let accepted_tx = accepted_tx.clone();
            tokio::spawn(async move {
                loop {
                    match listener.accept().await {
                        Ok((stream, _peer)) => {
                            if accepted_tx.send(stream).await.is_err() {
                                break;
                            }
                        }
                        Err(e) => {
                            // Out of file descriptors and the like: wait a moment rather than spin.
                            eprintln!("fixture-server: accept failed: {e}");
                            tokio::time::sleep(Duration::from_millis(50)).await;
                        }
                    }
                }
            })
        })
        .collect();
    (accepted, acceptors)
}

/// Serves one accepted connection on its own task, with a [`Connection`] handle given to each of
/// its requests; a reset asked for through the handle ends it with a TCP reset.
fn serve_connection(
    stream: TcpStream,
    router: &Router,
    state: &Arc<AppState>,
    header_timeout: Duration,
    graceful: &GracefulShutdown,
) {
    // Small responses go out at once: timings are what the tests measure.
    let _ = stream.set_nodelay(true);
    // A second descriptor of the same socket, kept outside hyper, so the `reset` fault can
    // set SO_LINGER to zero before the connection is dropped.
    let Some((stream, twin)) = with_twin(stream) else {
        return;
    };
    let connection_handle = Connection::default();
    let router = router.clone();
    let state = Arc::clone(state);
    let for_requests = connection_handle.clone();
    let service = service_fn(move |mut request: Request<Incoming>| {
        let router = router.clone();
        let state = Arc::clone(&state);
        request.extensions_mut().insert(for_requests.clone());
        async move { handle(router, &state, request).await }
    });
    // hyper starts the header timer whenever it waits for a request head: on a new connection
    // and on one kept alive after a response, before any byte of the next request. So it is
    // the idle timeout too, and must outlast the waits a client makes between requests.
    let connection = http1::Builder::new()
        .auto_date_header(false)
        .timer(TokioTimer::new())
        .header_read_timeout(header_timeout)
        .serve_connection(TokioIo::new(stream), service);
    let connection = Box::pin(graceful.watch(connection));
    tokio::spawn(async move {
        let mut connection = connection;
        tokio::select! {
            // A reset asked for while the connection was polled wins over its end.
            biased;
            () = connection_handle.reset_requested() => {
                // Linger zero makes the last close of the socket a reset, not a FIN.
                if let Ok(twin) = TcpStream::from_std(twin) {
                    let _ = twin.set_zero_linger();
                    drop(twin);
                }
                drop(connection);
            }
            // Errors here are clients that went away and scripted drops: both expected.
            _ = &mut connection => {}
        }
    });
}

/// The stream, and a second descriptor of its socket.
fn with_twin(stream: TcpStream) -> Option<(TcpStream, std::net::TcpStream)> {
    let std_stream = stream.into_std().ok()?;
    let twin = std_stream.try_clone().ok()?;
    let stream = TcpStream::from_std(std_stream).ok()?;
    Some((stream, twin))
}

/// One request through the router, with its stderr access-log line.
async fn handle(
    router: Router,
    state: &AppState,
    request: Request<Incoming>,
) -> Result<axum::response::Response, std::convert::Infallible> {
    let arrival = Instant::now();
    let method = request.method().clone();
    let uri = request.uri().clone();
    let response = match router.oneshot(request).await {
        Ok(response) => response,
        Err(never) => match never {},
    };
    let took = arrival.elapsed().as_secs_f64() * 1000.0;
    let at = state.log.ms(arrival);
    let note = response
        .extensions()
        .get::<LogNote>()
        .map(|n| format!("  {}", one_line(&n.0)))
        .unwrap_or_default();
    eprintln!(
        "fixture-server: {at:>10.1} ms  {method} {uri} -> {} in {took:.1} ms{note}",
        response.status().as_u16()
    );
    Ok(response)
}

/// `text` on one line: control characters (a newline in a run id) written as escapes, so that
/// no request can forge a line of the access log.
fn one_line(text: &str) -> String {
    let mut line = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_control() {
            line.extend(c.escape_default());
        } else {
            line.push(c);
        }
    }
    line
}

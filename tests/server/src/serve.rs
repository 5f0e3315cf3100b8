//! The connection loop: HTTP/1.1 on hyper, each connection on its own task, the router as the
//! service.

use std::future::Future;
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::Router;
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::Request;
use hyper_util::rt::TokioIo;
use hyper_util::server::graceful::GracefulShutdown;
use tokio::net::TcpListener;
use tower::ServiceExt;

use crate::app::{AppState, LogNote};

/// How long in-flight requests may go on after a shutdown signal.
const SHUTDOWN_GRACE: Duration = Duration::from_secs(5);

/// Serves `router` on `listener` until `shutdown` completes, then lets open requests finish
/// (for at most [`SHUTDOWN_GRACE`]).
pub async fn serve(
    listener: TcpListener,
    router: Router,
    state: Arc<AppState>,
    shutdown: impl Future<Output = ()>,
) {
    let graceful = GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            accepted = listener.accept() => accepted,
            () = &mut shutdown => break,
        };
        let stream = match accepted {
            Ok((stream, _peer)) => stream,
            Err(e) => {
                // Out of file descriptors and the like: wait a moment rather than spin.
                eprintln!("fixture-server: accept failed: {e}");
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        // Small responses go out at once: timings are what the tests measure.
        let _ = stream.set_nodelay(true);
        let router = router.clone();
        let state = Arc::clone(&state);
        let service = service_fn(move |request: Request<Incoming>| {
            let router = router.clone();
            let state = Arc::clone(&state);
            async move { handle(router, &state, request).await }
        });
        let connection = http1::Builder::new()
            .auto_date_header(false)
            .serve_connection(TokioIo::new(stream), service);
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            // Errors here are clients that went away and scripted drops: both expected.
            let _ = connection.await;
        });
    }
    drop(listener);
    let open = graceful.count();
    eprintln!("fixture-server: shutting down ({open} open connection(s))");
    tokio::select! {
        () = graceful.shutdown() => {}
        () = tokio::time::sleep(SHUTDOWN_GRACE) => {
            eprintln!("fixture-server: requests still open after {SHUTDOWN_GRACE:?}; stopping anyway");
        }
    }
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
        .map(|n| format!("  {}", n.0))
        .unwrap_or_default();
    eprintln!(
        "fixture-server: {at:>10.1} ms  {method} {uri} -> {} in {took:.1} ms{note}",
        response.status().as_u16()
    );
    Ok(response)
}

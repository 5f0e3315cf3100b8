//! Routes: the scripted `/palettes` service, the request log, and the static files.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use axum::extract::{OriginalUri, Request, State};
use axum::handler::HandlerWithoutStateExt;
use axum::http::{header, HeaderMap, HeaderValue, Method, StatusCode, Uri};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{any, get};
use axum::Router;
use percent_encoding::percent_decode_str;
use tower_http::services::{ServeDir, ServeFile};

use crate::log::{query_of, Moment, Params};
use crate::palettes::{log_no_content, palettes, preflight};
use crate::reply::{plain, set_date};
use crate::state::{AppState, LogNote, Withheld, RUN_KEPT};

/// Any method on `/palettes` but GET and OPTIONS, HEAD included: 405, with an `Allow` that
/// names only those two (the router's own 405 would list HEAD, which is refused too).
async fn method_refused() -> Response {
    let mut response = StatusCode::METHOD_NOT_ALLOWED.into_response();
    let allow = HeaderValue::from_static("GET,OPTIONS");
    response.headers_mut().insert(header::ALLOW, allow);
    response
}

/// Every route, serving the repository at `root`, and each of `mounts` (a URL path prefix and
/// a folder relative to the root) as a folder of its own.
pub fn router(state: Arc<AppState>, root: &Path, mounts: &[(String, PathBuf)]) -> Router {
    let www = root.join("www");
    // A HEAD would otherwise reach the GET handler and use up a run's scripted response (and
    // log its fault) although its client never receives the body: it is refused.
    let palettes = Router::new()
        .route(
            "/palettes",
            get(palettes)
                .head(method_refused)
                .options(preflight)
                .fallback(method_refused),
        )
        .layer(middleware::map_response(add_cors));
    let not_found = not_found.into_service();
    let dir = |path: &Path| {
        ServeDir::new(path)
            .append_index_html_on_directories(false)
            .redirect_to_trailing_slash(false)
            .not_found_service(not_found.clone())
    };
    let mut router = Router::new();
    for (prefix, folder) in mounts {
        router = router.nest_service(prefix, dir(&root.join(folder)));
    }
    router
        .merge(palettes)
        .route("/log", get(log_get).delete(log_delete))
        .route("/scenarios", get(scenarios))
        .route("/beacon", any(beacon))
        .route(
            "/away",
            get(away).layer(axum::Extension(AwayPage(
                root.join("server").join("pages").join("away.html"),
            ))),
        )
        .route_service("/", ServeFile::new(www.join("index.html")))
        .nest_service("/pkg", dir(&root.join("crate").join("pkg")))
        .nest_service("/pkg-full", dir(&root.join("crate").join("pkg-full")))
        .nest_service("/fixtures", dir(&root.join("fixtures")))
        .fallback_service(dir(&www))
        .with_state(Arc::clone(&state))
        .layer(middleware::from_fn(reject_traversal))
        .layer(middleware::map_response_with_state(
            state,
            add_common_headers,
        ))
}

/// `GET /log[?run=RUN]`: the log entries as a JSON array.
async fn log_get(State(app): State<Arc<AppState>>, uri: Uri) -> Response {
    let query = match query_of(&uri) {
        Ok(query) => query,
        Err(problem) => {
            return plain(
                StatusCode::BAD_REQUEST,
                format!("malformed query string: {problem}"),
            )
        }
    };
    let entries = app.log.entries(query.get("run").map(String::as_str));
    json(&entries)
}

/// `DELETE /log`: forgets every entry (run counters are kept, so a run id stays used). It takes
/// no parameters: `?run=` there, read as `GET /log` reads it, would clear more than it named.
async fn log_delete(State(app): State<Arc<AppState>>, uri: Uri) -> Response {
    if uri.query().is_some_and(|q| !q.is_empty()) {
        return plain(
            StatusCode::BAD_REQUEST,
            "DELETE /log clears the whole log and takes no parameters; nothing was cleared"
                .to_owned(),
        );
    }
    let cleared = app.log.clear();
    json(&serde_json::json!({ "cleared": cleared }))
}

/// `GET /scenarios`: every scenario the server answers for, for the page's picker and its model
/// prediction: the fixture files in order, each scenario object as written (then the faulted
/// ones), and what each faulted scenario injects.
async fn scenarios(State(app): State<Arc<AppState>>) -> Response {
    json(&app.catalog.listing())
}

/// `/beacon[?...]`, any method: logged (with its `run` parameter, if any) and answered 204. A
/// hostile payload that got rendered as markup would fetch it (an `<img>` or a stylesheet).
async fn beacon(
    State(app): State<Arc<AppState>>,
    method: Method,
    uri: Uri,
    headers: HeaderMap,
) -> Response {
    let only_run = |params: Params| Params {
        run: params.run,
        ..Params::default()
    };
    log_no_content(&app, (&method, &uri, &headers), only_run, Moment::now());
    StatusCode::NO_CONTENT.into_response()
}

/// How long `/away` waits for the run's request to arrive.
const AWAY_WAIT: Duration = Duration::from_secs(10);

/// The furthest from its response, either way, that `/away` holds a page: as long as the
/// server keeps a run.
const AWAY_OFFSET_MAX: Duration = RUN_KEPT;

/// `GET /away?run=RUN&attempt=K&plus_ms=X`: a page to navigate to (`server/pages/away.html`), held
/// until X milliseconds (negative: before) the moment the server sends run RUN's K-th scripted
/// response. A page that navigates here while its action runs leaves at the very moment that
/// response arrives (X near 0), or when the wait after it ends (X near the wait). After
/// [`AWAY_WAIT`] without that request, the page is sent anyway. Without a run, it is a plain
/// page, sent at once: the Palette List's "another page" link. A query it cannot read is a 400
/// that says why.
async fn away(
    State(app): State<Arc<AppState>>,
    uri: Uri,
    axum::extract::Extension(away_page): axum::extract::Extension<AwayPage>,
) -> Response {
    let asked = match query_of(&uri).and_then(|query| Hold::read(&query)) {
        Ok(asked) => asked,
        Err(problem) => return plain(StatusCode::BAD_REQUEST, problem),
    };
    let held = hold(&app, &asked).await;
    let mut response = read_page(&away_page.0).await;
    response.extensions_mut().insert(LogNote(format!(
        "run={} attempt={} plus_ms={} {held}",
        asked.run, asked.attempt, asked.plus_ms
    )));
    response
}

/// What an `/away` request asks to be held for.
struct Hold {
    run: String,
    attempt: u32,
    plus_ms: f64,
}

impl Hold {
    /// Reads `run` (none: not held), `attempt` (a whole number from 1; default 1) and `plus_ms`
    /// (a number of milliseconds within [`AWAY_OFFSET_MAX`] either way; default 0).
    fn read(query: &HashMap<String, String>) -> Result<Hold, String> {
        let attempt = match query.get("attempt") {
            None => 1,
            Some(text) => text.parse().ok().filter(|&k: &u32| k >= 1).ok_or_else(|| {
                format!("the `attempt` parameter is {text:?}; it must be a whole number from 1")
            })?,
        };
        let max_ms = AWAY_OFFSET_MAX.as_secs_f64() * 1000.0;
        let plus_ms = match query.get("plus_ms") {
            None => 0.0,
            Some(text) => text
                .parse()
                .ok()
                .filter(|ms: &f64| ms.abs() <= max_ms)
                .ok_or_else(|| {
                    format!(
                        "the `plus_ms` parameter is {text:?}; it must be a number of \
                         milliseconds from -{max_ms} to {max_ms}"
                    )
                })?,
        };
        let run = query.get("run").cloned().unwrap_or_default();
        Ok(Hold {
            run,
            attempt,
            plus_ms,
        })
    }
}

/// Waits until what `asked` names is due: `plus_ms` after attempt `attempt` of `run` is sent
/// (at most [`AWAY_WAIT`] for it to be announced); says how the wait ended, and when a held
/// page was due to go (in the log's milliseconds), so that a test can check the moment exactly.
async fn hold(app: &AppState, asked: &Hold) -> String {
    if asked.run.is_empty() {
        return "no run to wait for".to_owned();
    }
    let Some(due) = wait_for_due(app, &asked.run, asked.attempt).await else {
        return "timed out waiting for the run".to_owned();
    };
    // Within [`AWAY_OFFSET_MAX`], so the clock can say when.
    let offset = Duration::from_secs_f64(asked.plus_ms.abs() / 1000.0);
    let at = if asked.plus_ms >= 0.0 {
        due.checked_add(offset).unwrap_or(due)
    } else {
        due.checked_sub(offset).unwrap_or(due)
    };
    tokio::time::sleep_until(at.into()).await;
    format!("held until {:.1} ms", app.log.ms(at))
}

/// When attempt `attempt` of `run` is due to be sent, once it is announced within
/// [`AWAY_WAIT`].
async fn wait_for_due(app: &AppState, run: &str, attempt: u32) -> Option<Instant> {
    let mut changed = app.sends_changed.subscribe();
    let deadline = tokio::time::Instant::now() + AWAY_WAIT;
    loop {
        if let Some(due) = app.send_time(run, attempt) {
            return Some(due);
        }
        if !matches!(
            tokio::time::timeout_at(deadline, changed.changed()).await,
            Ok(Ok(()))
        ) {
            return None;
        }
    }
}

/// The page at `path` as HTML, or a 404 naming it.
async fn read_page(path: &Path) -> Response {
    match tokio::fs::read(path).await {
        Ok(bytes) => (
            StatusCode::OK,
            [(header::CONTENT_TYPE, "text/html; charset=utf-8")],
            bytes,
        )
            .into_response(),
        Err(e) => plain(
            StatusCode::NOT_FOUND,
            format!("not found: {} ({e})", path.display()),
        ),
    }
}

/// The page `/away` answers with.
#[derive(Clone, Debug)]
struct AwayPage(PathBuf);

/// 404 for a file that is not there, naming it.
async fn not_found(OriginalUri(uri): OriginalUri) -> Response {
    plain(StatusCode::NOT_FOUND, format!("not found: {}", uri.path()))
}

/// Refuses any path with a `..` segment, however it is encoded.
async fn reject_traversal(request: Request, next: Next) -> Response {
    if has_parent_segment(request.uri().path()) {
        return plain(
            StatusCode::BAD_REQUEST,
            format!(
                "refused: `..` is not allowed in a path ({})",
                request.uri().path()
            ),
        );
    }
    next.run(request).await
}

/// Whether a path names a parent folder anywhere, after percent-decoding, with `/` or `\` as a
/// separator.
fn has_parent_segment(path: &str) -> bool {
    path.split('/').any(|segment| {
        let decoded = percent_decode_str(segment).decode_utf8_lossy();
        decoded.split(['/', '\\']).any(|part| part == "..")
    })
}

/// CORS for `/palettes`: any origin may read it, including `Retry-After`, `Date` and the
/// `RateLimit` fields, unless a fault takes some of that away.
async fn add_cors(mut response: Response) -> Response {
    let withheld = response
        .extensions()
        .get::<Withheld>()
        .copied()
        .unwrap_or_default();
    let out = response.headers_mut();
    if withheld.allow_origin {
        return response;
    }
    out.insert(
        header::ACCESS_CONTROL_ALLOW_ORIGIN,
        HeaderValue::from_static("*"),
    );
    if withheld.expose_headers {
        return response;
    }
    out.insert(
        header::ACCESS_CONTROL_EXPOSE_HEADERS,
        HeaderValue::from_static("Retry-After, Date, RateLimit, RateLimit-Policy"),
    );
    response
}

/// Nothing is cached: every page load and every request reaches the server. Every response
/// carries a real `Date` (hyper's automatic one is off), except a scripted response of a
/// scenario that has no clock evidence, and the page's Content-Security-Policy.
async fn add_common_headers(State(app): State<Arc<AppState>>, mut response: Response) -> Response {
    let no_date = response
        .extensions()
        .get::<Withheld>()
        .is_some_and(|w| w.date);
    let out = response.headers_mut();
    out.entry(header::CONTENT_SECURITY_POLICY)
        .or_insert_with(|| app.csp.clone());
    if !no_date && !out.contains_key(header::DATE) {
        set_date(out, SystemTime::now());
    }
    if !out.contains_key(header::CACHE_CONTROL) {
        out.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    out.entry(header::X_CONTENT_TYPE_OPTIONS)
        .or_insert(HeaderValue::from_static("nosniff"));
    response
}

/// `value` as an `application/json` 200 (or a 500 saying why it could not be written).
fn json<T: serde::Serialize>(value: &T) -> Response {
    match serde_json::to_vec(value) {
        Ok(bytes) => (
            StatusCode::OK,
            [(header::CONTENT_TYPE, "application/json")],
            bytes,
        )
            .into_response(),
        Err(e) => plain(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::{has_parent_segment, Hold, AWAY_OFFSET_MAX};
    use std::collections::HashMap;

    fn hold(pairs: &[(&str, &str)]) -> Result<Hold, String> {
        let query: HashMap<String, String> = pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        Hold::read(&query)
    }

    #[test]
    fn an_away_request_reads_its_attempt_and_offset_with_both_limits_in() {
        let max_ms = AWAY_OFFSET_MAX.as_secs_f64() * 1000.0;
        let max = max_ms.to_string();
        let held = hold(&[("run", "r")]).expect("the defaults");
        assert_eq!(
            (held.run.as_str(), held.attempt, held.plus_ms),
            ("r", 1, 0.0)
        );
        let held = hold(&[("attempt", "2"), ("plus_ms", &max)]).expect("the largest offset");
        assert_eq!((held.run.as_str(), held.attempt), ("", 2));
        assert_eq!(held.plus_ms, max_ms);
        let earliest = format!("-{max}");
        let held = hold(&[("plus_ms", &earliest)]).expect("the earliest offset");
        assert_eq!(held.plus_ms, -max_ms);
        for (key, value) in [
            ("plus_ms", "600000.5"),
            ("plus_ms", "-600001"),
            ("attempt", "0"),
            ("attempt", "1.5"),
        ] {
            let error = hold(&[(key, value)]).err();
            assert!(
                error
                    .as_deref()
                    .is_some_and(|e| e.contains(&format!("`{key}`"))),
                "{key}={value}: {error:?}"
            );
        }
    }

    #[test]
    fn parent_segments_are_found_however_encoded() {
        for path in [
            "/..",
            "/../Cargo.toml",
            "/pkg/../../etc/passwd",
            "/fixtures/%2e%2e/Cargo.toml",
            "/fixtures/%2E%2E/Cargo.toml",
            "/fixtures/..%2fCargo.toml",
            "/fixtures/..%5cCargo.toml",
            "/a/.%2e/b",
        ] {
            assert!(has_parent_segment(path), "{path}");
        }
        for path in [
            "/",
            "/index.html",
            "/pkg/a..b.js",
            "/...",
            "/.hidden",
            "/a/./b",
        ] {
            assert!(!has_parent_segment(path), "{path}");
        }
    }
}

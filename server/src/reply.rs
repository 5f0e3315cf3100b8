//! Small pieces of a response: the request's origin, a `Date`, a plain-text answer.

use std::time::SystemTime;

use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};

/// The request's `Origin` header, if any, cut as the log cuts what a client sends.
pub(crate) fn origin_of(headers: &HeaderMap) -> Option<String> {
    headers
        .get(header::ORIGIN)
        .and_then(|v| v.to_str().ok())
        .map(crate::log::kept_origin)
}

/// Sets `Date` to `now`; returns the value.
pub(crate) fn set_date(headers: &mut HeaderMap, now: SystemTime) -> String {
    let date = httpdate::fmt_http_date(now);
    if let Ok(value) = HeaderValue::from_str(&date) {
        headers.insert(header::DATE, value);
    }
    date
}

/// A `text/plain` response of `status` saying `message`.
pub(crate) fn plain(status: StatusCode, message: String) -> Response {
    (
        status,
        [(header::CONTENT_TYPE, "text/plain; charset=utf-8")],
        message,
    )
        .into_response()
}

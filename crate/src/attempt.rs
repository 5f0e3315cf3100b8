//! One attempt: a `GET` sent through the caller's `fetch` with its own `AbortController`, and
//! the response's status, the two headers the model reads and the body, read to the end. The
//! per-attempt cap covers the whole exchange. Dropping an attempt that has not finished aborts
//! its request (dropping a future alone would not), so an action that stops leaves no request
//! behind.

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use js_sys::{Function, Object, Promise};
use retry_budget_model::http_date::HttpDate;
use retry_budget_model::utc::UtcTime;
use retry_budget_model::{ReceiptClock, Response};
use wasm_bindgen::prelude::*;
use wasm_bindgen::JsCast;
use wasm_bindgen_futures::JsFuture;
use web_sys::AbortController;

use crate::clock::wall_now;
use crate::js::{has_method, promise_resolve, read_member, set};

/// A response read to the end: what the model is told, and the body for the caller.
pub(crate) struct Received {
    status: u16,
    retry_after: Option<String>,
    ratelimit: Option<String>,
    date: Option<String>,
    /// The body, as a JS string.
    pub(crate) body: JsValue,
}

/// An attempt in flight; it completes with the response read to the end, or with a word for
/// why there is none.
#[must_use = "dropping an unfinished attempt aborts its request"]
pub(crate) struct Attempt {
    abort: AbortController,
    exchange: Pin<Box<dyn Future<Output = Result<Received, String>>>>,
    finished: bool,
}

impl Attempt {
    /// Sends `GET url` now. A `fetch` that throws, or a controller that cannot be made, is a
    /// failure at once.
    pub(crate) fn send(fetch: &Function, url: &str) -> Result<Attempt, String> {
        let abort = AbortController::new().map_err(|_| String::from("network"))?;
        let init = Object::new();
        set(&init, "method", &JsValue::from_str("GET"));
        set(&init, "signal", &abort.signal());
        let sent = fetch
            .call2(&JsValue::UNDEFINED, &JsValue::from_str(url), &init)
            .and_then(|sent| promise_resolve(&sent))
            .map_err(|e| failure_word(&e))?;
        Ok(Attempt {
            abort,
            exchange: Box::pin(exchange(sent)),
            finished: false,
        })
    }
}

/// Waits for the response to `sent`, then reads its status, headers and body.
async fn exchange(sent: Promise) -> Result<Received, String> {
    let failed = |e: JsValue| failure_word(&e);
    let response = JsFuture::from(sent).await.map_err(failed)?;
    let mut received = Received::read(&response).ok_or("not_a_response")?;
    // Status 0 is a network error (`Response.error()`) or an opaque response, whose status and
    // headers cannot be read: there is no HTTP response to go by.
    if received.status == 0 {
        return Err("network".into());
    }
    let response: &web_sys::Response = response.unchecked_ref();
    let text = response
        .text()
        .and_then(|text| promise_resolve(&text))
        .map_err(failed)?;
    received.body = JsFuture::from(text).await.map_err(failed)?;
    Ok(received)
}

impl Future for Attempt {
    type Output = Result<Received, String>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let done = self.exchange.as_mut().poll(cx);
        self.finished = done.is_ready();
        done
    }
}

impl Drop for Attempt {
    fn drop(&mut self) {
        if !self.finished {
            self.abort.abort();
        }
    }
}

impl Received {
    /// The status and headers of `response`, its body not yet read. A response is read by what
    /// it has, not by its class, so that one from another realm (an iframe's `fetch`, a Node
    /// fetch library's own `Response`) is read as well: a whole `status` from 0 to 999,
    /// `headers` with a `get` method, and a `text` method. It is the caller's object, so every
    /// read catches what it throws; `None` for anything else.
    fn read(response: &JsValue) -> Option<Received> {
        let status = read_member(response, "status").ok()??.as_f64()?;
        if status.fract() != 0.0 || !(0.0..=999.0).contains(&status) {
            return None;
        }
        let headers = read_member(response, "headers").ok()??;
        if !has_method(&headers, "get") || !has_method(response, "text") {
            return None;
        }
        let headers: &web_sys::Headers = headers.unchecked_ref();
        let header = |name| headers.get(name).ok();
        Some(Received {
            status: status as u16,
            retry_after: header("Retry-After")?,
            ratelimit: header("RateLimit")?,
            date: header("Date")?,
            body: JsValue::UNDEFINED,
        })
    }

    /// The response as the model reads it, with the clock evidence for an HTTP-date: the
    /// response's own `Date`, or else the local clock (which the model uses only when the policy
    /// trusts it).
    pub(crate) fn response(&self) -> Response<'_> {
        let local = wall_now();
        let server = self
            .date
            .as_deref()
            .and_then(HttpDate::parse)
            .and_then(|d| d.resolve(local.unwrap_or(UtcTime::UNIX_EPOCH)))
            .filter(|at| !at.is_saturated());
        let clock = match (server, local) {
            (Some(at), _) => ReceiptClock::Server(at),
            (None, Some(at)) => ReceiptClock::Local(at),
            (None, None) => ReceiptClock::Absent,
        };
        Response {
            status: self.status,
            retry_after: self.retry_after.as_deref(),
            ratelimit: self.ratelimit.as_deref(),
            clock,
        }
    }
}

/// A word for a failed fetch: `network` for the `TypeError` that fetch rejects with, and for
/// an `AbortError` (the driver never awaits a request it aborted itself, so one that arrives
/// came from below: Firefox rejects a body cut off by a connection reset that way); the
/// error's name otherwise (an injected fetch may have its own); an error with no name, or an
/// empty one, is `network` too, since an empty word would tell the user nothing.
fn failure_word(error: &JsValue) -> String {
    let name = js_sys::Reflect::get(error, &JsValue::from_str("name"))
        .ok()
        .and_then(|n| n.as_string());
    match name.as_deref() {
        Some("TypeError" | "AbortError" | "") | None => "network".into(),
        Some(other) => other.into(),
    }
}

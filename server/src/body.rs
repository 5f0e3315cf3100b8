//! Response bodies that misbehave on purpose: a first chunk at once, then, each time a timer
//! fires, what the body's [`Sequel`] says (fail, send one more byte, or reset the connection).

use std::future::Future as _;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};
use std::time::Duration;

use axum::body::{Bytes, HttpBody};
use http_body::Frame;
use tokio::time::Sleep;

use crate::serve::Connection;
use crate::state::AppState;

/// The first chunk of a body cut short: JSON broken off inside a string.
const DRIFT: &[u8] = b"[\"sea glass\", \"drift";
/// The first chunk of a body that never finishes: JSON waiting for its next item.
const OPENING: &[u8] = b"[\"sea glass\", ";
/// How long a body waits after its first chunk before it fails or resets, so that the chunk is
/// on the wire first (hyper would otherwise drop the buffered chunk with the connection).
const SETTLE: Duration = Duration::from_millis(50);
/// How often a body that never finishes sends one more byte.
const ENDLESS_TICK: Duration = Duration::from_millis(200);

/// A body that sends a first chunk, then, when its timer fires, does what its [`Sequel`] says.
pub struct FaultBody {
    /// What is sent first, at once; `None` once sent.
    first_chunk: Option<Bytes>,
    /// When the sequel comes next.
    timer: Pin<Box<Sleep>>,
    /// What comes after the first chunk.
    sequel: Sequel,
}

/// What a [`FaultBody`] does once its first chunk is out and its timer has fired.
enum Sequel {
    /// Fails, so the connection ends in the middle of the response.
    Fail,
    /// Sends a space, starts the timer again, and so on forever; when the body is dropped (the
    /// client went away), the request's log entry says so.
    Trickle {
        /// Where request `seq` is logged.
        app: Arc<AppState>,
        /// The request whose body it is.
        seq: u64,
    },
    /// Resets the connection; nothing more is written.
    Reset(Option<Connection>),
}

impl FaultBody {
    /// The body of a scripted `transport_error`: a first chunk, then a failure, so the connection
    /// ends in the middle of the response.
    ///
    /// Not a connection closed before any byte: a browser silently resends a GET whose reused
    /// keep-alive connection closed that way (seen in Chromium), and the log would show a
    /// request the driver never sent. A body cut short fails the fetch with a network error that
    /// nothing resends.
    pub fn cut_short() -> FaultBody {
        FaultBody::new(DRIFT, SETTLE, Sequel::Fail)
    }

    /// The body of the `endless_body` fault for request `seq`: a first piece of JSON, then a
    /// space every [`ENDLESS_TICK`], forever. It ends only when the client goes away (its abort
    /// closes the connection, and the next write fails), which it records in the log.
    pub fn endless(app: Arc<AppState>, seq: u64) -> FaultBody {
        FaultBody::new(OPENING, ENDLESS_TICK, Sequel::Trickle { app, seq })
    }

    /// The body of the `reset_mid_body` fault: a first chunk, then, once it is on the wire, a
    /// reset of `connection` (the body never completes, and nothing more is written).
    pub fn reset_mid_body(connection: Option<Connection>) -> FaultBody {
        FaultBody::new(DRIFT, SETTLE, Sequel::Reset(connection))
    }

    /// A body that sends `first_chunk`, then, after `wait`, its `sequel`.
    fn new(first_chunk: &'static [u8], wait: Duration, sequel: Sequel) -> FaultBody {
        FaultBody {
            first_chunk: Some(Bytes::from_static(first_chunk)),
            timer: Box::pin(tokio::time::sleep(wait)),
            sequel,
        }
    }
}

impl HttpBody for FaultBody {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Self::Data>, Self::Error>>> {
        if let Some(chunk) = self.first_chunk.take() {
            return Poll::Ready(Some(Ok(Frame::data(chunk))));
        }
        ready!(self.timer.as_mut().poll(cx));
        match &self.sequel {
            Sequel::Fail => Poll::Ready(Some(Err(std::io::Error::other(
                "scripted transport_error: the response is cut short",
            )))),
            Sequel::Trickle { .. } => {
                let next = tokio::time::Instant::now() + ENDLESS_TICK;
                self.timer.as_mut().reset(next);
                Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(b" ")))))
            }
            // The connection task drops this body with the connection; until then (it may be
            // polled again first), nothing more: an error here would close it with a FIN.
            Sequel::Reset(Some(connection)) => {
                connection.reset();
                Poll::Pending
            }
            Sequel::Reset(None) => Poll::Ready(Some(Err(std::io::Error::other(
                "scripted reset_mid_body without a connection handle",
            )))),
        }
    }
}

impl Drop for FaultBody {
    fn drop(&mut self) {
        if let Sequel::Trickle { app, seq } = &self.sequel {
            app.client_gone(*seq, "abandoned its endless body");
        }
    }
}

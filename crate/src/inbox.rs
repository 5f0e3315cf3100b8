//! What reaches a running action from outside its own request: the screen letting go, a block
//! that another action of the origin learned, and the action's timer firing. Each source only
//! writes here and wakes the action; the driver reads them in one place, leaving first, so no
//! source ever runs the driver from inside another step.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::task::Waker;

/// The inputs an action has not handled yet, and the waker of the action waiting for them.
#[derive(Default)]
pub(crate) struct Inbox {
    left: Cell<bool>,
    heard: RefCell<VecDeque<f64>>,
    rang: Cell<bool>,
    waker: Cell<Option<Waker>>,
}

impl Inbox {
    /// The screen let go. It stays let go.
    pub(crate) fn leave(&self) {
        self.left.set(true);
        self.wake();
    }

    /// Whether the screen has let go.
    pub(crate) fn has_left(&self) -> bool {
        self.left.get()
    }

    /// Another action learned that the origin is blocked until `until_ms` (shared-clock
    /// milliseconds). Every block is kept, in the order heard, as the model records each one:
    /// several can arrive before the action next runs, when other actions are answered in the
    /// same task.
    pub(crate) fn hear(&self, until_ms: f64) {
        self.heard.borrow_mut().push_back(until_ms);
        self.wake();
    }

    /// The first block heard and not yet read.
    pub(crate) fn take_heard(&self) -> Option<f64> {
        self.heard.borrow_mut().pop_front()
    }

    /// The armed timer fired.
    pub(crate) fn ring(&self) {
        self.rang.set(true);
        self.wake();
    }

    /// Whether the armed timer fired since the last read or the last [`Inbox::rearm`].
    pub(crate) fn take_ring(&self) -> bool {
        self.rang.take()
    }

    /// A new timer replaces the armed one: a ring of the old one no longer counts.
    pub(crate) fn rearm(&self) {
        self.rang.set(false);
    }

    /// Wakes `waker` at the next input.
    pub(crate) fn wake_with(&self, waker: &Waker) {
        self.waker.set(Some(waker.clone()));
    }

    fn wake(&self) {
        if let Some(waker) = self.waker.take() {
            waker.wake();
        }
    }
}

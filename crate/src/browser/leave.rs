//! When the screen stops owning an action: the caller's `AbortSignal`, the page being hidden
//! (`pagehide`, which also covers a page going into the back/forward cache), or a newer action
//! for the same screen. Any of them ends the action for good.

use core::cell::{Cell, RefCell};
use core::future::poll_fn;
use core::task::{Poll, Waker};
use std::rc::Rc;

use gloo_events::EventListener;
use wasm_bindgen::JsCast;
use web_sys::{AbortSignal, EventTarget};

/// A one-way switch: once the screen has let go, it never takes the action back.
#[derive(Default)]
pub(crate) struct Leave {
    left: Cell<bool>,
    waker: RefCell<Option<Waker>>,
}

impl Leave {
    /// The screen has let go.
    pub(crate) fn trigger(&self) {
        self.left.set(true);
        if let Some(waker) = self.waker.borrow_mut().take() {
            waker.wake();
        }
    }

    /// Whether the screen has let go.
    pub(crate) fn is_set(&self) -> bool {
        self.left.get()
    }

    /// Resolves when the screen lets go.
    pub(crate) async fn wait(&self) {
        poll_fn(|cx| {
            if self.left.get() {
                Poll::Ready(())
            } else {
                *self.waker.borrow_mut() = Some(cx.waker().clone());
                Poll::Pending
            }
        })
        .await;
    }
}

thread_local! {
    /// The action that owns each named screen.
    static SCREENS: RefCell<Vec<(String, Rc<Leave>)>> = const { RefCell::new(Vec::new()) };
}

/// Everything that can make one action's screen let go. Dropping it removes its listeners and
/// gives up its screen, so an ended action leaves nothing behind.
pub(crate) struct Ownership {
    pub(crate) leave: Rc<Leave>,
    screen: Option<String>,
    _listeners: Vec<EventListener>,
}

impl Ownership {
    /// Takes ownership of `screen` (ending the action that held it), and listens to `signal`
    /// and to the page being hidden.
    pub(crate) fn claim(screen: Option<String>, signal: Option<&AbortSignal>) -> Ownership {
        let leave = Rc::new(Leave::default());
        let mut listeners = Vec::with_capacity(2);
        if let Some(signal) = signal {
            if signal.aborted() {
                leave.trigger();
            }
            let on_abort = Rc::clone(&leave);
            listeners.push(EventListener::once(signal, "abort", move |_| {
                on_abort.trigger()
            }));
        }
        // A window fires pagehide; a worker or Node has no page to hide.
        if let Ok(global) = js_sys::global().dyn_into::<EventTarget>() {
            let on_hide = Rc::clone(&leave);
            listeners.push(EventListener::new(&global, "pagehide", move |_| {
                on_hide.trigger()
            }));
        }
        if let Some(name) = &screen {
            SCREENS.with(|screens| {
                let mut screens = screens.borrow_mut();
                if let Some(slot) = screens.iter_mut().find(|(key, _)| key == name) {
                    let previous = core::mem::replace(&mut slot.1, Rc::clone(&leave));
                    previous.trigger();
                } else {
                    screens.push((name.clone(), Rc::clone(&leave)));
                }
            });
        }
        Ownership {
            leave,
            screen,
            _listeners: listeners,
        }
    }
}

impl Drop for Ownership {
    fn drop(&mut self) {
        if let Some(name) = &self.screen {
            SCREENS.with(|screens| {
                screens
                    .borrow_mut()
                    .retain(|(key, owner)| key != name || !Rc::ptr_eq(owner, &self.leave));
            });
        }
    }
}

/// How many screens are owned right now (for tests of cleanup).
pub(crate) fn owned_screens() -> usize {
    SCREENS.with(|screens| screens.borrow().len())
}

//! The discrete-event simulation: pages of widgets, one client per widget, one service.
//!
//! Events run in (time, sequence) order from a binary heap of small entries that compare by
//! those two numbers alone. Our clients are the model's
//! [`Action`]s: the loop feeds each its responses, timers and blocks at the simulated times and
//! performs its decisions. Times here are nanoseconds from the start of the run; an action's
//! own clock is elapsed time from its start.

use core::cmp::Ordering;
use core::time::Duration;
use std::collections::BinaryHeap;

use retry_budget_model::utc::UtcTime;
use retry_budget_model::{Action, Decision, Outcome, Policy, ReceiptClock, Response};

use crate::client::{Ky, Naive, Step};
use crate::rng::Rng;
use crate::service::{Answer, Header, Limiter, RetryAfterMode, Service, EPOCH_UNIX_S, NS};

/// The client policy a run uses for every widget.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Kind {
    /// The model under `policy`; `share` delivers blocks among a page's widgets.
    Ours { policy: Policy, share: bool },
    /// ky 2's documented defaults.
    Ky,
    /// Retries at once, three times.
    Naive,
}

/// The scenario every policy runs against.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Scenario {
    /// Pages arriving.
    pub pages: u32,
    /// Widgets per page, all loading at the page's arrival.
    pub widgets: u32,
    /// Seconds over which the pages arrive, uniformly; 0 for all at once.
    pub arrive_over_s: f64,
    /// The service's limiter.
    pub limiter: Limiter,
    /// How the service writes `Retry-After`.
    pub retry_after: RetryAfterMode,
    /// Response time, lowest and highest, in milliseconds (uniform).
    pub response_ms: (u64, u64),
    /// The seed.
    pub seed: u64,
}

/// What happened to one request.
#[derive(Clone, Copy, Debug)]
pub struct Request {
    /// The widget that sent it.
    pub action: u32,
    /// When it reached the service.
    pub arrive: u64,
    /// The service's answer (set on arrival).
    pub answer: Answer,
    /// Nanoseconds from the service back to the client.
    down: u32,
}

/// One widget's client and its record.
#[derive(Debug)]
enum Client {
    Ours(Box<Action>),
    Ky(Ky),
    Naive(Naive),
    /// The client stopped and was dropped.
    Done,
}

/// One widget.
#[derive(Debug)]
pub struct Slot {
    client: Client,
    /// When the widget started loading.
    pub start: u64,
    in_flight: Option<u32>,
    /// When the response to the request in flight reaches the client.
    reply_at: u64,
    /// The one timer that counts, `u64::MAX` for none: a timer event at another time is stale.
    timer: u64,
    /// Whether that timer is in the queue.
    queued: bool,
    /// When the user was told a final outcome, and whether it was data.
    pub done: Option<(u64, bool)>,
    /// Requests sent.
    pub sent: u32,
}

/// What happens at an event: a page arrives, a request reaches the service or its response
/// the client, or a widget's timer fires (when it is still the one armed). Pages are numbered
/// in the order they arrive, as their widgets are: page `p` holds widgets `p * widgets ..`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Ev {
    Arrive,
    Reach(u32),
    Receive(u32),
    Timer(u32),
}

/// An event in the queue, ordered earliest first and, at one time, first pushed first.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Entry {
    at: u64,
    seq: u64,
    ev: Ev,
}

impl Ord for Entry {
    /// Reversed, so that the max-heap pops the earliest.
    fn cmp(&self, other: &Self) -> Ordering {
        (other.at, other.seq).cmp(&(self.at, self.seq))
    }
}

impl PartialOrd for Entry {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

/// The record of one run.
#[derive(Debug)]
pub struct Run {
    /// Every widget, in page order.
    pub slots: Vec<Slot>,
    /// Every request, in send order.
    pub requests: Vec<Request>,
    /// Sends by our clients before a block that the client knew of had ended.
    pub early_sends: u32,
}

/// The event loop's state.
struct Sim {
    kind: Kind,
    widgets: u32,
    response_ms: (u64, u64),
    service: Service,
    rng: Rng,
    heap: BinaryHeap<Entry>,
    seq: u64,
    /// The `Retry-After` text of the response being received.
    header: String,
    /// Each page's block, by arrival number: the latest end its widgets were told of.
    page_block: Vec<u64>,
    run: Run,
}

/// The arrival time of every page, the same for every policy of one seed.
pub fn arrivals(s: &Scenario) -> Vec<u64> {
    let mut rng = Rng::new(s.seed, 1);
    let span = (s.arrive_over_s * NS as f64) as u64;
    (0..s.pages)
        .map(|_| if span == 0 { 0 } else { rng.range(0, span) })
        .collect()
}

/// Runs `kind` against a fresh service with the scenario's arrivals.
pub fn run(s: &Scenario, kind: Kind) -> Run {
    run_arrivals(s, kind, &arrivals(s))
}

/// Runs `kind` against a fresh service with the pages arriving at `times` (nanoseconds from
/// the start, one per page, in any order).
pub fn run_arrivals(s: &Scenario, kind: Kind, times: &[u64]) -> Run {
    let mut sim = Sim {
        kind,
        widgets: s.widgets,
        response_ms: s.response_ms,
        service: Service::new(s.limiter, s.retry_after),
        rng: Rng::new(s.seed, 2),
        heap: BinaryHeap::new(),
        seq: 0,
        header: String::new(),
        page_block: vec![0; times.len()],
        run: Run {
            slots: Vec::with_capacity((s.pages * s.widgets) as usize),
            requests: Vec::with_capacity((s.pages * s.widgets * 3) as usize),
            early_sends: 0,
        },
    };
    for &at in times {
        sim.push(at, Ev::Arrive);
    }
    while let Some(Entry { at, ev, .. }) = sim.heap.pop() {
        sim.step(at, ev);
    }
    sim.run
}

/// Nanoseconds as a duration.
fn dur(ns: u64) -> Duration {
    Duration::from_nanos(ns)
}

/// A duration as nanoseconds, saturating.
fn nanos(d: Duration) -> u64 {
    u64::try_from(d.as_nanos()).unwrap_or(u64::MAX)
}

impl Sim {
    fn push(&mut self, at: u64, ev: Ev) {
        self.seq += 1;
        self.heap.push(Entry {
            at,
            seq: self.seq,
            ev,
        });
    }

    fn step(&mut self, now: u64, ev: Ev) {
        match ev {
            Ev::Arrive => self.arrive(now),
            Ev::Reach(req) => self.reach(now, req),
            Ev::Receive(req) => self.receive(now, req),
            Ev::Timer(id) if self.run.slots[id as usize].timer == now => self.timer(now, id),
            Ev::Timer(_) => {}
        }
    }

    /// The next page arrives: its widgets start, knowing what their page was told (nothing,
    /// as it is new).
    fn arrive(&mut self, now: u64) {
        for _ in 0..self.widgets {
            let id = self.run.slots.len() as u32;
            let blocked = self.page_block[(id / self.widgets) as usize].saturating_sub(now);
            let draw = self.rng.unit();
            let (client, first) = match self.kind {
                Kind::Ours { policy, share } => {
                    let blocks: &[Duration] = if share && blocked > 0 {
                        &[dur(blocked)]
                    } else {
                        &[]
                    };
                    let (action, d) = Action::start_on_origin(policy, blocks, draw)
                        .expect("the policies here are valid");
                    (Client::Ours(Box::new(action)), Step::from_decision(d))
                }
                Kind::Ky => (
                    Client::Ky(Ky::default()),
                    Step::Send {
                        timeout: Ky::TIMEOUT,
                    },
                ),
                Kind::Naive => (
                    Client::Naive(Naive::default()),
                    Step::Send { timeout: None },
                ),
            };
            self.run.slots.push(Slot {
                client,
                start: now,
                in_flight: None,
                reply_at: 0,
                timer: u64::MAX,
                queued: false,
                done: None,
                sent: 0,
            });
            self.perform(now, id, first);
            self.retire(id);
        }
    }

    fn reach(&mut self, now: u64, req: u32) {
        let answer = self.service.handle(now);
        let r = &mut self.run.requests[req as usize];
        r.answer = answer;
        let at = now + u64::from(r.down);
        self.push(at, Ev::Receive(req));
    }

    fn receive(&mut self, now: u64, req: u32) {
        let Request { action, answer, .. } = self.run.requests[req as usize];
        let slot = &mut self.run.slots[action as usize];
        if slot.in_flight != Some(req) || slot.done.is_some() {
            return;
        }
        slot.in_flight = None;
        let elapsed = now - slot.start;
        let draw = self.rng.unit();
        let header = answer
            .retry_after
            .write(&mut self.header)
            .then_some(self.header.as_str());
        let step = match &mut slot.client {
            Client::Ours(a) => {
                let response = Response {
                    status: answer.status,
                    retry_after: header,
                    clock: ReceiptClock::Server(server_clock(now)),
                };
                Step::from_decision(a.on_response_drawn(dur(elapsed), response, draw))
            }
            Client::Ky(k) => k.on_response(answer.status, header, server_clock(now)),
            Client::Naive(n) => n.on_response(answer.status),
            Client::Done => Step::Idle,
        };
        self.perform(now, action, step);
        self.share(now, action);
        self.retire(action);
    }

    fn timer(&mut self, now: u64, id: u32) {
        let slot = &mut self.run.slots[id as usize];
        slot.timer = u64::MAX;
        let in_flight = slot.in_flight.is_some();
        let step = match &mut slot.client {
            Client::Ours(a) => Step::from_decision(a.on_timer(dur(now - slot.start))),
            Client::Ky(k) => k.on_timer(in_flight),
            Client::Naive(_) | Client::Done => Step::Idle,
        };
        self.perform(now, id, step);
        self.retire(id);
    }

    /// Delivers the block that `from`'s latest response announced to its page's other widgets.
    fn share(&mut self, now: u64, from: u32) {
        let Kind::Ours { share: true, .. } = self.kind else {
            return;
        };
        let slot = &self.run.slots[from as usize];
        let Client::Ours(a) = &slot.client else {
            return;
        };
        let Some(until) = a.announced_block() else {
            return;
        };
        let until = slot.start.saturating_add(nanos(until));
        let page = (from / self.widgets) as usize;
        self.page_block[page] = self.page_block[page].max(until);
        let first = page as u32 * self.widgets;
        for id in (first..first + self.widgets).filter(|&id| id != from) {
            self.block(now, id, until);
        }
    }

    fn block(&mut self, now: u64, id: u32, until: u64) {
        let slot = &mut self.run.slots[id as usize];
        let Client::Ours(a) = &mut slot.client else {
            return;
        };
        if slot.done.is_some() || slot.start > now {
            return;
        }
        let d = a.on_block(dur(now - slot.start), dur(until.saturating_sub(slot.start)));
        self.perform(now, id, Step::from_decision(d));
        self.retire(id);
    }

    /// Drops a stopped widget's client, once what it announced has been shared: a model action
    /// keeps its whole trace, and a run holds tens of thousands of them at once.
    fn retire(&mut self, id: u32) {
        let slot = &mut self.run.slots[id as usize];
        if slot.done.is_some() {
            slot.client = Client::Done;
        }
    }

    /// Does what a client decided at `now`.
    fn perform(&mut self, now: u64, id: u32, step: Step) {
        match step {
            Step::Send { timeout } => {
                self.send(now, id);
                self.arm(id, timeout.map(|t| now + t));
            }
            Step::SendOurs { abort_at } | Step::Wake { at: abort_at } => {
                if matches!(step, Step::SendOurs { .. }) {
                    self.send(now, id);
                }
                let start = self.run.slots[id as usize].start;
                self.arm(id, Some(start.saturating_add(abort_at)));
            }
            Step::WaitFor { ns } => self.arm(id, Some(now + ns)),
            Step::Idle => {}
            Step::Stop { data } => {
                let slot = &mut self.run.slots[id as usize];
                slot.done = Some((now, data));
                slot.timer = u64::MAX;
                slot.in_flight = None;
            }
        }
    }

    /// Arms the widget's timer for `at`, or disarms it. An attempt's timeout that its response
    /// will beat is not queued: the response re-arms or stops the widget first. Most requests
    /// are answered long before their cap, and their stale timers filled half the queue.
    fn arm(&mut self, id: u32, at: Option<u64>) {
        let slot = &mut self.run.slots[id as usize];
        match at {
            Some(at) if slot.timer != at || !slot.queued => {
                slot.timer = at;
                slot.queued = slot.in_flight.is_none() || slot.reply_at >= at;
                if slot.queued {
                    self.push(at, Ev::Timer(id));
                }
            }
            Some(_) => {}
            None => slot.timer = u64::MAX,
        }
    }

    fn send(&mut self, now: u64, id: u32) {
        self.check_block(now, id);
        let (lo, hi) = self.response_ms;
        let total = self.rng.range(lo * 1_000_000, hi * 1_000_000);
        let up = total / 2;
        let req = self.run.requests.len() as u32;
        self.run.requests.push(Request {
            action: id,
            arrive: now + up,
            answer: Answer {
                status: 0,
                retry_after: Header::Absent,
            },
            down: u32::try_from(total - up).unwrap_or(u32::MAX),
        });
        let slot = &mut self.run.slots[id as usize];
        slot.in_flight = Some(req);
        slot.reply_at = now + total;
        slot.sent += 1;
        self.push(now + up, Ev::Reach(req));
    }

    /// Counts a send by our client before a block that it, or its page, knew of had ended.
    fn check_block(&mut self, now: u64, id: u32) {
        let slot = &self.run.slots[id as usize];
        let Client::Ours(a) = &slot.client else {
            return;
        };
        let mut known = slot.start.saturating_add(nanos(a.origin_block()));
        if let Kind::Ours { share: true, .. } = self.kind {
            known = known.max(self.page_block[(id / self.widgets) as usize]);
        }
        if now < known {
            self.run.early_sends += 1;
        }
    }
}

/// The service's clock at simulated nanosecond `ns`: also the client's receipt clock.
pub fn server_clock(ns: u64) -> UtcTime {
    UtcTime::from_unix_secs(EPOCH_UNIX_S).saturating_add(dur(ns))
}

impl Step {
    /// What a model decision asks the driver to do.
    pub fn from_decision(d: Decision) -> Step {
        match d {
            Decision::Send { abort_at, .. } => Step::SendOurs {
                abort_at: nanos(abort_at),
            },
            Decision::Await { abort_at } => Step::Wake {
                at: nanos(abort_at),
            },
            Decision::Wait { until } => Step::Wake { at: nanos(until) },
            Decision::Stop(outcome) => Step::Stop {
                data: outcome == Outcome::Success,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Two pages of two widgets against a window of one request per 10 s, each response
    /// exactly 100 ms (50 ms each way), page 1 arriving at 0 and page 0 at 1 s.
    ///
    /// Page 1: both widgets send at 0 and reach the service at 50 ms; the first is admitted,
    /// the second refused with `Retry-After: 10` (9.95 s to the window's end, rounded up), read
    /// at 100 ms: a block until 10.1 s, for page 1. Page 0 arrives at 1 s and nobody has told
    /// it anything: both its widgets send at once and reach the service at 1.05 s. (Before the
    /// fix, page 0 read the block of whichever page had arrived first, page 1's, and waited
    /// until 10.1 s.)
    #[test]
    fn a_page_shares_no_block_with_a_page_that_arrived_before_it() {
        let s = Scenario {
            pages: 2,
            widgets: 2,
            arrive_over_s: 0.0,
            limiter: Limiter::Window {
                limit: 1,
                window_s: 10,
            },
            retry_after: RetryAfterMode::Seconds,
            response_ms: (100, 100),
            seed: 1,
        };
        let kind = Kind::Ours {
            policy: Policy::new(),
            share: true,
        };
        let run = run_arrivals(&s, kind, &[NS, 0]);
        let reached = |at: u64| run.requests.iter().filter(|r| r.arrive == at).count();
        assert_eq!(reached(50_000_000), 2, "page 1 sends at 0");
        assert_eq!(reached(1_050_000_000), 2, "page 0 sends at its arrival");
    }
}

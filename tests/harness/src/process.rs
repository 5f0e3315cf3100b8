//! Child processes and the local ports they listen on.

use std::net::TcpStream;
use std::time::{Duration, Instant};

use tokio::process::Child;

/// A child process that is killed when this is dropped.
pub struct Process(Child);

impl Process {
    /// Takes charge of `child`: it is killed when the returned value is dropped.
    pub(crate) fn new(child: Child) -> Process {
        Process(child)
    }
}

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.0.start_kill();
    }
}

/// A TCP port on 127.0.0.1 that was free a moment ago.
pub fn free_port() -> Result<u16, String> {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .map_err(|e| format!("no free port: {e}"))
}

/// Waits (up to 20 s) until something accepts connections on 127.0.0.1:`port`; `what` names
/// it in the error.
pub async fn wait_for_port(port: u16, what: &str) -> Result<(), String> {
    let deadline = Instant::now() + Duration::from_secs(20);
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        if Instant::now() >= deadline {
            return Err(format!("{what} did not listen on port {port}"));
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    Ok(())
}

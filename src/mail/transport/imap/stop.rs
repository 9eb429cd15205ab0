//! [`Stop`]: how another thread ends a poller's waiting at once (it
//! closes the registered socket and wakes sleepers).
//!
//! Not here: the connection itself (`connect.rs`) and the poller.

use std::net::{Shutdown, TcpStream};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

/// Ends another thread's waiting on an [`ImapPoller`](super::ImapPoller):
/// [`Stop::stop`] closes the poller's socket (a blocked IDLE or read
/// returns with an error at once, also for a connection made after the
/// stop) and wakes [`Stop::sleep`]. Cloned handles share one state.
#[derive(Debug, Clone, Default)]
pub struct Stop {
    inner: Arc<(Mutex<StopState>, Condvar)>,
}

#[derive(Debug, Default)]
struct StopState {
    stopped: bool,
    /// A handle on the poller's current socket.
    socket: Option<TcpStream>,
}

impl Stop {
    pub fn new() -> Stop {
        Stop::default()
    }

    /// Stops: closes the registered socket and wakes every sleeper.
    pub fn stop(&self) {
        let (lock, cvar) = &*self.inner;
        let mut st = lock.lock().unwrap_or_else(|e| e.into_inner());
        st.stopped = true;
        if let Some(sock) = st.socket.take() {
            let _ = sock.shutdown(Shutdown::Both);
        }
        cvar.notify_all();
    }

    pub fn is_stopped(&self) -> bool {
        let (lock, _) = &*self.inner;
        lock.lock().unwrap_or_else(|e| e.into_inner()).stopped
    }

    /// Sleeps `d`, or less when stopped meanwhile. Returns whether it was
    /// stopped.
    pub fn sleep(&self, d: Duration) -> bool {
        let (lock, cvar) = &*self.inner;
        let st = lock.lock().unwrap_or_else(|e| e.into_inner());
        let (st, _) = cvar
            .wait_timeout_while(st, d, |st| !st.stopped)
            .unwrap_or_else(|e| e.into_inner());
        st.stopped
    }

    /// Registers the socket a stop must close; closes it at once when
    /// already stopped.
    pub(super) fn register(&self, sock: &TcpStream) {
        let (lock, _) = &*self.inner;
        let mut st = lock.lock().unwrap_or_else(|e| e.into_inner());
        match sock.try_clone() {
            Ok(clone) if st.stopped => {
                let _ = clone.shutdown(Shutdown::Both);
            }
            Ok(clone) => st.socket = Some(clone),
            Err(_) => st.socket = None,
        }
    }
}

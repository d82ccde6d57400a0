//! A circuit breaker per endpoint: after `threshold` consecutive failed attempts it opens and
//! refuses deliveries for the cool-down, then lets one trial through (half-open): a success
//! closes it, a failure opens it again.

use std::sync::Mutex;
use std::time::{Duration, Instant};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Closed { failures: u32 },
    Open { until: Instant },
    HalfOpen,
}

/// One endpoint's breaker.
#[derive(Debug)]
pub struct Breaker {
    threshold: u32,
    cooldown: Duration,
    state: Mutex<State>,
}

impl Breaker {
    /// A closed breaker.
    pub fn new(threshold: u32, cooldown: Duration) -> Breaker {
        Breaker {
            threshold: threshold.max(1),
            cooldown,
            state: Mutex::new(State::Closed { failures: 0 }),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether an attempt may be made now (an open breaker past its cool-down lets one trial
    /// through).
    pub fn allow(&self) -> bool {
        let mut s = self.lock();
        match *s {
            State::Closed { .. } => true,
            State::Open { until } if Instant::now() >= until => {
                *s = State::HalfOpen;
                true
            }
            State::Open { .. } | State::HalfOpen => false,
        }
    }

    /// Records a successful attempt (closes the breaker).
    pub fn success(&self) {
        *self.lock() = State::Closed { failures: 0 };
    }

    /// Records a failed attempt.
    pub fn failure(&self) {
        let mut s = self.lock();
        let open = State::Open {
            until: Instant::now() + self.cooldown,
        };
        *s = match *s {
            State::Closed { failures } if failures + 1 < self.threshold => State::Closed {
                failures: failures + 1,
            },
            State::Closed { .. } | State::HalfOpen => open,
            State::Open { until } => State::Open { until },
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opens_after_the_threshold_and_closes_after_a_good_trial() {
        let b = Breaker::new(2, Duration::from_millis(30));
        b.failure();
        assert!(b.allow());
        b.failure();
        assert!(!b.allow());
        std::thread::sleep(Duration::from_millis(40));
        assert!(b.allow(), "half-open after the cool-down");
        assert!(!b.allow(), "one trial at a time");
        b.failure();
        assert!(!b.allow(), "a failed trial opens it again");
        std::thread::sleep(Duration::from_millis(40));
        assert!(b.allow());
        b.success();
        assert!(b.allow() && b.allow());
    }
}

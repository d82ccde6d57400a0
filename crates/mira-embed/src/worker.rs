//! The model thread: owns the ONNX Runtime session and batches what callers submit.
//!
//! Callers (any thread) submit a job (token sequences, sorted by length) and wait for its
//! vectors. The thread runs one forward pass at a time; before each it takes the texts of
//! every job waiting, smallest jobs first, up to the batch size. So requests that arrive while
//! a pass runs (50 HTTP clients storing at once, or a single store beside an import) share the
//! next pass instead of queueing one pass each, and a small job never waits behind all of a
//! large one: this is micro-batching whose window is the pass in progress, without any delay
//! when the model is idle.

use std::collections::VecDeque;
use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;

use crate::runtime::Runtime;
use crate::EmbedError;

type Reply = Result<Vec<Vec<f32>>, EmbedError>;

/// A submitted request: its sequences, the vectors computed so far, where to answer.
struct Job {
    seqs: Vec<Vec<u32>>,
    vectors: Vec<Vec<f32>>,
    taken: usize,
    done: usize,
    reply: mpsc::SyncSender<Reply>,
}

impl Job {
    fn remaining(&self) -> usize {
        self.seqs.len() - self.taken
    }
}

#[derive(Default)]
struct Queue {
    jobs: VecDeque<Job>,
    closed: bool,
}

#[derive(Default)]
struct Shared {
    queue: Mutex<Queue>,
    ready: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Handle to the model thread; dropping it finishes the queued jobs and stops the thread.
pub(crate) struct Worker {
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl Worker {
    /// Starts the thread that runs `runtime` in passes of at most `batch_size` texts.
    pub(crate) fn start(runtime: Runtime, batch_size: usize) -> Result<Self, EmbedError> {
        let shared = Arc::new(Shared::default());
        let inner = shared.clone();
        let thread = std::thread::Builder::new()
            .name("mira-embed".into())
            .spawn(move || run(&inner, runtime, batch_size.max(1)))
            .map_err(|e| EmbedError::Inference(format!("cannot start the model thread: {e}")))?;
        Ok(Worker {
            shared,
            thread: Some(thread),
        })
    }

    /// Embeds `seqs` (best sorted by length: passes are cut in this order) and waits for the
    /// vectors, in the order of `seqs`.
    pub(crate) fn embed(&self, seqs: Vec<Vec<u32>>) -> Reply {
        if seqs.is_empty() {
            return Ok(Vec::new());
        }
        let (reply, answer) = mpsc::sync_channel(1);
        {
            let mut queue = self.shared.lock();
            if queue.closed {
                return Err(stopped());
            }
            queue.jobs.push_back(Job {
                vectors: vec![Vec::new(); seqs.len()],
                seqs,
                taken: 0,
                done: 0,
                reply,
            });
        }
        self.shared.ready.notify_one();
        answer.recv().unwrap_or_else(|_| Err(stopped()))
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.shared.lock().closed = true;
        self.shared.ready.notify_one();
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn stopped() -> EmbedError {
    EmbedError::Inference("the model thread has stopped".into())
}

/// Closes the queue when the model thread ends, even by a panic: waiting callers get an error
/// (their reply senders are dropped) and later ones are refused instead of waiting forever.
struct CloseOnExit<'a>(&'a Shared);

impl Drop for CloseOnExit<'_> {
    fn drop(&mut self) {
        let mut queue = self.0.lock();
        queue.closed = true;
        queue.jobs.clear();
    }
}

fn run(shared: &Shared, mut runtime: Runtime, batch_size: usize) {
    let _close = CloseOnExit(shared);
    let mut active: Vec<Job> = Vec::new();
    loop {
        {
            let mut queue = shared.lock();
            while queue.jobs.is_empty() && active.is_empty() && !queue.closed {
                queue = shared
                    .ready
                    .wait(queue)
                    .unwrap_or_else(PoisonError::into_inner);
            }
            if queue.jobs.is_empty() && active.is_empty() {
                return;
            }
            active.extend(queue.jobs.drain(..));
        }
        let picked = pick(&mut active, batch_size);
        for pass in passes(&active, picked) {
            let batch: Vec<&[u32]> = pass
                .iter()
                .map(|&(j, i)| active[j].seqs[i].as_slice())
                .collect();
            match runtime.forward(&batch) {
                Ok(vectors) => {
                    for (&(j, i), v) in pass.iter().zip(vectors) {
                        active[j].vectors[i] = v;
                        active[j].done += 1;
                    }
                }
                Err(e) => {
                    // Every job of the pass fails; its other texts are dropped with it.
                    let message = e.to_string();
                    for &(j, _) in &pass {
                        let job = &mut active[j];
                        if job.done != usize::MAX {
                            let _ = job.reply.send(Err(EmbedError::Inference(message.clone())));
                            job.done = usize::MAX;
                        }
                    }
                }
            }
        }
        active.retain_mut(|job| {
            if job.done == usize::MAX {
                return false;
            }
            if job.done < job.seqs.len() {
                return true;
            }
            let _ = job.reply.send(Ok(std::mem::take(&mut job.vectors)));
            false
        });
    }
}

/// The texts of the next round, as (job, sequence) pairs: jobs with the fewest texts left go
/// first, each contributing its texts in order, until `batch_size` texts are taken.
fn pick(active: &mut [Job], batch_size: usize) -> Vec<(usize, usize)> {
    let mut order: Vec<usize> = (0..active.len()).collect();
    order.sort_by_key(|&j| active[j].remaining());
    let mut picked = Vec::with_capacity(batch_size);
    for j in order {
        let job = &mut active[j];
        while picked.len() < batch_size && job.taken < job.seqs.len() {
            picked.push((j, job.taken));
            job.taken += 1;
        }
    }
    picked
}

/// Splits the round into forward passes of similar lengths: sorted by length, a new pass starts
/// where a text is more than half again as long as the shortest of the current pass (plus a few
/// tokens), so that one long text does not pad many short ones.
fn passes(active: &[Job], mut picked: Vec<(usize, usize)>) -> Vec<Vec<(usize, usize)>> {
    let len = |&(j, i): &(usize, usize)| active[j].seqs[i].len();
    picked.sort_by_key(len);
    let mut out: Vec<Vec<(usize, usize)>> = Vec::new();
    for item in picked {
        match out.last_mut() {
            Some(pass) if len(&item) <= len(&pass[0]) * 3 / 2 + 8 => pass.push(item),
            _ => out.push(vec![item]),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(lengths: &[usize]) -> Job {
        let (reply, _) = mpsc::sync_channel(1);
        Job {
            seqs: lengths.iter().map(|&n| vec![1; n]).collect(),
            vectors: vec![Vec::new(); lengths.len()],
            taken: 0,
            done: 0,
            reply,
        }
    }

    #[test]
    fn small_jobs_go_first_and_rounds_are_bounded() {
        let mut active = vec![job(&[5; 10]), job(&[7]), job(&[9, 9])];
        let picked = pick(&mut active, 4);
        assert_eq!(picked, vec![(1, 0), (2, 0), (2, 1), (0, 0)]);
        assert_eq!(active[0].remaining(), 9);
        let next = pick(&mut active, 4);
        assert_eq!(next, vec![(0, 1), (0, 2), (0, 3), (0, 4)]);
    }

    #[test]
    fn passes_split_where_lengths_jump() {
        let active = vec![job(&[10, 12, 14, 200, 30])];
        let picked = (0..5).map(|i| (0, i)).collect();
        let lengths: Vec<Vec<usize>> = passes(&active, picked)
            .iter()
            .map(|p| p.iter().map(|&(j, i)| active[j].seqs[i].len()).collect())
            .collect();
        assert_eq!(lengths, vec![vec![10, 12, 14], vec![30], vec![200]]);
    }
}

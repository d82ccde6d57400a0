//! The model threads: each owns an ONNX Runtime session; together they batch what callers
//! submit.
//!
//! Callers (any thread) submit a job (token sequences, sorted by length) and wait for its
//! vectors. A model thread that is free takes a share of the texts waiting, smallest jobs
//! first: up to the batch size, and no more than its part when the other model threads are
//! there to take the rest, so that four query variants run on two cores at once. Requests
//! that arrive while passes run (50 HTTP clients storing at once, a single store beside an
//! import) share the next pass instead of queueing one pass each, and a small job never waits
//! behind all of a large one: micro-batching whose window is the pass in progress, without any
//! delay when the model is idle.

use std::sync::mpsc;
use std::sync::{Arc, Condvar, Mutex, MutexGuard, PoisonError};
use std::thread::JoinHandle;

use crate::runtime::Runtime;
use crate::EmbedError;

type Reply = Result<Vec<Vec<f32>>, EmbedError>;

/// A submitted request: its sequences, the vectors computed so far, where to answer.
struct Job {
    id: u64,
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

/// A text taken by a model thread: its job, its index there, its tokens.
type Taken = (u64, usize, Vec<u32>);

#[derive(Default)]
struct Queue {
    jobs: Vec<Job>,
    next_id: u64,
    closed: bool,
}

impl Queue {
    fn waiting(&self) -> usize {
        self.jobs.iter().map(Job::remaining).sum()
    }

    /// Answers and drops every job (the model threads are gone).
    fn fail_all(&mut self) {
        for job in self.jobs.drain(..) {
            let _ = job.reply.send(Err(stopped()));
        }
    }
}

struct Shared {
    queue: Mutex<Queue>,
    ready: Condvar,
    batch_size: usize,
    threads: usize,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, Queue> {
        self.queue.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Handle to the model threads; dropping it finishes the queued jobs and stops the threads.
pub(crate) struct Worker {
    shared: Arc<Shared>,
    threads: Vec<JoinHandle<()>>,
}

impl Worker {
    /// Starts one model thread per runtime, running passes of at most `batch_size` texts.
    pub(crate) fn start(runtimes: Vec<Runtime>, batch_size: usize) -> Result<Self, EmbedError> {
        let shared = Arc::new(Shared {
            queue: Mutex::new(Queue::default()),
            ready: Condvar::new(),
            batch_size: batch_size.max(1),
            threads: runtimes.len().max(1),
        });
        let mut worker = Worker {
            shared,
            threads: Vec::new(),
        };
        for (n, runtime) in runtimes.into_iter().enumerate() {
            let shared = worker.shared.clone();
            let thread = std::thread::Builder::new()
                .name(format!("mira-embed-{n}"))
                .spawn(move || run(&shared, runtime))
                .map_err(|e| EmbedError::Inference(format!("cannot start a model thread: {e}")))?;
            worker.threads.push(thread);
        }
        Ok(worker)
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
            let id = queue.next_id;
            queue.next_id += 1;
            queue.jobs.push(Job {
                id,
                vectors: vec![Vec::new(); seqs.len()],
                seqs,
                taken: 0,
                done: 0,
                reply,
            });
        }
        self.shared.ready.notify_all();
        answer.recv().unwrap_or_else(|_| Err(stopped()))
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        self.shared.lock().closed = true;
        self.shared.ready.notify_all();
        for thread in self.threads.drain(..) {
            let _ = thread.join();
        }
    }
}

fn stopped() -> EmbedError {
    EmbedError::Inference("the model threads have stopped".into())
}

/// Fails every job when a model thread panics: the texts it held would never be answered,
/// so callers get an error instead of waiting forever, and later ones are refused.
struct FailOnPanic<'a>(&'a Shared);

impl Drop for FailOnPanic<'_> {
    fn drop(&mut self) {
        if std::thread::panicking() {
            let mut queue = self.0.lock();
            queue.closed = true;
            queue.fail_all();
            drop(queue);
            self.0.ready.notify_all();
        }
    }
}

fn run(shared: &Shared, mut runtime: Runtime) {
    let _guard = FailOnPanic(shared);
    loop {
        let taken = {
            let mut queue = shared.lock();
            while queue.waiting() == 0 && !queue.closed {
                queue = shared
                    .ready
                    .wait(queue)
                    .unwrap_or_else(PoisonError::into_inner);
            }
            if queue.waiting() == 0 {
                return;
            }
            let share = queue.waiting().div_ceil(shared.threads);
            take(&mut queue.jobs, share.min(shared.batch_size))
        };
        let mut results = Vec::with_capacity(taken.len());
        for pass in passes(taken) {
            let batch: Vec<&[u32]> = pass.iter().map(|t| t.2.as_slice()).collect();
            let out = runtime.forward(&batch);
            results.push((pass, out));
        }
        deliver(&mut shared.lock(), results);
    }
}

/// Takes up to `count` texts: jobs with the fewest texts left first, each contributing its
/// texts in order.
fn take(jobs: &mut [Job], count: usize) -> Vec<Taken> {
    let mut order: Vec<usize> = (0..jobs.len()).collect();
    order.sort_by_key(|&j| jobs[j].remaining());
    let mut taken = Vec::with_capacity(count);
    for j in order {
        let job = &mut jobs[j];
        while taken.len() < count && job.taken < job.seqs.len() {
            taken.push((job.id, job.taken, job.seqs[job.taken].clone()));
            job.taken += 1;
        }
    }
    taken
}

/// Splits the texts taken into forward passes of similar lengths: sorted by length, a new pass
/// starts where a text is more than half again as long as the shortest of the current pass
/// (plus a few tokens), so that one long text does not pad many short ones.
fn passes(mut taken: Vec<Taken>) -> Vec<Vec<Taken>> {
    taken.sort_by_key(|t| t.2.len());
    let mut out: Vec<Vec<Taken>> = Vec::new();
    for t in taken {
        match out.last_mut() {
            Some(pass) if t.2.len() <= pass[0].2.len() * 3 / 2 + 8 => pass.push(t),
            _ => out.push(vec![t]),
        }
    }
    out
}

/// Hands the vectors of finished passes to their jobs; answers the jobs now complete, and
/// those a pass failed for (their other texts are dropped with them).
fn deliver(queue: &mut Queue, results: Vec<(Vec<Taken>, Reply)>) {
    for (pass, out) in results {
        match out {
            Ok(vectors) => {
                for ((id, i, _), v) in pass.into_iter().zip(vectors) {
                    if let Some(job) = queue.jobs.iter_mut().find(|j| j.id == id) {
                        job.vectors[i] = v;
                        job.done += 1;
                    }
                }
            }
            Err(e) => {
                let message = e.to_string();
                let failed: Vec<u64> = pass.iter().map(|t| t.0).collect();
                queue.jobs.retain(|job| {
                    let keep = !failed.contains(&job.id);
                    if !keep {
                        let _ = job.reply.send(Err(EmbedError::Inference(message.clone())));
                    }
                    keep
                });
            }
        }
    }
    queue.jobs.retain_mut(|job| {
        if job.done < job.seqs.len() {
            return true;
        }
        let _ = job.reply.send(Ok(std::mem::take(&mut job.vectors)));
        false
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn job(id: u64, lengths: &[usize]) -> Job {
        let (reply, _) = mpsc::sync_channel(1);
        Job {
            id,
            seqs: lengths.iter().map(|&n| vec![1; n]).collect(),
            vectors: vec![Vec::new(); lengths.len()],
            taken: 0,
            done: 0,
            reply,
        }
    }

    fn ids(taken: &[Taken]) -> Vec<(u64, usize)> {
        taken.iter().map(|t| (t.0, t.1)).collect()
    }

    #[test]
    fn small_jobs_go_first_and_takes_are_bounded() {
        let mut jobs = vec![job(0, &[5; 10]), job(1, &[7]), job(2, &[9, 9])];
        let taken = take(&mut jobs, 4);
        assert_eq!(ids(&taken), vec![(1, 0), (2, 0), (2, 1), (0, 0)]);
        assert_eq!(jobs[0].remaining(), 9);
        let next = take(&mut jobs, 4);
        assert_eq!(ids(&next), vec![(0, 1), (0, 2), (0, 3), (0, 4)]);
    }

    #[test]
    fn passes_split_where_lengths_jump() {
        let mut jobs = vec![job(0, &[10, 12, 14, 200, 30])];
        let taken = take(&mut jobs, 5);
        let lengths: Vec<Vec<usize>> = passes(taken)
            .iter()
            .map(|p| p.iter().map(|t| t.2.len()).collect())
            .collect();
        assert_eq!(lengths, vec![vec![10, 12, 14], vec![30], vec![200]]);
    }

    #[test]
    fn delivery_answers_complete_and_failed_jobs() {
        let (reply_a, a) = mpsc::sync_channel(1);
        let (reply_b, b) = mpsc::sync_channel(1);
        let mut queue = Queue {
            jobs: vec![
                Job {
                    reply: reply_a,
                    ..job(0, &[3, 4])
                },
                Job {
                    reply: reply_b,
                    ..job(1, &[5])
                },
            ],
            ..Queue::default()
        };
        let mut taken = take(&mut queue.jobs, 3).into_iter();
        let (b0, a0, a1) = (
            taken.next().unwrap(),
            taken.next().unwrap(),
            taken.next().unwrap(),
        );
        assert_eq!((b0.0, a0.0, a1.0), (1, 0, 0));
        deliver(
            &mut queue,
            vec![
                (vec![a0], Ok(vec![vec![1.0]])),
                (vec![b0], Err(EmbedError::Inference("boom".into()))),
            ],
        );
        assert!(a.try_recv().is_err(), "job 0 is not complete yet");
        assert!(b
            .try_recv()
            .unwrap()
            .unwrap_err()
            .to_string()
            .contains("boom"));
        deliver(&mut queue, vec![(vec![a1], Ok(vec![vec![2.0]]))]);
        assert_eq!(a.try_recv().unwrap().unwrap(), vec![vec![1.0], vec![2.0]]);
        assert!(queue.jobs.is_empty());
    }
}

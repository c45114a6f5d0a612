//! Decoding on a second core: a source's decoder runs on its own thread
//! and hands its records to the converter in batches through a bounded
//! channel, so that decoding overlaps converting, merging and writing.
//!
//! The converter sees the very records, in the very order, it would have
//! decoded itself, so the trace is byte-for-byte the same with or without
//! the thread (`--threads 1` turns them off; a test compares both). Each
//! thread takes one of the run's spare cores ([`claim`]); a source that
//! finds none left, or whose input can be read only once (a pipe is
//! spooled through the run's thread-bound table), decodes inline.
//!
//! Batches come back to the decoder once consumed, so their records'
//! strings and buffers are reused: memory stays a few batches per source.

use crate::error::Result;
use std::os::unix::thread::JoinHandleExt;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::mpsc::{sync_channel, Receiver, RecvError, SyncSender, TryRecvError, TrySendError};
use std::time::{Duration, Instant};

/// Records per batch: large enough that the channel costs nothing per
/// record, small enough that a few batches stay in cache-sized memory.
const BATCH: usize = 2048;
/// Batches in flight between the decoder and the converter.
const DEPTH: usize = 4;

/// Decoder threads still allowed in this process.
static SPARE: AtomicUsize = AtomicUsize::new(0);
/// Threads allowed in all (1: everything inline).
static THREADS: AtomicUsize = AtomicUsize::new(1);
/// Decoder threads that keep their core busy (text parsing).
static BUSY: AtomicUsize = AtomicUsize::new(0);
/// The machine's cores, as [`set_threads`] found them.
static CORES: AtomicUsize = AtomicUsize::new(1);
/// Threads started by [`try_spawn`] and still running.
static LIVE: AtomicUsize = AtomicUsize::new(0);

/// Allows `threads` threads in all for the run (the main one included):
/// `threads - 1` decoder threads. 0 means one per core.
pub fn set_threads(threads: usize) {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    let n = if threads == 0 { cores } else { threads };
    SPARE.store(n.saturating_sub(1), Ordering::Relaxed);
    THREADS.store(n, Ordering::Relaxed);
    BUSY.store(0, Ordering::Relaxed);
    CORES.store(cores, Ordering::Relaxed);
}

/// Whether a decoder that holds a core of its own, and the thread that
/// reads it, may wait for each other by spinning a while ([`SPIN`])
/// before they sleep: when every thread of the process has a core of
/// its own. A sleeping thread is woken by a system call of the other,
/// and on these VMs its core was halted and is started again: a 100 MB
/// kernel trace's decoder, ahead of the run's thread, slept 370 to 540
/// times (5 to 12 ms in all), and the run's thread then waited for its
/// next batch 6 to 64 times (0.5 to 5 ms). Where threads share a core
/// (CLOG2's decoder beside its converter and the run's thread), a spin
/// takes the time another thread would use: 100 MB took 1.05 times as
/// long.
fn may_spin() -> bool {
    // The run's own thread and the ones started here.
    LIVE.load(Ordering::Relaxed) < CORES.load(Ordering::Relaxed)
}

/// How long a wait spins before it sleeps: a batch of events takes the
/// run's thread about 20 us, so a slot frees well within it; a wait any
/// longer is one for a slow input or output, and sleeps. (100 MB of
/// ftrace, 20 alternating rounds against sleeping at once: 0.970 of the
/// time spinning up to 20 us, 0.969 up to 100 us, 0.962 up to 1 ms.)
const SPIN: Duration = Duration::from_micros(100);

/// When one side of a channel spins before it sleeps: while its waits
/// are short. A wait that outlasted a spin (a decoder slower than its
/// reader: 100 MB of `.traced` had the run's thread wait for most of its
/// 1,110 batches) would have spun for nothing, so the next one sleeps at
/// once; one that ended sooner makes the next spin again.
struct Spin {
    /// This side's thread has a core of its own.
    allowed: bool,
    /// The last wait was short.
    next: bool,
}

impl Spin {
    fn new(allowed: bool) -> Spin {
        Spin {
            allowed,
            next: true,
        }
    }

    fn now(&self) -> bool {
        self.allowed && self.next && may_spin()
    }

    fn waited(&mut self, since: Instant) {
        self.next = since.elapsed() < SPIN;
    }
}

/// `tx.send(m)`, spinning first as `spin` says. `Err` when the receiver
/// is gone.
fn send<M>(tx: &SyncSender<M>, m: M, spin: &mut Spin) -> std::result::Result<(), ()> {
    let mut m = match tx.try_send(m) {
        Ok(()) => return Ok(()),
        Err(TrySendError::Full(m)) => m,
        Err(TrySendError::Disconnected(_)) => return Err(()),
    };
    let start = Instant::now();
    if spin.now() {
        let mut n: u32 = 0;
        loop {
            std::hint::spin_loop();
            m = match tx.try_send(m) {
                Ok(()) => return Ok(()),
                Err(TrySendError::Full(m)) => m,
                Err(TrySendError::Disconnected(_)) => return Err(()),
            };
            n = n.wrapping_add(1);
            // The clock is read now and then: a read costs ten spins.
            if n.is_multiple_of(32) && start.elapsed() >= SPIN {
                break;
            }
        }
    }
    let sent = tx.send(m).map_err(drop);
    spin.waited(start);
    sent
}

/// `rx.recv()`, spinning first as `spin` says.
fn recv<M>(rx: &Receiver<M>, spin: &mut Spin) -> std::result::Result<M, RecvError> {
    match rx.try_recv() {
        Ok(m) => return Ok(m),
        Err(TryRecvError::Disconnected) => return Err(RecvError),
        Err(TryRecvError::Empty) => {}
    }
    let start = Instant::now();
    if spin.now() {
        let mut n: u32 = 0;
        loop {
            std::hint::spin_loop();
            match rx.try_recv() {
                Ok(m) => return Ok(m),
                Err(TryRecvError::Disconnected) => return Err(RecvError),
                Err(TryRecvError::Empty) => {}
            }
            n = n.wrapping_add(1);
            if n.is_multiple_of(32) && start.elapsed() >= SPIN {
                break;
            }
        }
    }
    let got = rx.recv();
    spin.waited(start);
    got
}

/// Whether the writer runs on a thread of its own (crate::sink::thread):
/// whenever the run may use threads, but for one beside a busy decoder on
/// the only spare core, where the three took turns on two cores (100 MB
/// of `.traced`: 0.31 s with the writer's formatting inline, 0.37 s on a
/// thread). A binary decoder leaves much of its core free and the writer
/// takes that.
pub fn writer_thread() -> bool {
    let threads = THREADS.load(Ordering::Relaxed);
    threads > 2 || (threads == 2 && BUSY.load(Ordering::Relaxed) == 0)
}

/// Whether the run may use more than one thread (`--threads`).
pub fn threaded() -> bool {
    THREADS.load(Ordering::Relaxed) > 1
}

/// Takes one spare core for a binary decoder's thread, if any is left.
pub fn claim() -> bool {
    SPARE
        .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| n.checked_sub(1))
        .is_ok()
}

/// [`claim`] for a decoder that keeps its core busy (a text parser), so
/// that the writer leaves it that core ([`writer_thread`]).
pub fn claim_busy() -> bool {
    let ok = claim();
    if ok {
        BUSY.fetch_add(1, Ordering::Relaxed);
    }
    ok
}

/// A [`claim`]ed core, given back when dropped (its thread's end).
pub struct Core;

impl Drop for Core {
    fn drop(&mut self) {
        SPARE.fetch_add(1, Ordering::Relaxed);
    }
}

enum Msg<T, F> {
    /// Records, the first `n` of them filled.
    Batch(Vec<T>, usize),
    /// The decoder's end: what it says at the end, or its error.
    End(Result<F>),
}

/// Records of type `T` decoded on another thread; `F` is what the decoder
/// reports at its end (a cut last line, counts...).
pub struct Prefetch<T, F> {
    rx: Receiver<Msg<T, F>>,
    back: SyncSender<Vec<T>>,
    /// How this side waits for a batch.
    spin: Spin,
    batch: Vec<T>,
    filled: usize,
    pos: usize,
}

impl<T: Default + Send + 'static, F: Send + 'static> Prefetch<T, F> {
    /// Starts a thread that builds its decoder with `open`, then fills
    /// records with `read` (`Ok(false)` at the end) and ends with `end`.
    /// The caller has [`claim`]ed a core; the thread gives it back before
    /// it sends its end, so a converter that has seen the end may claim it
    /// again.
    pub fn spawn<D: 'static>(
        open: impl FnOnce() -> Result<D> + Send + 'static,
        read: impl FnMut(&mut D, &mut T) -> Result<bool> + Send + 'static,
        end: impl FnMut(&mut D) -> Result<F> + Send + 'static,
    ) -> Prefetch<T, F> {
        Prefetch::spawn_batched(BATCH, open, read, end)
    }

    /// [`Prefetch::spawn`] with `batch` records per batch, for records
    /// that each hold much memory: a batch must stay in the caches from
    /// the core that fills it to the core that reads it (PCP records, a
    /// whole sample each: 64 per batch took 0.62 s on 100 MB where 2048
    /// took 0.84 s and 256 0.84 s).
    pub fn spawn_batched<D: 'static>(
        batch: usize,
        open: impl FnOnce() -> Result<D> + Send + 'static,
        read: impl FnMut(&mut D, &mut T) -> Result<bool> + Send + 'static,
        end: impl FnMut(&mut D) -> Result<F> + Send + 'static,
    ) -> Prefetch<T, F> {
        Prefetch::start(batch, Some(Core), open, read, end)
    }

    /// [`Prefetch::spawn`] for the decoder of a converter that runs on a
    /// claimed core of its own (crate::source::Threaded): this thread
    /// claims none. A binary decoder keeps its core busy a fraction of the
    /// time, and the run's thread shares that core with it.
    pub fn spawn_beside<D: 'static>(
        open: impl FnOnce() -> Result<D> + Send + 'static,
        read: impl FnMut(&mut D, &mut T) -> Result<bool> + Send + 'static,
        end: impl FnMut(&mut D) -> Result<F> + Send + 'static,
    ) -> Prefetch<T, F> {
        Prefetch::start(BATCH, None, open, read, end)
    }

    /// The thread, holding `core` (given back when it ends) if claimed.
    fn start<D: 'static>(
        batch: usize,
        core: Option<Core>,
        open: impl FnOnce() -> Result<D> + Send + 'static,
        mut read: impl FnMut(&mut D, &mut T) -> Result<bool> + Send + 'static,
        mut end: impl FnMut(&mut D) -> Result<F> + Send + 'static,
    ) -> Prefetch<T, F> {
        let batch = batch.max(1);
        let spin = core.is_some();
        let (tx, rx) = sync_channel::<Msg<T, F>>(DEPTH);
        let (back, spent) = sync_channel::<Vec<T>>(DEPTH + 2);
        spawn(move || {
            let core = core;
            let mut waits = Spin::new(spin);
            let mut d = match open() {
                Ok(d) => d,
                Err(e) => {
                    drop(core);
                    let _ = tx.send(Msg::End(Err(e)));
                    return;
                }
            };
            loop {
                let mut v = match spent.try_recv() {
                    Ok(v) => v,
                    Err(TryRecvError::Empty) => (0..batch).map(|_| T::default()).collect(),
                    // The converter is gone: nobody reads on.
                    Err(TryRecvError::Disconnected) => return,
                };
                let mut n = 0;
                let mut outcome = None;
                for slot in v.iter_mut() {
                    match read(&mut d, slot) {
                        Ok(true) => n += 1,
                        Ok(false) => {
                            outcome = Some(end(&mut d));
                            break;
                        }
                        Err(e) => {
                            outcome = Some(Err(e));
                            break;
                        }
                    }
                }
                if n > 0 && send(&tx, Msg::Batch(v, n), &mut waits).is_err() {
                    return;
                }
                if let Some(o) = outcome {
                    drop(core);
                    let _ = tx.send(Msg::End(o));
                    return;
                }
            }
        });
        Prefetch {
            rx,
            back,
            spin: Spin::new(spin),
            batch: Vec::new(),
            filled: 0,
            pos: 0,
        }
    }

    /// Takes the next batch when this one is used up; the decoder's end
    /// report when it has ended instead.
    fn refill(&mut self) -> Result<Option<F>> {
        if self.pos < self.filled {
            return Ok(None);
        }
        let msg = recv(&self.rx, &mut self.spin).map_err(|_| {
            crate::error::Error::input("internal: a decoder thread ended without a word")
        })?;
        match msg {
            Msg::Batch(v, n) => {
                let old = std::mem::replace(&mut self.batch, v);
                if !old.is_empty() {
                    // Full means the decoder has enough: drop this one.
                    let _ = self.back.try_send(old);
                }
                self.filled = n;
                self.pos = 0;
                Ok(None)
            }
            Msg::End(r) => r.map(Some),
        }
    }

    /// The next record, or the decoder's end report.
    pub fn next_record(&mut self) -> Result<Next<'_, T, F>> {
        if let Some(end) = self.refill()? {
            return Ok(Next::End(end));
        }
        // The batch was written on the other core: ask for a later slot's
        // lines now, so they are here when their turn comes.
        if let Some(later) = self.batch.get(self.pos + AHEAD) {
            warm(later);
        }
        self.pos += 1;
        Ok(Next::Record(&mut self.batch[self.pos - 1]))
    }

    /// The next records, up to `max` (at least one; fewer where a batch
    /// ends), all taken at once, or the decoder's end report: for a
    /// consumer that copies them out in a loop of its own.
    pub fn next_run(&mut self, max: usize) -> Result<Next<'_, [T], F>> {
        if let Some(end) = self.refill()? {
            return Ok(Next::End(end));
        }
        let from = self.pos;
        self.pos = (from + max.max(1)).min(self.filled);
        Ok(Next::Record(
            self.batch.get_mut(from..self.pos).unwrap_or_default(),
        ))
    }

    /// Swaps the next record into `rec` (the record there goes back to
    /// the decoder with its batch, its buffers to be filled again), or
    /// at the end stores the decoder's report in `end`: `Ok(false)`.
    pub fn swap_next(&mut self, rec: &mut T, end: &mut F) -> Result<bool> {
        match self.next_record()? {
            Next::Record(slot) => {
                std::mem::swap(slot, rec);
                Ok(true)
            }
            Next::End(e) => {
                *end = e;
                Ok(false)
            }
        }
    }
}

/// What [`Prefetch::next_record`] and [`Prefetch::next_run`] give.
pub enum Next<'a, T: ?Sized, F> {
    /// A record.
    Record(&'a mut T),
    /// The end, with the decoder's report.
    End(F),
}

/// Asks the processor to bring `item` into the cache, every line of it
/// (a hint: nothing else changes).
#[inline(always)]
pub fn warm<T>(item: &T) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let size = std::mem::size_of::<T>();
        let start = (item as *const T).cast::<i8>();
        // SAFETY: a prefetch reads nothing and cannot fault, whatever the
        // address; these lie inside a live reference anyway.
        unsafe {
            let mut off = 0;
            while off < size {
                _mm_prefetch::<_MM_HINT_T0>(start.wrapping_add(off));
                off += 64;
            }
            // The last line, when the item straddles one more.
            _mm_prefetch::<_MM_HINT_T0>(start.wrapping_add(size.saturating_sub(1)));
        }
    }
}

/// How many slots ahead [`Prefetch::next_record`] warms.
const AHEAD: usize = 4;

/// [`warm`] for the slot `n` items after `item` in the same buffer: an
/// address only, which may lie past the buffer's end (a prefetch never
/// faults).
#[inline(always)]
pub fn warm_ahead<T>(item: &T, n: usize) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_ET0};
        let at = (item as *const T).wrapping_add(n).cast::<i8>();
        // SAFETY: a prefetch reads nothing and cannot fault, whatever the
        // address.
        unsafe {
            _mm_prefetch::<_MM_HINT_ET0>(at);
            _mm_prefetch::<_MM_HINT_ET0>(
                at.wrapping_add(std::mem::size_of::<T>().saturating_sub(1)),
            );
        }
    }
}

/// `std::thread::spawn`, with the new thread started on another CPU than
/// this thread's when one is allowed: Linux may leave a new thread queued
/// on its creator's CPU, the other idle, until a balancing tick moves one
/// of the two (1.5 to 3 ms measured on the VMs).
pub fn spawn<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> std::thread::JoinHandle<T> {
    // As `std::thread::spawn` does when no thread is to be had.
    try_spawn(f).expect("failed to spawn thread")
}

/// [`spawn`] that reports a thread not to be had (a tight memory limit)
/// instead of panicking.
pub fn try_spawn<T: Send + 'static>(
    f: impl FnOnce() -> T + Send + 'static,
) -> std::io::Result<std::thread::JoinHandle<T>> {
    let here = current_cpu();
    LIVE.fetch_add(1, Ordering::Relaxed);
    let handle = std::thread::Builder::new()
        .spawn(move || {
            let _live = Live;
            if current_cpu() == here {
                away_from(here, None);
            }
            f()
        })
        .inspect_err(|_| {
            LIVE.fetch_sub(1, Ordering::Relaxed);
        })?;
    away_from(here, Some(handle.as_pthread_t()));
    Ok(handle)
}

/// Counts its thread out of [`LIVE`] when the thread ends, by a panic
/// too.
struct Live;

impl Drop for Live {
    fn drop(&mut self) {
        LIVE.fetch_sub(1, Ordering::Relaxed);
    }
}

/// The CPU this thread runs on, if the system says.
fn current_cpu() -> Option<usize> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: no arguments, no memory touched.
        usize::try_from(unsafe { libc::sched_getcpu() }).ok()
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

/// Moves a new thread (`thread`, or the calling one) off its creator's
/// CPU `cpu` if it is queued or running there, then gives it back every
/// CPU it had, so that the scheduler stays free to move it later.
///
/// Linux often queues a new thread on its creator's CPU even when
/// another is idle, and only its periodic balancing moves one of the two,
/// a tick later (HZ=250: 4 ms). Measured on the 2-core VMs, the thread or
/// its creator waited 1.5 to 3 ms in three spawns of four, and a 100 MB
/// kernel trace (70 ms in all, two spawns) ran in 0.97 of the time with
/// this. Both sides act, for either may run first: the creator moves a
/// thread that still waits in its queue, the thread moves itself when it
/// took the CPU first (its creator then waits).
fn away_from(cpu: Option<usize>, thread: Option<libc::pthread_t>) {
    #[cfg(target_os = "linux")]
    {
        let Some(cpu) = cpu.filter(|&c| c < libc::CPU_SETSIZE as usize) else {
            return;
        };
        let size = std::mem::size_of::<libc::cpu_set_t>();
        // SAFETY: system calls on a set that lives on this stack, its size
        // given, for this thread or one whose handle is held (not joined,
        // so the thread id is still valid).
        unsafe {
            let t = thread.unwrap_or_else(|| libc::pthread_self());
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            if libc::pthread_getaffinity_np(t, size, &mut set) != 0 || !libc::CPU_ISSET(cpu, &set) {
                return;
            }
            let all = set;
            libc::CPU_CLR(cpu, &mut set);
            if libc::CPU_COUNT(&set) == 0 {
                return;
            }
            libc::pthread_setaffinity_np(t, size, &set);
            libc::pthread_setaffinity_np(t, size, &all);
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (cpu, thread);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Waits that spin, then sleep, pass every message in order, whichever
    /// side is slower, and see a side that is gone, full channel or not.
    #[test]
    fn spinning_waits_lose_nothing() {
        // As on a machine with a core for every thread of the tests.
        CORES.store(1 << 20, Ordering::Relaxed);
        let spin = || Spin::new(true);
        for slow_receiver in [false, true] {
            let (tx, rx) = sync_channel::<u32>(1);
            let sender = std::thread::spawn(move || {
                let mut waits = spin();
                for i in 0..400 {
                    if !slow_receiver && i % 50 == 0 {
                        // Longer than a spin: the receiver sleeps.
                        std::thread::sleep(SPIN * 3);
                    }
                    send(&tx, i, &mut waits).unwrap();
                }
            });
            let mut waits = spin();
            for i in 0..400 {
                if slow_receiver && i % 50 == 0 {
                    std::thread::sleep(SPIN * 3);
                }
                assert_eq!(recv(&rx, &mut waits), Ok(i));
            }
            sender.join().unwrap();
            assert_eq!(recv(&rx, &mut spin()), Err(RecvError));
        }
        let (tx, rx) = sync_channel::<u32>(1);
        send(&tx, 1, &mut spin()).unwrap();
        drop(rx);
        assert!(send(&tx, 2, &mut spin()).is_err());
        let (tx, rx) = sync_channel::<u32>(1);
        drop(rx);
        assert!(send(&tx, 1, &mut spin()).is_err());
        // A receiver that spins till its sender goes away mid-spin.
        let (tx, rx) = sync_channel::<u32>(1);
        let t = std::thread::spawn(move || {
            std::thread::sleep(SPIN / 2);
            drop(tx);
        });
        assert_eq!(recv(&rx, &mut spin()), Err(RecvError));
        t.join().unwrap();
    }

    /// The CPUs the calling thread may run on.
    #[cfg(target_os = "linux")]
    fn allowed() -> Vec<usize> {
        // SAFETY: a set on this stack, its size given.
        unsafe {
            let mut set: libc::cpu_set_t = std::mem::zeroed();
            assert_eq!(
                libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set),
                0
            );
            (0..libc::CPU_SETSIZE as usize)
                .filter(|&c| libc::CPU_ISSET(c, &set))
                .collect()
        }
    }

    /// A thread moved off its creator's CPU gets every CPU back, and it
    /// runs what it was given: placing it changes nothing else.
    #[cfg(target_os = "linux")]
    #[test]
    fn spawned_threads_keep_every_cpu() {
        let mine = allowed();
        for _ in 0..8 {
            // Each thread looks once its creator is done placing it.
            let (go, wait) = std::sync::mpsc::channel::<()>();
            let h = spawn(move || {
                wait.recv().unwrap();
                (allowed(), 7)
            });
            go.send(()).unwrap();
            assert_eq!(h.join().unwrap(), (mine.clone(), 7));
            let (go, wait) = std::sync::mpsc::channel::<()>();
            let h = try_spawn(move || {
                wait.recv().unwrap();
                allowed()
            })
            .unwrap();
            go.send(()).unwrap();
            assert_eq!(h.join().unwrap(), mine);
        }
        assert_eq!(allowed(), mine, "the creator's own CPUs are left alone");
    }
}

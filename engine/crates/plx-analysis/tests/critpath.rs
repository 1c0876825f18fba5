//! Critical paths of synthetic experiments whose path is known by construction: exact lengths
//! and exact time per function, transfer and handoff on the path (1 tick = 1 ns).

use std::collections::BTreeMap;
use std::path::Path;

use plx_analysis::critpath::{
    imbalance, profile, CriticalPath, Item, ItemKind, Level, Mode, Segment,
};
use plx_analysis::{MergeOptions, Model, Window};
use plx_format::synth::SynthProcess;
use plx_format::{EventEncoder, Experiment, NamedBy, RegionKind, SyncKind, ThreadLevel, NONE_U32};

use plx_format::test_dir::tmp;

#[path = "fixtures/open.rs"]
mod open_fixture;
use open_fixture::open;

struct Run {
    exp: Experiment,
    model: Model,
    cp: CriticalPath,
}

fn run(d: &Path, window: Window, mode: Mode, app: Option<&str>) -> Run {
    let (exp, model) = open(d);
    let app = app.map(|a| model.apps.iter().position(|x| x.name == a).unwrap() as u32);
    let cp =
        CriticalPath::compute(&model, &exp, window, mode, app, MergeOptions::default()).unwrap();
    Run { exp, model, cp }
}

impl Run {
    fn items(&self, level: Level) -> Vec<Item> {
        profile(
            &self.model,
            &self.exp,
            &self.cp.graph,
            &self.cp.segments,
            level,
            MergeOptions::default(),
        )
        .unwrap()
    }

    /// name → ns of the profile at `level`.
    fn times(&self, level: Level) -> BTreeMap<String, i64> {
        let items = self.items(level);
        let total: i64 = items.iter().map(|i| i.time_ns).sum();
        assert_eq!(total, self.cp.length_ns(), "the items add up to the length");
        items.into_iter().map(|i| (i.name, i.time_ns)).collect()
    }

    fn labels(&self) -> Vec<String> {
        self.cp.graph.locations.iter().map(|l| l.label()).collect()
    }
}

/// An MPI rank on node1 (pid 1000 + rank): main (1), the given functions (2, ...), MPI_Send
/// (10), MPI_Recv (11), MPI_Barrier (12).
fn rank(r: u32, size: u32, functions: &[&str]) -> SynthProcess {
    let mut p = SynthProcess::new("node1", 1000 + r, &["./ranks"]);
    p.functions(&[(1, "main")]);
    for (i, f) in functions.iter().enumerate() {
        p.region(2 + i as u32, RegionKind::Function, f);
    }
    p.mpi_routines(&[(10, "MPI_Send"), (11, "MPI_Recv"), (12, "MPI_Barrier")])
        .thread(0, 1000 + r, "main", 0)
        .mpi_init(r, size, ThreadLevel::Single, 0)
        .comm(0, 0, &(0..size).collect::<Vec<_>>())
        .comm(1, 0, &[r]);
    p
}

fn write(d: &Path, mut p: SynthProcess, threads: &[(u32, &EventEncoder)], end: u64) {
    for (t, e) in threads {
        p.chunk(*t, e);
    }
    p.end(end, 0);
    p.write(d).unwrap();
}

const TRANSFER: u64 = 1000;

/// Rank r computes (r + 1) × 100 µs in compute_rankR, then passes a message to r + 1; rank
/// r > 0 first waits in MPI_Recv for it (from t = 0), leaves MPI_Recv 50 ns after it arrived.
fn chain(d: &Path) -> u64 {
    let size = 4u32;
    let mut send_at = 0u64;
    let mut end = 0;
    for r in 0..size {
        let c = (r as u64 + 1) * 100_000;
        let names: Vec<String> = (0..size).map(|i| format!("compute_rank{i}")).collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        let p = rank(r, size, &names);
        let f = 2 + r;
        let mut e = EventEncoder::new(0);
        e.enter(1, 0);
        let mut t = 0;
        if r > 0 {
            let arrive = send_at + TRANSFER;
            e.enter(11, 0)
                .recv(r - 1, 0, 8, 0, arrive)
                .exit(11, arrive + 50);
            t = arrive + 50;
        }
        e.enter(f, t).exit(f, t + c);
        t += c;
        if r + 1 < size {
            e.enter(10, t).send(r + 1, 0, 8, 0, t).exit(10, t + 100);
            send_at = t;
            e.exit(1, t + 200);
            end = t + 200;
        } else {
            e.exit(1, t + 10);
            end = t + 10;
        }
        write(d, p, &[(0, &e)], end);
    }
    end
}

#[test]
fn a_chain_of_messages_is_the_sum_of_computes_and_transfers() {
    let d = tmp("chain");
    let elapsed = chain(&d) as i64;
    let r = run(&d, Window::ALL, Mode::Global, None);
    assert_eq!(elapsed, 1_003_160);
    assert_eq!(
        r.cp.length_ns(),
        elapsed,
        "no waits on the path: length = elapsed"
    );
    let t = r.times(Level::Procedure);
    let want: BTreeMap<String, i64> = [
        ("compute_rank0", 100_000),
        ("compute_rank1", 200_000),
        ("compute_rank2", 300_000),
        ("compute_rank3", 400_000),
        ("MPI_Recv", 150),
        ("main", 10),
        ("Msg: 0.0->1.0", 1000),
        ("Msg: 1.0->2.0", 1000),
        ("Msg: 2.0->3.0", 1000),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    assert_eq!(t, want);
    // each compute is one rank's; MPI_Recv is on three ranks (ALL)
    let items = r.items(Level::Procedure);
    let at = |n: &str| items.iter().find(|i| i.name == n).unwrap().location.clone();
    assert_eq!(at("compute_rank2").as_deref(), Some("2.0"));
    assert_eq!(at("MPI_Recv"), None);
    // sorted by time
    assert_eq!(items[0].name, "compute_rank3");
    // process level: CPU per rank, the messages between them
    let p = r.times(Level::Process);
    assert_eq!(p["CPU: 0"], 100_000);
    assert_eq!(p["CPU: 3"], 400_060);
    assert_eq!(p["Msg: 1->2"], 1000);
    // machine level: one host
    let m = r.times(Level::Machine);
    assert_eq!(m["CPU: node1"], elapsed - 3000);
    assert_eq!(m["Msg: node1->node1"], 3000);
    // one application: intra = global
    let intra = run(&d, Window::ALL, Mode::Intra, Some(""));
    assert_eq!(intra.cp.length_ns(), elapsed);
    assert_eq!(intra.cp.segments, r.cp.segments);
}

#[test]
fn a_window_limits_the_graph() {
    let d = tmp("chain-window");
    chain(&d);
    let w = Window {
        start_ns: 200_000,
        end_ns: 700_000,
    };
    let r = run(&d, w, Mode::Global, None);
    assert_eq!(
        r.cp.length_ns(),
        500_000,
        "the whole window, no wait on the path"
    );
    let t = r.times(Level::Procedure);
    assert_eq!(t["compute_rank1"], 101_050);
    assert_eq!(t["compute_rank2"], 300_000);
    assert_eq!(t["compute_rank3"], 96_850);
    assert!(!t.contains_key("compute_rank0"));
    let first = &r.cp.segments[0];
    assert_eq!((first.start_ns, first.kind), (200_000, ItemKind::Cpu));
    assert_eq!(r.cp.segments.last().unwrap().end_ns, 700_000);
}

#[test]
fn the_slow_rank_before_a_barrier_is_on_the_path() {
    let d = tmp("barrier");
    let size = 4;
    let (slow, fast, after) = (1_000_000u64, 100_000u64, 50_000u64);
    let leave = slow + 2000;
    for r in 0..size {
        let p = rank(r, size, &["compute_slow", "compute_fast", "compute_after"]);
        let (f, c) = if r == 2 { (2, slow) } else { (3, fast) };
        let mut e = EventEncoder::new(0);
        e.enter(1, 0)
            .enter(f, 0)
            .exit(f, c)
            .enter(12, c)
            .collective(0, NONE_U32, 0, 0, leave)
            .exit(12, leave)
            .enter(4, leave)
            .exit(4, leave + after)
            .exit(1, leave + after);
        write(&d, p, &[(0, &e)], leave + after);
    }
    let r = run(&d, Window::ALL, Mode::Global, None);
    let elapsed = (leave + after) as i64;
    assert_eq!(r.cp.length_ns(), elapsed);
    let t = r.times(Level::Procedure);
    assert_eq!(t["compute_slow"], slow as i64);
    assert_eq!(t["compute_after"], after as i64);
    assert!(!t.contains_key("compute_fast"), "{t:?}");
    // the 2 µs between the last arrival and the departure: in the barrier or its handoff
    let barrier = t.get("MPI_Barrier").copied().unwrap_or(0)
        + t.get("Sync: MPI_Barrier on MPI_COMM_WORLD")
            .copied()
            .unwrap_or(0);
    assert_eq!(barrier, 2000);
    let slow_cpu = r.times(Level::Thread)["CPU: 2.0"];
    assert!(slow_cpu >= slow as i64);
    // compute_slow's imbalance: its 1 ms on the path over its mean of 250 µs a rank (rank 2
    // alone ran it); compute_after, as long on every rank, and compute_fast, not on the path,
    // have none; the barrier's mean (ranks waiting 902 µs in it) is over its path time
    let imb = imbalance(
        &r.model,
        &r.exp,
        &r.cp.graph,
        &r.cp.segments,
        MergeOptions::default(),
    )
    .unwrap();
    assert_eq!(imb[0].name, "compute_slow", "{imb:?}");
    assert_eq!(imb[0].path_ns, slow as i64);
    assert_eq!(imb[0].mean_ns, slow as f64 / 4.0);
    assert_eq!(imb[0].imbalance_ns, slow as f64 * 0.75);
    assert!(
        imb.iter().all(|i| !matches!(
            i.name.as_str(),
            "compute_after" | "compute_fast" | "MPI_Barrier"
        )),
        "{imb:?}"
    );
}

/// Main takes a mutex, works 500 µs in compute_locked, releases it; the worker (started at
/// 100) waited for it from 200, gets it 10 ns after the release, works 200 µs, ends; main
/// joins it (waiting from 550 µs).
#[test]
fn a_lock_handoff_and_a_join_carry_the_path_between_threads() {
    let d = tmp("lock");
    let mut p = SynthProcess::new("host", 50, &["/bin/locks"]);
    p.functions(&[
        (1, "main"),
        (2, "worker"),
        (3, "compute_locked"),
        (4, "compute_main"),
        (5, "compute_after_lock"),
    ])
    .thread(0, 50, "main", 0)
    .thread(1, 51, "worker", 100)
    .sync_object(0, SyncKind::Mutex, NamedBy::Init, NONE_U32, 0x4000)
    .sync_object(1, SyncKind::Thread, NamedBy::Use, NONE_U32, 0x5000);
    let mutex = 0u8;
    let thread = 6u8;
    let mut m = EventEncoder::new(0);
    m.enter(1, 0)
        .acquire(0, mutex, 0, 10)
        .enter(3, 10)
        .exit(3, 500_010)
        .release(0, mutex, 500_010)
        .enter(4, 500_010)
        .exit(4, 550_010)
        .acquire(1, thread, 150_030, 700_040)
        .exit(1, 700_100);
    let mut w = EventEncoder::new(100);
    w.enter(2, 100)
        .acquire(0, mutex, 499_820, 500_020)
        .enter(5, 500_020)
        .exit(5, 700_020)
        .release(0, mutex, 700_020)
        .exit(2, 700_030)
        .release(1, thread, 700_030);
    write(&d, p, &[(0, &m), (1, &w)], 700_100);
    let r = run(&d, Window::ALL, Mode::Global, None);
    assert_eq!(r.cp.length_ns(), 700_100);
    let t = r.times(Level::Procedure);
    let want: BTreeMap<String, i64> = [
        ("compute_locked", 500_000),
        ("compute_after_lock", 200_000),
        ("main", 70),
        ("worker", 10),
        ("Sync: mutex 0x4000", 10),
        ("Sync: join 50.1", 10),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    assert_eq!(t, want);
    let th = r.times(Level::Thread);
    assert_eq!(th["CPU: 50.0"], 500_070);
    assert_eq!(th["CPU: 50.1"], 200_010);
    assert_eq!(r.labels(), ["50.0", "50.1"]);
}

/// Main works 1 µs in setup, creates a worker that works 300 µs, joins it.
#[test]
fn a_created_and_joined_thread_is_on_the_path() {
    let d = tmp("fork");
    let mut p = SynthProcess::new("host", 60, &["/bin/forks"]);
    p.functions(&[(1, "main"), (2, "setup"), (3, "child_work")])
        .thread(0, 60, "main", 0)
        .thread(1, 61, "child", 1000)
        .sync_object(0, SyncKind::Thread, NamedBy::Use, NONE_U32, 0x5000);
    let mut m = EventEncoder::new(0);
    m.enter(1, 0)
        .enter(2, 0)
        .exit(2, 1000)
        .acquire(0, 6, 299_050, 301_050)
        .exit(1, 301_100);
    let mut c = EventEncoder::new(1000);
    c.enter(3, 1000).exit(3, 301_000).release(0, 6, 301_000);
    write(&d, p, &[(0, &m), (1, &c)], 301_100);
    let r = run(&d, Window::ALL, Mode::Global, None);
    assert_eq!(r.cp.length_ns(), 301_100);
    let kinds: Vec<(ItemKind, u32, i64, i64)> =
        r.cp.segments
            .iter()
            .map(|s: &Segment| (s.kind, s.location, s.start_ns, s.end_ns))
            .collect();
    assert_eq!(
        kinds,
        [
            (ItemKind::Cpu, 0, 0, 1000),
            (ItemKind::Fork, 1, 1000, 1000),
            (ItemKind::Cpu, 1, 1000, 301_000),
            (ItemKind::Sync, 0, 301_000, 301_050),
            (ItemKind::Cpu, 0, 301_050, 301_100),
        ]
    );
    assert_eq!(r.cp.segments[1].from, Some(0));
    let t = r.times(Level::Procedure);
    assert_eq!(t["child_work"], 300_000);
    assert_eq!(t["setup"], 1000);
    assert_eq!(t["Sync: join 60.1"], 50);
}

const A_TO_B: u64 = 0xa0b0;
const B_TO_A: u64 = 0xb0a0;

/// Session of two applications on one host: A (client) prepares 1 ms, sends a request to B
/// over a stream, waits for the reply, finishes 1 ms. B (server) first warms up 5 ms on its
/// own, then reads the request (100 ns after its read began), serves 1 ms, replies; the reply
/// reaches A 200 ns after it was written.
fn client_server(d: &Path) {
    std::fs::write(d.join("session.txt"), "app A client\napp B server\n").unwrap();
    let socket = |p: &mut SynthProcess| {
        p.region(8, RegionKind::Socket, "send")
            .region(9, RegionKind::Socket, "recv");
    };
    let mut a = SynthProcess::new("host", 100, &["/bin/client"]);
    a.functions(&[(1, "main"), (2, "prepare"), (3, "finish")])
        .thread(0, 100, "main", 0);
    socket(&mut a);
    let mut e = EventEncoder::new(0);
    e.enter(1, 0)
        .enter(2, 0)
        .exit(2, 1_000_000)
        .enter(8, 1_000_000)
        .stream_send(A_TO_B, 100, 100, 1_000_000)
        .exit(8, 1_000_050)
        .enter(9, 1_000_050)
        .stream_recv(B_TO_A, 50, 50, 6_000_300)
        .exit(9, 6_000_300)
        .enter(3, 6_000_300)
        .exit(3, 7_000_300)
        .exit(1, 7_000_300);
    write(&d.join("client"), a, &[(0, &e)], 7_000_300);

    let mut b = SynthProcess::new("host", 200, &["/bin/server"]);
    b.functions(&[(1, "main"), (2, "warmup"), (3, "serve")])
        .thread(0, 200, "main", 0);
    socket(&mut b);
    let mut e = EventEncoder::new(0);
    e.enter(1, 0)
        .enter(2, 0)
        .exit(2, 5_000_000)
        .enter(9, 5_000_000)
        .stream_recv(A_TO_B, 100, 100, 5_000_100)
        .exit(9, 5_000_100)
        .enter(3, 5_000_100)
        .exit(3, 6_000_100)
        .enter(8, 6_000_100)
        .stream_send(B_TO_A, 50, 50, 6_000_100)
        .exit(8, 6_000_150)
        .exit(1, 6_000_200);
    write(&d.join("server"), b, &[(0, &e)], 6_000_200);
}

#[test]
fn inter_application_path_crosses_into_the_server_intra_does_not() {
    let d = tmp("session");
    client_server(&d);

    // global: the server's warm-up delayed everything
    let g = run(&d, Window::ALL, Mode::Global, None);
    assert_eq!(g.cp.length_ns(), 7_000_300);
    let t = g.times(Level::Procedure);
    assert_eq!(t["warmup"], 5_000_000);
    assert_eq!(t["serve"], 1_000_000);
    assert_eq!(t["finish"], 1_000_000);
    assert!(!t.contains_key("prepare"), "the request waited: {t:?}");

    // inter (A): A's own work, the request, B's service of it, the reply; not B's warm-up
    let i = run(&d, Window::ALL, Mode::Inter, Some("A"));
    assert_eq!(i.cp.length_ns(), 3_000_300);
    let t = i.times(Level::Procedure);
    let want: BTreeMap<String, i64> = [
        ("prepare", 1_000_000),
        ("serve", 1_000_000),
        ("finish", 1_000_000),
        ("Msg: A:100.0->B:200.0", 100),
        ("Msg: B:200.0->A:100.0", 200),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    assert_eq!(t, want);
    // the path begins and ends in A: passive diffusion from B never starts it
    let path = i.cp.path.as_ref().unwrap();
    assert_eq!(i.cp.graph.app_of(path.first), Some(0));
    assert_eq!(i.cp.graph.app_of(path.terminal), Some(0));
    let p = i.times(Level::Process);
    assert_eq!(p["CPU: A:100"], 2_000_000);
    assert_eq!(p["CPU: B:200"], 1_000_000);

    // intra (A): A alone; its wait for the reply is unproductive (not counted although the
    // arc from B is ignored): only the 200 ns after the reply was sent are time in recv
    let a = run(&d, Window::ALL, Mode::Intra, Some("A"));
    assert_eq!(a.cp.length_ns(), 2_000_250);
    let t = a.times(Level::Procedure);
    assert_eq!(t["recv"], 200);
    assert_eq!(t["prepare"], 1_000_000);
    assert!(!t.contains_key("serve") && !t.contains_key("warmup"));
    assert!(t.keys().all(|k| !k.starts_with("Msg")));

    // intra (B): B alone
    let b = run(&d, Window::ALL, Mode::Intra, Some("B"));
    assert_eq!(b.cp.length_ns(), 6_000_200);
    let t = b.times(Level::Procedure);
    assert_eq!(t["warmup"], 5_000_000);
    assert_eq!(t["serve"], 1_000_000);
    assert!(!t.contains_key("prepare"));

    // inter (B): B's own start dominates; A only passes on zero-length arcs
    let ib = run(&d, Window::ALL, Mode::Inter, Some("B"));
    assert_eq!(ib.cp.length_ns(), 6_000_200);
    let path = ib.cp.path.as_ref().unwrap();
    assert_eq!(ib.cp.graph.app_of(path.first), Some(1));
}

/// Regression: collectives completed before a window's start still count in the numbering of
/// instances (rank 0 left the first barrier before the window, rank 1 inside it: their second
/// barriers are one instance).
#[test]
fn collectives_before_the_window_keep_their_numbers() {
    let d = tmp("barrier-window");
    for r in 0..2u32 {
        let p = rank(r, 2, &["compute_slow", "compute_fast"]);
        let (first_exit, f, c) = if r == 0 {
            (100, 3, 1000)
        } else {
            (500, 2, 10_000)
        };
        let mut e = EventEncoder::new(0);
        e.enter(1, 0)
            .enter(12, 0)
            .collective(0, NONE_U32, 0, 0, first_exit)
            .exit(12, first_exit)
            .enter(f, first_exit)
            .exit(f, first_exit + c)
            .enter(12, first_exit + c)
            .collective(0, NONE_U32, 0, 0, 10_600)
            .exit(12, 10_600)
            .exit(1, 10_700);
        write(&d, p, &[(0, &e)], 10_700);
    }
    let w = Window {
        start_ns: 200,
        end_ns: i64::MAX,
    };
    let r = run(&d, w, Mode::Global, None);
    assert_eq!(r.cp.length_ns(), 10_500);
    let t = r.times(Level::Procedure);
    assert_eq!(t["compute_slow"], 10_000);
    assert!(!t.contains_key("compute_fast"), "{t:?}");
}

/// One application, two processes on one host: A prepares `write_at` ns, then writes 100
/// bytes to B over a stream. B waits in `epoll_wait` from 0 to 3,000,100 ns, then reads the
/// 100 bytes (a `recv` of 20 ns that does not block when they are there), serves 1 ms.
fn poll_server(d: &Path, write_at: u64) -> u64 {
    let regions = |p: &mut SynthProcess| {
        p.region(8, RegionKind::Socket, "send")
            .region(9, RegionKind::Socket, "recv")
            .region(10, RegionKind::Socket, "epoll_wait");
    };
    let mut a = SynthProcess::new("host", 100, &["/bin/client"]);
    a.functions(&[(1, "main"), (2, "prepare")])
        .thread(0, 100, "main", 0);
    regions(&mut a);
    let mut e = EventEncoder::new(0);
    e.enter(1, 0)
        .enter(2, 0)
        .exit(2, write_at)
        .enter(8, write_at)
        .stream_send(A_TO_B, 100, 100, write_at)
        .exit(8, write_at + 50)
        .exit(1, write_at + 60);
    write(&d.join("client"), a, &[(0, &e)], write_at + 60);

    let mut b = SynthProcess::new("host", 200, &["/bin/server"]);
    b.functions(&[(1, "main"), (3, "serve")])
        .thread(0, 200, "main", 0);
    regions(&mut b);
    let woke = 3_000_100;
    let read = woke.max(write_at + 100);
    let mut e = EventEncoder::new(0);
    e.enter(1, 0)
        .enter(10, 0)
        .exit(10, woke)
        .enter(9, woke)
        .stream_recv(A_TO_B, 100, 100, read)
        .exit(9, read + 20)
        .enter(3, read + 20)
        .exit(3, read + 1_000_020)
        .exit(1, read + 1_000_030);
    write(&d.join("server"), b, &[(0, &e)], read + 1_000_030);
    read + 1_000_030
}

/// The `epoll_wait` nodes of a run's graph and their remote arcs.
fn poll_arcs(r: &Run) -> Vec<(plx_analysis::critpath::ArcKind, bool)> {
    let g = &r.cp.graph;
    g.nodes
        .iter()
        .filter(|n| {
            n.kind == plx_analysis::critpath::NodeKind::Unblocked
                && g.labels.get(n.label as usize).map(String::as_str) == Some("epoll_wait")
        })
        .map(|n| (n.arc, n.remote != plx_analysis::critpath::NONE))
        .collect()
}

#[test]
fn a_poll_woken_by_bytes_its_thread_reads_continues_in_their_writer() {
    use plx_analysis::critpath::ArcKind;
    // A writes at 3 ms, 100 ns before B's epoll_wait returns: the bytes woke it, and the path
    // is A's preparation, the stream, B's service (not 3 ms of B waiting)
    let d = tmp("poll-woken");
    std::fs::write(d.join("session.txt"), "app A client\napp B server\n").unwrap();
    let end = poll_server(&d, 3_000_000);
    let g = run(&d, Window::ALL, Mode::Global, None);
    assert_eq!(poll_arcs(&g), [(ArcKind::Stream, true)]);
    assert_eq!(g.cp.length_ns(), end as i64);
    let t = g.times(Level::Procedure);
    assert_eq!(t["prepare"], 3_000_000, "{t:?}");
    assert_eq!(t["serve"], 1_000_000, "{t:?}");
    assert!(!t.contains_key("epoll_wait"), "{t:?}");

    // A writes at 3.5 ms, after the wait returned: something else woke it, which the graph
    // does not show; the recv that then blocked for the bytes takes the stream's arc
    let d = tmp("poll-not-woken");
    std::fs::write(d.join("session.txt"), "app A client\napp B server\n").unwrap();
    poll_server(&d, 3_500_000);
    let g = run(&d, Window::ALL, Mode::Global, None);
    assert_eq!(poll_arcs(&g), [(ArcKind::None, false)]);
    let t = g.times(Level::Procedure);
    assert_eq!(t["prepare"], 3_500_000, "{t:?}");
}

/// Rank 0 computes 100 µs, then sends; rank 1 waits for the message in a blocking probe
/// (`probe`) from t = 0, receives it in `recv`, then computes 200 µs.
fn probed(d: &Path, probe: &str, recv: &str) -> u64 {
    let mut end = 0;
    for r in 0..2u32 {
        let mut p = SynthProcess::new("node1", 1000 + r, &["./ranks"]);
        p.functions(&[(1, "main"), (2, "compute_rank0"), (3, "compute_rank1")]);
        p.mpi_routines(&[(10, "MPI_Send"), (13, probe), (14, recv)])
            .thread(0, 1000 + r, "main", 0)
            .mpi_init(r, 2, ThreadLevel::Single, 0)
            .comm(0, 0, &[0, 1])
            .comm(1, 0, &[r]);
        let mut e = EventEncoder::new(0);
        e.enter(1, 0);
        if r == 0 {
            e.enter(2, 0).exit(2, 100_000);
            e.enter(10, 100_000)
                .send(1, 0, 8, 0, 100_000)
                .exit(10, 100_100);
            e.exit(1, 100_200);
            end = end.max(100_200);
        } else {
            let arrive = 100_000 + TRANSFER;
            e.enter(13, 0).exit(13, arrive);
            e.enter(14, arrive)
                .recv(0, 0, 8, 0, arrive + 10)
                .exit(14, arrive + 50);
            e.enter(3, arrive + 50).exit(3, arrive + 200_050);
            e.exit(1, arrive + 200_060);
            end = end.max(arrive + 200_060);
        }
        write(d, p, &[(0, &e)], end);
    }
    end
}

#[test]
fn a_blocking_probe_waits_for_the_message_its_receive_takes() {
    for (probe, recv) in [("MPI_Mprobe", "MPI_Mrecv"), ("MPI_Probe", "MPI_Recv")] {
        let d = tmp("probe");
        let elapsed = probed(&d, probe, recv) as i64;
        let r = run(&d, Window::ALL, Mode::Global, None);
        assert_eq!(r.cp.length_ns(), elapsed, "{probe}");
        let want: BTreeMap<String, i64> = [
            ("compute_rank0", 100_000),
            ("Msg: 0.0->1.0", 1000),
            (recv, 50),
            ("compute_rank1", 200_000),
            ("main", 10),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        assert_eq!(r.times(Level::Procedure), want, "{probe}");
    }
}

/// Rank 0 completes receives from ranks 1 and 2 in one MPI_Waitall (in the requests' order:
/// `late_first` puts rank 2's first); rank 1 sends after 10 µs of compute_rank1, rank 2 after
/// 300 µs of compute_rank2, whose message arrives 1000 ns later.
fn waitall(d: &Path, late_first: bool) -> u64 {
    let mut end = 0;
    for r in 0..3u32 {
        let mut p = rank(r, 3, &["compute_rank1", "compute_rank2"]);
        p.mpi_routines(&[(15, "MPI_Waitall")]);
        let mut e = EventEncoder::new(0);
        e.enter(1, 0);
        if r == 0 {
            let back = 300_000 + TRANSFER;
            let order = if late_first { [2, 1] } else { [1, 2] };
            e.enter(15, 0);
            for from in order {
                e.recv(from, 0, 8, 0, back);
            }
            e.exit(15, back + 50);
            e.exit(1, back + 60);
            end = end.max(back + 60);
        } else {
            let c = if r == 1 { 10_000 } else { 300_000 };
            e.enter(1 + r, 0).exit(1 + r, c);
            e.enter(10, c).send(0, 0, 8, 0, c).exit(10, c + 100);
            e.exit(1, c + 200);
            end = end.max(c + 200);
        }
        write(d, p, &[(0, &e)], end);
    }
    end
}

#[test]
fn a_waitall_continues_from_the_last_message_whatever_the_requests_order() {
    for late_first in [false, true] {
        let d = tmp("waitall");
        let elapsed = waitall(&d, late_first) as i64;
        let r = run(&d, Window::ALL, Mode::Global, None);
        assert_eq!(r.cp.length_ns(), elapsed, "late_first {late_first}");
        let want: BTreeMap<String, i64> = [
            ("compute_rank2", 300_000),
            ("Msg: 2.0->0.0", 1000),
            ("MPI_Waitall", 50),
            ("main", 10),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v))
        .collect();
        assert_eq!(r.times(Level::Procedure), want, "late_first {late_first}");
    }
}

/// Thread 0 holds a read-write lock for writing 500 µs in compute_write; threads 1 and 2 block
/// reading from 100 and 200 ns; thread 1 gets it first, reads 20 ns in compute_read1 and
/// releases it before thread 2's acquire is recorded; thread 2 then computes 300 µs in
/// compute_read2. Thread 2 waited for the writer, not for thread 1.
#[test]
fn a_reader_continues_from_the_writer_not_from_a_reader_that_released_after_it() {
    let d = tmp("rwlock");
    let mut p = SynthProcess::new("host", 60, &["/bin/rw"]);
    p.functions(&[
        (1, "main"),
        (2, "worker"),
        (3, "compute_write"),
        (4, "compute_read1"),
        (5, "compute_read2"),
    ])
    .thread(0, 60, "main", 0)
    .thread(1, 61, "worker", 100)
    .thread(2, 62, "worker", 200)
    .sync_object(0, SyncKind::RwLock, NamedBy::Init, NONE_U32, 0x4000);
    let rw = 1u8;
    let mut m = EventEncoder::new(0);
    m.enter(1, 0)
        .acquire(0, rw, 0, 10)
        .enter(3, 10)
        .exit(3, 500_010)
        .release(0, rw, 500_010)
        .exit(1, 500_020);
    let mut r1 = EventEncoder::new(100);
    r1.enter(2, 100)
        .read_acquire(0, rw, 499_920, 500_020)
        .enter(4, 500_020)
        .exit(4, 500_040)
        .release(0, rw, 500_040)
        .exit(2, 500_050);
    let mut r2 = EventEncoder::new(200);
    r2.enter(2, 200)
        .read_acquire(0, rw, 499_900, 500_100)
        .enter(5, 500_100)
        .exit(5, 800_100)
        .release(0, rw, 800_100)
        .exit(2, 800_110);
    write(&d, p, &[(0, &m), (1, &r1), (2, &r2)], 800_110);
    let r = run(&d, Window::ALL, Mode::Global, None);
    assert_eq!(r.cp.length_ns(), 800_110);
    let t = r.times(Level::Procedure);
    assert_eq!(t.get("compute_write"), Some(&500_000), "{t:?}");
    assert_eq!(t.get("compute_read2"), Some(&300_000), "{t:?}");
    assert_eq!(t.get("compute_read1"), None, "{t:?}");
    // the arc from the writer's release to the reader's acquire: 90 ns
    assert_eq!(t.get("Sync: rwlock 0x4000"), Some(&90), "{t:?}");
}

/// 4 ranks post an MPI_Iallreduce: rank 2 after 1 ms in compute_slow, the others at once, who
/// then compute 100 µs in compute_fast and wait in MPI_Wait; every rank's Wait returns (its
/// coll_done) 2 µs after rank 2's post, then computes 50 µs in compute_after.
#[test]
fn a_nonblocking_collective_carries_the_path_from_the_last_post_to_the_completions() {
    let d = tmp("icoll");
    let size = 4;
    let (slow, fast, after) = (1_000_000u64, 100_000u64, 50_000u64);
    let done = slow + 2000;
    for r in 0..size {
        let mut p = rank(r, size, &["compute_slow", "compute_fast", "compute_after"]);
        p.mpi_routines(&[(13, "MPI_Iallreduce"), (14, "MPI_Wait")]);
        let post = if r == 2 { slow } else { 0 };
        let mut e = EventEncoder::new(0);
        e.enter(1, 0);
        if r == 2 {
            e.enter(2, 0).exit(2, slow);
        }
        e.enter(13, post)
            .collective(0, NONE_U32, 8, 8, post + 100)
            .exit(13, post + 100);
        if r != 2 {
            e.enter(3, post + 100).exit(3, post + 100 + fast);
        }
        let wait = if r == 2 {
            post + 100
        } else {
            post + 100 + fast
        };
        e.enter(14, wait)
            .coll_done(0, 0, done)
            .exit(14, done)
            .enter(4, done)
            .exit(4, done + after)
            .exit(1, done + after);
        write(&d, p, &[(0, &e)], done + after);
    }
    let r = run(&d, Window::ALL, Mode::Global, None);
    assert_eq!(r.cp.length_ns(), (done + after) as i64);
    let t = r.times(Level::Procedure);
    // the path: rank 2's compute_slow, its post, the completion, compute_after (was: a waiting
    // rank's compute_fast and ~900 µs of its MPI_Wait)
    assert_eq!(t["compute_slow"], slow as i64, "{t:?}");
    assert_eq!(t["compute_after"], after as i64, "{t:?}");
    assert!(!t.contains_key("compute_fast"), "{t:?}");
    let in_wait = t.get("MPI_Wait").copied().unwrap_or(0)
        + t.get("Sync: MPI_Iallreduce on MPI_COMM_WORLD")
            .copied()
            .unwrap_or(0);
    assert_eq!(
        in_wait + t.get("MPI_Iallreduce").copied().unwrap_or(0),
        2000,
        "{t:?}"
    );
}

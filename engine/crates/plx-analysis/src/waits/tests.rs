//! Each pattern's arithmetic on synthetic event sequences (times in ns, exact).

use plx_format::RegionKind;

use super::delay::CauseKind;
use super::{Pattern, Replay, Setup};
use crate::merge::{EventKind, MessageLink};
use crate::regions::{RegionInfo, RegionTable};
use crate::selection::Window;

struct T {
    regions: RegionTable,
    replay: Replay,
}

fn region(regions: &mut RegionTable, name: &str) -> u32 {
    let kind = if name.starts_with("MPI_") {
        RegionKind::Mpi
    } else if name.starts_with("plx_") {
        RegionKind::Runtime
    } else if name.starts_with("sock_") || name == "poll" {
        RegionKind::Socket
    } else {
        RegionKind::Function
    };
    regions.intern(RegionInfo {
        name: name.to_string(),
        kind,
        file: String::new(),
        line: 0,
    })
}

/// `n` ranks (location i = rank i, one process each), or threads of one process.
fn setup(n: u32, ranks: bool, causes: bool) -> T {
    setup_in(n, ranks, causes, Window::ALL)
}

/// [`setup`] of the waits inside `window`.
fn setup_in(n: u32, ranks: bool, causes: bool, window: Window) -> T {
    T {
        regions: RegionTable::default(),
        replay: Replay::new(setup_of(n, ranks, causes, window)),
    }
}

fn setup_of(n: u32, ranks: bool, causes: bool, window: Window) -> Setup {
    Setup {
        loc_rank: (0..n).map(|i| ranks.then_some(i)).collect(),
        loc_process: (0..n).map(|i| if ranks { i } else { 0 }).collect(),
        loc_thread: (0..n).map(|i| if ranks { 0 } else { i }).collect(),
        loc_counted: vec![true; n as usize],
        comm_ranks: vec![(0..n).collect()],
        window,
        causes,
    }
}

/// `n` ranks with causes, the whole run.
fn ranks_setup(n: u32) -> Setup {
    setup_of(n, true, true, Window::ALL)
}

impl T {
    fn enter(&mut self, loc: u32, t: i64, name: &str) {
        let region = region(&mut self.regions, name);
        self.replay
            .event(&self.regions, loc, t, EventKind::Enter { region });
    }
    fn exit(&mut self, loc: u32, t: i64, name: &str) {
        let region = region(&mut self.regions, name);
        self.replay
            .event(&self.regions, loc, t, EventKind::Exit { region });
    }
    fn ev(&mut self, loc: u32, t: i64, kind: EventKind) {
        self.replay.event(&self.regions, loc, t, kind);
    }
    fn send(&mut self, loc: u32, t: i64, peer: u32, id: u64) {
        self.ev(
            loc,
            t,
            EventKind::Send {
                peer,
                tag: 0,
                bytes: 8,
                comm: Some(0),
                message: Some(id),
            },
        );
    }
    fn recv(&mut self, loc: u32, t: i64, peer: u32, id: u64, send_ns: i64) {
        self.ev(
            loc,
            t,
            EventKind::Recv {
                peer,
                tag: 0,
                bytes: 8,
                comm: Some(0),
                message: Some(MessageLink {
                    id,
                    send_ns,
                    sender: peer,
                }),
            },
        );
    }
    fn coll(&mut self, loc: u32, enter: i64, exit: i64, name: &str, root: Option<u32>) {
        self.enter(loc, enter, name);
        self.ev(
            loc,
            exit,
            EventKind::Collective {
                comm: Some(0),
                root,
                bytes_sent: 0,
                bytes_recv: 0,
            },
        );
        self.exit(loc, exit, name);
    }
    fn waits(&self) -> Vec<(&'static str, u32, String, i64)> {
        self.replay
            .waits
            .iter()
            .map(|(&(p, l, cp), &(ns, _))| {
                (
                    p.name(),
                    l,
                    self.replay.callpaths.name(cp, &self.regions),
                    ns,
                )
            })
            .collect()
    }
    fn causes(&self) -> Vec<(&'static str, u32, u32, String, CauseKind, f64)> {
        self.replay
            .causes
            .iter()
            .map(|(&(p, w, c, cp, k), &ns)| {
                (
                    p.name(),
                    w,
                    c,
                    self.replay.callpaths.name(cp, &self.regions),
                    k,
                    ns,
                )
            })
            .collect()
    }
}

fn s(x: &str) -> String {
    x.to_string()
}

/// Cause rows (location, call path, kind, ns) equal to `want`'s, the shares to 1e-9 ns (a
/// share's arithmetic may round in another order).
fn same_shares(got: &[(u32, String, CauseKind, f64)], want: &[(u32, String, CauseKind, f64)]) {
    assert_eq!(got.len(), want.len(), "{got:?}");
    for (g, w) in got.iter().zip(want) {
        assert!(
            g.0 == w.0 && g.1 == w.1 && g.2 == w.2 && (g.3 - w.3).abs() < 1e-9,
            "{got:?}"
        );
    }
}

#[test]
fn late_sender_is_the_time_from_the_receive_to_the_send() {
    let mut t = setup(2, true, true);
    t.enter(0, 0, "main");
    t.enter(1, 0, "main");
    t.enter(1, 0, "work");
    t.enter(0, 100, "MPI_Recv");
    t.exit(1, 400, "work");
    t.enter(1, 400, "MPI_Send");
    t.send(1, 401, 0, 0);
    t.recv(0, 450, 1, 0, 401);
    t.exit(1, 420, "MPI_Send");
    t.exit(0, 460, "MPI_Recv");
    assert_eq!(
        t.waits(),
        vec![("late_sender", 0, s("main => MPI_Recv"), 300)]
    );
    // rank 1 spent 400 in work, rank 0 nothing: all of it is the cause
    assert_eq!(
        t.causes(),
        vec![(
            "late_sender",
            0,
            1,
            s("main => work"),
            CauseKind::Direct,
            300.0
        )]
    );
}

#[test]
fn a_window_holds_the_part_of_each_wait_inside_it() {
    // the late sender of 300 (100 to 400) in a window from 350 to 1000: 50 of it, its cause's
    // share alike; a window from 500 holds none of it
    let run = |window| {
        let mut t = setup_in(2, true, true, window);
        t.enter(0, 0, "main");
        t.enter(1, 0, "main");
        t.enter(1, 0, "work");
        t.enter(0, 100, "MPI_Recv");
        t.exit(1, 400, "work");
        t.enter(1, 400, "MPI_Send");
        t.send(1, 401, 0, 0);
        t.recv(0, 450, 1, 0, 401);
        t.exit(1, 420, "MPI_Send");
        t.exit(0, 460, "MPI_Recv");
        t
    };
    let t = run(Window {
        start_ns: 350,
        end_ns: 1000,
    });
    assert_eq!(
        t.waits(),
        vec![("late_sender", 0, s("main => MPI_Recv"), 50)]
    );
    assert_eq!(
        t.causes(),
        vec![(
            "late_sender",
            0,
            1,
            s("main => work"),
            CauseKind::Direct,
            50.0
        )]
    );
    let t = run(Window {
        start_ns: 500,
        end_ns: 1000,
    });
    assert_eq!(t.waits(), vec![]);
}

#[test]
fn an_early_send_is_no_wait() {
    let mut t = setup(2, true, false);
    t.enter(1, 0, "MPI_Send");
    t.send(1, 1, 0, 0);
    t.exit(1, 5, "MPI_Send");
    t.enter(0, 10, "MPI_Recv");
    t.recv(0, 12, 1, 0, 1);
    t.exit(0, 13, "MPI_Recv");
    assert!(t.waits().is_empty());
}

#[test]
fn a_wait_completing_an_irecv_is_a_late_sender() {
    let mut t = setup(2, true, false);
    t.enter(0, 0, "MPI_Irecv");
    t.exit(0, 2, "MPI_Irecv");
    t.enter(0, 10, "MPI_Wait");
    t.enter(1, 50, "MPI_Isend");
    t.send(1, 51, 0, 0);
    t.exit(1, 52, "MPI_Isend");
    t.recv(0, 60, 1, 0, 51);
    t.exit(0, 61, "MPI_Wait");
    assert_eq!(t.waits(), vec![("late_sender", 0, s("MPI_Wait"), 40)]);
}

#[test]
fn late_receiver_is_a_blocking_send_waiting_for_the_receive() {
    let mut t = setup(2, true, false);
    t.enter(0, 0, "MPI_Ssend");
    t.send(0, 1, 1, 0);
    t.enter(1, 70, "MPI_Recv");
    t.recv(1, 75, 0, 0, 1);
    t.exit(0, 76, "MPI_Ssend");
    t.exit(1, 77, "MPI_Recv");
    assert_eq!(t.waits(), vec![("late_receiver", 0, s("MPI_Ssend"), 70)]);
}

#[test]
fn a_late_sender_while_an_earlier_message_was_pending_is_wrong_order() {
    let mut t = setup(3, true, false);
    t.enter(0, 4, "MPI_Send");
    t.send(0, 5, 2, 0);
    t.exit(0, 6, "MPI_Send");
    t.enter(2, 10, "MPI_Recv");
    t.enter(1, 100, "MPI_Send");
    t.send(1, 101, 2, 1);
    t.exit(1, 102, "MPI_Send");
    t.recv(2, 105, 1, 1, 101);
    t.exit(2, 106, "MPI_Recv");
    // the earlier message, received now, waited for nothing
    t.enter(2, 110, "MPI_Recv");
    t.recv(2, 111, 0, 0, 5);
    t.exit(2, 112, "MPI_Recv");
    assert_eq!(
        t.waits(),
        vec![("late_sender_wrong_order", 2, s("MPI_Recv"), 90)]
    );
}

#[test]
fn a_late_receiver_whose_receiver_took_a_later_message_first_is_wrong_order() {
    let mut t = setup(3, true, false);
    t.enter(0, 0, "MPI_Ssend");
    t.send(0, 1, 2, 0);
    t.enter(2, 40, "MPI_Recv");
    t.enter(1, 50, "MPI_Send");
    t.send(1, 51, 2, 1);
    t.exit(1, 52, "MPI_Send");
    t.recv(2, 55, 1, 1, 51);
    t.exit(2, 56, "MPI_Recv");
    t.enter(2, 60, "MPI_Recv");
    t.recv(2, 61, 0, 0, 1);
    t.exit(0, 62, "MPI_Ssend");
    t.exit(2, 63, "MPI_Recv");
    assert_eq!(
        t.waits(),
        vec![
            ("late_sender_wrong_order", 2, s("MPI_Recv"), 10),
            ("late_receiver_wrong_order", 0, s("MPI_Ssend"), 60)
        ]
    );
}

fn issend_then_wait(mode: u8, done_first: bool) -> T {
    let mut t = setup(2, true, false);
    t.enter(0, 0, "MPI_Issend");
    t.send(0, 1, 1, 0);
    t.exit(0, 2, "MPI_Issend");
    t.enter(0, 10, "MPI_Wait");
    t.enter(1, 70, "MPI_Recv");
    let done = EventKind::SendDone {
        thread: 0,
        mode,
        send: 0,
    };
    if done_first {
        t.ev(0, 74, done);
        t.recv(1, 75, 0, 0, 1);
    } else {
        t.recv(1, 75, 0, 0, 1);
        t.ev(0, 76, done);
    }
    t.exit(0, 77, "MPI_Wait");
    t.exit(1, 78, "MPI_Recv");
    t
}

#[test]
fn the_wait_completing_a_synchronous_send_is_a_late_receiver() {
    for done_first in [false, true] {
        let t = issend_then_wait(1, done_first);
        assert_eq!(t.waits(), vec![("late_receiver", 0, s("MPI_Wait"), 60)]);
    }
}

#[test]
fn a_buffered_send_never_waits_for_its_receiver() {
    for done_first in [false, true] {
        assert!(issend_then_wait(2, done_first).waits().is_empty());
    }
}

#[test]
fn an_eager_send_that_returned_before_the_receive_is_no_late_receiver() {
    let mut t = setup(2, true, false);
    t.enter(0, 0, "MPI_Send");
    t.send(0, 1, 1, 0);
    t.exit(0, 3, "MPI_Send");
    t.enter(1, 70, "MPI_Recv");
    t.recv(1, 75, 0, 0, 1);
    t.exit(1, 77, "MPI_Recv");
    assert!(t.waits().is_empty());
}

#[test]
fn barrier_members_wait_for_the_last_entry() {
    let mut t = setup(3, true, true);
    for l in 0..3 {
        t.enter(l, 0, "main");
    }
    t.enter(2, 0, "slow");
    t.coll(0, 10, 500, "MPI_Barrier", None);
    t.coll(1, 30, 501, "MPI_Barrier", None);
    t.exit(2, 490, "slow");
    t.coll(2, 490, 502, "MPI_Barrier", None);
    assert_eq!(
        t.waits(),
        vec![
            ("wait_at_barrier", 0, s("main => MPI_Barrier"), 480),
            ("wait_at_barrier", 1, s("main => MPI_Barrier"), 460),
        ]
    );
    // rank 2's excess in slow over each waiter: 490 (rank 0 and 1 have none in slow) but
    // main: rank 2 0, rank 0 10, rank 1 30 → only slow is excess
    let c = t.causes();
    assert_eq!(c.len(), 2);
    assert_eq!(
        c[0],
        (
            "wait_at_barrier",
            0,
            2,
            s("main => slow"),
            CauseKind::Direct,
            480.0
        )
    );
    assert_eq!(c[1].1, 1);
    assert_eq!(c[1].5, 460.0);
}

#[test]
fn allreduce_is_nxn_and_bcast_reduce_depend_on_the_root() {
    let mut t = setup(3, true, false);
    // allreduce: last entry at 100
    t.coll(0, 0, 110, "MPI_Allreduce", None);
    t.coll(1, 100, 111, "MPI_Allreduce", None);
    t.coll(2, 40, 112, "MPI_Allreduce", None);
    // bcast from root 1 entering at 300: 0 entered at 200 (waits 100), 2 at 350 (no wait)
    t.coll(0, 200, 310, "MPI_Bcast", Some(1));
    t.coll(1, 300, 305, "MPI_Bcast", Some(1));
    t.coll(2, 350, 360, "MPI_Bcast", Some(1));
    // reduce to root 0 entering at 400: the latest other member enters at 520
    t.coll(0, 400, 600, "MPI_Reduce", Some(0));
    t.coll(1, 470, 480, "MPI_Reduce", Some(0));
    t.coll(2, 520, 530, "MPI_Reduce", Some(0));
    assert_eq!(
        t.waits(),
        vec![
            ("wait_at_nxn", 0, s("MPI_Allreduce"), 100),
            ("wait_at_nxn", 2, s("MPI_Allreduce"), 60),
            ("late_broadcast", 0, s("MPI_Bcast"), 100),
            ("early_reduce", 0, s("MPI_Reduce"), 120),
        ]
    );
}

#[test]
fn lock_contention_names_the_holder_where_it_released() {
    let mut t = setup(2, false, true);
    t.enter(0, 0, "holder");
    t.ev(
        0,
        1,
        EventKind::Acquire {
            object: 5,
            kind: 0,
            wait_ns: 0,
            holder: 0,
            shared: false,
        },
    );
    t.enter(1, 0, "waiter");
    t.ev(0, 200, EventKind::Release { object: 5, kind: 0 });
    t.ev(
        1,
        201,
        EventKind::Acquire {
            object: 5,
            kind: 0,
            wait_ns: 190,
            holder: 0,
            shared: false,
        },
    );
    assert_eq!(t.waits(), vec![("lock_contention", 1, s("waiter"), 190)]);
    assert_eq!(
        t.causes(),
        vec![(
            "lock_contention",
            1,
            0,
            s("holder"),
            CauseKind::Direct,
            190.0
        )]
    );
}

#[test]
fn join_waits_for_the_joined_threads_work() {
    let mut t = setup(2, false, true);
    t.enter(0, 0, "main");
    t.enter(1, 0, "worker");
    t.enter(1, 0, "slow");
    t.exit(1, 300, "slow");
    t.exit(1, 300, "worker");
    t.ev(1, 300, EventKind::Release { object: 9, kind: 6 });
    t.ev(
        0,
        301,
        EventKind::Acquire {
            object: 9,
            kind: 6,
            wait_ns: 290,
            holder: 0,
            shared: false,
        },
    );
    assert_eq!(t.waits(), vec![("join_wait", 0, s("main"), 290)]);
    assert_eq!(
        t.causes(),
        vec![(
            "join_wait",
            0,
            1,
            s("worker => slow"),
            CauseKind::Direct,
            290.0
        )]
    );
}

#[test]
fn thread_barrier_waits_from_the_own_arrival_to_the_last() {
    let mut t = setup(2, false, false);
    t.enter(0, 0, "a");
    t.enter(1, 0, "b");
    t.ev(0, 10, EventKind::Release { object: 3, kind: 3 });
    t.ev(1, 80, EventKind::Release { object: 3, kind: 3 });
    t.ev(
        1,
        85,
        EventKind::Acquire {
            object: 3,
            kind: 3,
            wait_ns: 5,
            holder: 0,
            shared: false,
        },
    );
    t.ev(
        0,
        86,
        EventKind::Acquire {
            object: 3,
            kind: 3,
            wait_ns: 76,
            holder: 0,
            shared: false,
        },
    );
    assert_eq!(t.waits(), vec![("thread_barrier", 0, s("a"), 70)]);
}

#[test]
fn a_wait_caused_by_a_wait_is_propagated_to_its_root_cause() {
    // rank 2 works 300 then sends to 1; rank 1 receives (waits 300) then sends to 0; rank 0
    // waits in its receive from 0
    let mut t = setup(3, true, true);
    for l in 0..3 {
        t.enter(l, 0, "main");
    }
    t.enter(2, 0, "work");
    t.enter(1, 0, "MPI_Recv");
    t.enter(0, 0, "MPI_Recv");
    t.exit(2, 300, "work");
    t.enter(2, 300, "MPI_Send");
    t.send(2, 300, 1, 0);
    t.exit(2, 301, "MPI_Send");
    t.recv(1, 302, 2, 0, 300);
    t.exit(1, 302, "MPI_Recv");
    t.enter(1, 302, "MPI_Send");
    t.send(1, 302, 0, 1);
    t.exit(1, 303, "MPI_Send");
    t.recv(0, 304, 1, 1, 302);
    t.exit(0, 304, "MPI_Recv");
    let w = t.waits();
    assert_eq!(
        w,
        vec![
            ("late_sender", 0, s("main => MPI_Recv"), 302),
            ("late_sender", 1, s("main => MPI_Recv"), 300),
        ]
    );
    let c = t.causes();
    // rank 1's wait: rank 2's work, direct
    assert!(c.contains(&(
        "late_sender",
        1,
        2,
        s("main => work"),
        CauseKind::Direct,
        300.0
    )));
    // rank 0's wait: rank 1 spent 302 in MPI_Recv of which 300 waiting (propagated to rank
    // 2's work) and 2 busy (direct)
    assert!(c.contains(&(
        "late_sender",
        0,
        2,
        s("main => work"),
        CauseKind::Propagated,
        300.0
    )));
    assert!(c.contains(&(
        "late_sender",
        0,
        1,
        s("main => MPI_Recv"),
        CauseKind::Direct,
        2.0
    )));
    let _ = Pattern::ALL;
}

#[test]
fn a_relayed_delay_is_direct_at_the_relay_and_propagated_to_its_head() {
    // after a barrier that rank 1 leaves 10 later than ranks 0 and 2 (at 20, not 10): rank 0
    // works 300 in delay_head and sends to rank 1, waiting in its receive since 20; rank 1
    // works 100 in own_work and sends to rank 2, waiting in its receive since 10
    let mut t = setup(3, true, true);
    for l in 0..3 {
        t.enter(l, 0, "main");
    }
    t.coll(0, 0, 10, "MPI_Barrier", None);
    t.coll(2, 0, 10, "MPI_Barrier", None);
    t.coll(1, 0, 20, "MPI_Barrier", None);
    t.enter(0, 10, "delay_head");
    t.enter(2, 10, "MPI_Recv");
    t.enter(1, 20, "MPI_Recv");
    t.exit(0, 310, "delay_head");
    t.enter(0, 310, "MPI_Send");
    t.send(0, 310, 1, 0);
    t.recv(1, 310, 0, 0, 310);
    t.exit(1, 310, "MPI_Recv");
    t.exit(0, 311, "MPI_Send");
    t.enter(1, 310, "own_work");
    t.exit(1, 410, "own_work");
    t.enter(1, 410, "MPI_Send");
    t.send(1, 410, 2, 1);
    t.recv(2, 410, 1, 1, 410);
    t.exit(2, 410, "MPI_Recv");
    t.exit(1, 411, "MPI_Send");
    assert_eq!(
        t.waits(),
        vec![
            ("late_sender", 1, s("main => MPI_Recv"), 290),
            ("late_sender", 2, s("main => MPI_Recv"), 400),
        ]
    );
    let late: Vec<_> = t
        .causes()
        .into_iter()
        .filter(|c| c.0 == "late_sender")
        .collect();
    assert_eq!(
        late,
        vec![
            // rank 1 waited 290 for rank 0's work since the barrier
            (
                "late_sender",
                1,
                0,
                s("main => delay_head"),
                CauseKind::Direct,
                290.0
            ),
            // rank 2 waited 400 for rank 1: its 10 in the barrier after rank 2 had left it and
            // its 100 of work, direct; its 290 of waiting, propagated to rank 0's delay_head
            (
                "late_sender",
                2,
                0,
                s("main => delay_head"),
                CauseKind::Propagated,
                290.0
            ),
            (
                "late_sender",
                2,
                1,
                s("main => MPI_Barrier"),
                CauseKind::Direct,
                10.0
            ),
            (
                "late_sender",
                2,
                1,
                s("main => own_work"),
                CauseKind::Direct,
                100.0
            ),
        ]
    );
}

#[test]
fn the_runtimes_own_work_is_no_part_of_a_user_call_path() {
    let mut t = setup(2, false, true);
    t.enter(0, 0, "main");
    t.enter(1, 0, "worker");
    t.enter(1, 0, "plx_symbols");
    t.exit(1, 100, "plx_symbols");
    t.exit(1, 400, "worker");
    t.ev(1, 400, EventKind::Release { object: 9, kind: 6 });
    t.ev(
        0,
        401,
        EventKind::Acquire {
            object: 9,
            kind: 6,
            wait_ns: 200,
            holder: 0,
            shared: false,
        },
    );
    assert_eq!(
        t.causes(),
        vec![
            ("join_wait", 0, 1, s("worker"), CauseKind::Direct, 150.0),
            ("join_wait", 0, 1, s("plx_symbols"), CauseKind::Direct, 50.0),
        ]
    );
}

#[test]
fn a_waitall_completing_several_late_receives_waits_once_until_the_latest_send() {
    let mut t = setup(3, true, false);
    t.enter(0, 0, "MPI_Waitall");
    t.enter(1, 100, "MPI_Isend");
    t.send(1, 100, 0, 0);
    t.exit(1, 101, "MPI_Isend");
    t.enter(2, 300, "MPI_Isend");
    t.send(2, 300, 0, 1);
    t.exit(2, 301, "MPI_Isend");
    t.recv(0, 305, 2, 1, 300);
    t.recv(0, 306, 1, 0, 100);
    t.exit(0, 307, "MPI_Waitall");
    // 300 in all: not 300 + 100
    assert_eq!(t.waits(), vec![("late_sender", 0, s("MPI_Waitall"), 300)]);
}

#[test]
fn a_collective_wait_found_after_the_exit_is_not_excess_after_it() {
    // rank 1 leaves the barrier (at 101) before rank 2's part of it comes (at 103), so its
    // barrier wait is found after its exit; then it works 50 and sends late to rank 0
    let mut t = setup(3, true, true);
    for l in 0..3 {
        t.enter(l, 0, "main");
    }
    t.coll(1, 0, 101, "MPI_Barrier", None);
    t.enter(0, 0, "work");
    t.exit(0, 100, "work");
    t.coll(0, 100, 102, "MPI_Barrier", None);
    t.enter(2, 0, "work");
    t.exit(2, 100, "work");
    t.coll(2, 100, 103, "MPI_Barrier", None);
    t.enter(0, 102, "MPI_Recv");
    t.enter(1, 101, "work");
    t.exit(1, 151, "work");
    t.enter(1, 151, "MPI_Send");
    t.send(1, 151, 0, 0);
    t.exit(1, 152, "MPI_Send");
    t.recv(0, 160, 1, 0, 151);
    t.exit(0, 160, "MPI_Recv");
    let late: Vec<_> = t
        .causes()
        .into_iter()
        .filter(|c| c.0 == "late_sender")
        .collect();
    // all of it rank 1's work since the barrier: its barrier wait is before the interval
    assert_eq!(
        late,
        vec![(
            "late_sender",
            0,
            1,
            s("main => work"),
            CauseKind::Direct,
            49.0
        )]
    );
}

#[test]
fn a_collective_wait_is_caused_by_what_the_late_rank_did_since_it_last_synchronised_with_the_waiter(
) {
    // rank 1 works 300 in before_msg, sends to rank 0 (waiting in its receive since 0), works
    // 100 in after_msg and enters the barrier at 402; rank 0 enters it at 302, rank 2 at 0
    let mut t = setup(3, true, true);
    for l in 0..3 {
        t.enter(l, 0, "main");
    }
    t.enter(1, 0, "before_msg");
    t.exit(1, 300, "before_msg");
    t.enter(1, 300, "MPI_Send");
    t.send(1, 300, 0, 0);
    t.exit(1, 301, "MPI_Send");
    t.enter(0, 0, "MPI_Recv");
    t.recv(0, 302, 1, 0, 300);
    t.exit(0, 302, "MPI_Recv");
    t.enter(1, 301, "after_msg");
    t.exit(1, 401, "after_msg");
    t.coll(0, 302, 403, "MPI_Barrier", None);
    t.coll(2, 0, 403, "MPI_Barrier", None);
    t.coll(1, 402, 403, "MPI_Barrier", None);
    let barrier: Vec<_> = t
        .causes()
        .into_iter()
        .filter(|c| c.0 == "wait_at_barrier")
        .map(|c| (c.1, c.3, c.5))
        .collect();
    // rank 0 last synchronised with rank 1 at the message: only after_msg and the 1 in main
    // after it made it wait (100 of 101 each, rank 1's 1 in the barrier is rank 0's there
    // too); rank 2 at MPI_Init's place, the start: all 402 rank 1 did
    assert_eq!(
        barrier,
        vec![
            (0, s("main"), 100.0 / 101.0),
            (0, s("main => after_msg"), 100.0 * 100.0 / 101.0),
            (2, s("main"), 1.0),
            (2, s("main => before_msg"), 300.0),
            (2, s("main => MPI_Send"), 1.0),
            (2, s("main => after_msg"), 100.0),
        ]
    );
}

#[test]
fn a_message_neither_waited_for_does_not_begin_a_collective_waits_interval() {
    // rank 1 sends to rank 0 at 10 and enters the barrier at 12; rank 0 works 100, receives
    // rank 1's message (there already), then waits 200 in its receive from rank 2, which
    // sleeps 300 before it sends, and enters the barrier last, at 302. The two never waited
    // for each other: rank 1's barrier wait is rank 0's work (direct) and its wait for rank
    // 2's delay (propagated), since the start; not rank 0's time in a receive after the message
    let mut t = setup(3, true, true);
    for l in 0..3 {
        t.enter(l, 0, "main");
    }
    t.enter(0, 0, "work");
    t.enter(2, 0, "delay");
    t.enter(1, 10, "MPI_Send");
    t.send(1, 10, 0, 0);
    t.exit(1, 11, "MPI_Send");
    t.exit(0, 100, "work");
    t.enter(0, 100, "MPI_Recv");
    t.recv(0, 101, 1, 0, 10);
    t.exit(0, 101, "MPI_Recv");
    t.enter(0, 101, "MPI_Recv");
    t.exit(2, 300, "delay");
    t.enter(2, 300, "MPI_Send");
    t.send(2, 300, 0, 1);
    t.exit(2, 301, "MPI_Send");
    t.recv(0, 302, 2, 1, 300);
    t.exit(0, 302, "MPI_Recv");
    t.coll(1, 12, 303, "MPI_Barrier", None);
    t.coll(2, 301, 303, "MPI_Barrier", None);
    t.coll(0, 302, 303, "MPI_Barrier", None);
    let barrier: Vec<_> = t
        .causes()
        .into_iter()
        .filter(|c| c.0 == "wait_at_barrier" && c.1 == 1)
        .map(|c| (c.2, c.3, c.4, c.5))
        .collect();
    // its 290 divided as rank 0's excess since the start: work 100, 3 busy in its receives,
    // 199 waiting for rank 2's delay
    let share = |x: f64| x * 290.0 / 302.0;
    let want = [
        (0, s("main => work"), CauseKind::Direct, share(100.0)),
        (0, s("main => MPI_Recv"), CauseKind::Direct, share(3.0)),
        (2, s("main => delay"), CauseKind::Propagated, share(199.0)),
    ];
    same_shares(&barrier, &want);
}

#[test]
fn a_routine_that_kept_waiting_after_the_message_does_not_begin_the_interval() {
    // rank 0's MPI_Waitall (from 0) completes rank 1's message, sent at 10 (rank 0 waited for
    // it), and rank 2's, sent at 300 after its delay: rank 0 kept waiting after rank 1 left its
    // send at 11. It works 2 in after, then enters the barrier last, at 303; rank 1 entered at
    // 12. Rank 1's 291 is rank 0's waiting for rank 2 (propagated to its delay) and its 2 of
    // after, since the start, not 290 busy in MPI_Waitall after the message
    let mut t = setup(3, true, true);
    for l in 0..3 {
        t.enter(l, 0, "main");
    }
    t.enter(0, 0, "MPI_Waitall");
    t.enter(2, 0, "delay");
    t.enter(1, 10, "MPI_Send");
    t.send(1, 10, 0, 0);
    t.exit(1, 11, "MPI_Send");
    t.exit(2, 300, "delay");
    t.enter(2, 300, "MPI_Send");
    t.send(2, 300, 0, 1);
    t.exit(2, 301, "MPI_Send");
    t.recv(0, 301, 1, 0, 10);
    t.recv(0, 301, 2, 1, 300);
    t.exit(0, 301, "MPI_Waitall");
    t.enter(0, 301, "after");
    t.exit(0, 303, "after");
    t.coll(1, 12, 304, "MPI_Barrier", None);
    t.coll(2, 301, 304, "MPI_Barrier", None);
    t.coll(0, 303, 304, "MPI_Barrier", None);
    let barrier: Vec<_> = t
        .causes()
        .into_iter()
        .filter(|c| c.0 == "wait_at_barrier" && c.1 == 1)
        .map(|c| (c.2, c.3, c.4, c.5))
        .collect();
    // rank 0's excess since the start: 1 busy in MPI_Waitall, 2 in after, 300 waiting (10
    // blamed on rank 1, 290 on rank 2's delay)
    let share = |x: f64| x * 291.0 / 303.0;
    let want = [
        (0, s("main => MPI_Waitall"), CauseKind::Direct, share(1.0)),
        (0, s("main => after"), CauseKind::Direct, share(2.0)),
        (
            1,
            s("main"),
            CauseKind::Propagated,
            share(300.0) * 10.0 / 300.0,
        ),
        (
            2,
            s("main => delay"),
            CauseKind::Propagated,
            share(300.0) * 290.0 / 300.0,
        ),
    ];
    same_shares(&barrier, &want);
}

#[test]
fn an_eager_reduce_begins_no_interval() {
    // the root, rank 0, works 300 then enters MPI_Reduce, which ranks 1 and 2 left at 2, long
    // before; all three then meet at a barrier, ranks 1 and 2 waiting for rank 0's work (not
    // for its time in MPI_Reduce after they left it: the reduce synchronised none of them)
    let mut t = setup(3, true, true);
    for l in 0..3 {
        t.enter(l, 0, "main");
    }
    t.enter(0, 0, "work");
    t.coll(1, 1, 2, "MPI_Reduce", Some(0));
    t.coll(2, 1, 2, "MPI_Reduce", Some(0));
    t.exit(0, 300, "work");
    t.coll(0, 300, 301, "MPI_Reduce", Some(0));
    t.coll(1, 2, 302, "MPI_Barrier", None);
    t.coll(2, 2, 302, "MPI_Barrier", None);
    t.coll(0, 301, 302, "MPI_Barrier", None);
    let barrier: Vec<_> = t
        .causes()
        .into_iter()
        .filter(|c| c.0 == "wait_at_barrier")
        .map(|c| (c.1, c.2, c.3, c.4))
        .collect();
    assert_eq!(
        barrier,
        vec![
            (1, 0, s("main => work"), CauseKind::Direct),
            (2, 0, s("main => work"), CauseKind::Direct),
        ],
        "{:?}",
        t.causes()
    );
}

#[test]
fn an_omp_barrier_wait_is_caused_by_the_late_threads_work_since_the_team_began() {
    let mut t = setup(2, false, true);
    let team = |thread_num| EventKind::OmpTeam {
        region: 0,
        level: 1,
        team_size: 2,
        thread_num,
    };
    t.enter(0, 0, "main");
    t.enter(1, 0, "main");
    t.ev(0, 10, team(0));
    t.ev(1, 10, team(1));
    t.enter(1, 10, "late");
    t.exit(1, 210, "late");
    t.ev(0, 20, EventKind::Release { object: 4, kind: 7 });
    t.ev(1, 210, EventKind::Release { object: 4, kind: 7 });
    t.ev(
        1,
        211,
        EventKind::Acquire {
            object: 4,
            kind: 7,
            wait_ns: 1,
            holder: 0,
            shared: false,
        },
    );
    t.ev(
        0,
        212,
        EventKind::Acquire {
            object: 4,
            kind: 7,
            wait_ns: 192,
            holder: 0,
            shared: false,
        },
    );
    assert_eq!(t.waits(), vec![("omp_barrier", 0, s("main"), 190)]);
    assert_eq!(
        t.causes(),
        vec![(
            "omp_barrier",
            0,
            1,
            s("main => late"),
            CauseKind::Direct,
            190.0
        )]
    );
}

#[test]
fn condition_and_semaphore_waits_name_who_let_the_waiter_go() {
    let mut t = setup(3, false, true);
    t.enter(0, 0, "consume");
    t.enter(1, 0, "produce");
    t.enter(2, 0, "post");
    // the condition (object 1, kind 2) signalled by thread 1 at 120; the semaphore (object 2,
    // kind 4) posted by thread 2 at 300
    t.ev(1, 120, EventKind::Release { object: 1, kind: 2 });
    t.ev(
        0,
        125,
        EventKind::Acquire {
            object: 1,
            kind: 2,
            wait_ns: 100,
            holder: 0,
            shared: false,
        },
    );
    t.ev(2, 300, EventKind::Release { object: 2, kind: 4 });
    t.ev(
        0,
        301,
        EventKind::Acquire {
            object: 2,
            kind: 4,
            wait_ns: 170,
            holder: 0,
            shared: false,
        },
    );
    assert_eq!(
        t.waits(),
        vec![
            ("condition_wait", 0, s("consume"), 100),
            ("semaphore_wait", 0, s("consume"), 170),
        ]
    );
    assert_eq!(
        t.causes(),
        vec![
            (
                "condition_wait",
                0,
                1,
                s("produce"),
                CauseKind::Direct,
                100.0
            ),
            ("semaphore_wait", 0, 2, s("post"), CauseKind::Direct, 170.0),
        ]
    );
}

#[test]
fn a_late_receivers_cause_is_the_receivers_work() {
    let mut t = setup(2, true, true);
    t.enter(0, 0, "main");
    t.enter(1, 0, "main");
    t.enter(0, 0, "MPI_Ssend");
    t.send(0, 1, 1, 0);
    t.enter(1, 0, "work");
    t.exit(1, 250, "work");
    t.enter(1, 250, "MPI_Recv");
    t.recv(1, 252, 0, 0, 1);
    t.exit(0, 253, "MPI_Ssend");
    t.exit(1, 254, "MPI_Recv");
    assert_eq!(
        t.waits(),
        vec![("late_receiver", 0, s("main => MPI_Ssend"), 250)]
    );
    assert_eq!(
        t.causes(),
        vec![(
            "late_receiver",
            0,
            1,
            s("main => work"),
            CauseKind::Direct,
            250.0
        )]
    );
}

fn stream_pair(write_first: bool) -> T {
    let mut t = setup(2, false, true);
    t.enter(0, 0, "client");
    t.enter(1, 0, "server");
    t.enter(0, 10, "sock_recv");
    t.enter(1, 0, "handle");
    t.exit(1, 300, "handle");
    t.enter(1, 300, "sock_send");
    let send = EventKind::StreamSend {
        stream: 7,
        end: 64,
        bytes: 64,
    };
    let recv = EventKind::StreamRecv {
        stream: 7,
        end: 64,
        bytes: 64,
    };
    if write_first {
        t.ev(1, 302, send);
        t.ev(0, 303, recv);
    } else {
        // the read returned before the write did
        t.ev(0, 301, recv);
        t.ev(1, 302, send);
    }
    t
}

#[test]
fn a_stream_read_waits_for_the_write_of_its_bytes() {
    for write_first in [true, false] {
        let t = stream_pair(write_first);
        assert_eq!(
            t.waits(),
            vec![("stream_wait", 0, s("client => sock_recv"), 290)],
            "write first: {write_first}"
        );
        assert_eq!(
            t.causes(),
            vec![(
                "stream_wait",
                0,
                1,
                s("server => handle"),
                CauseKind::Direct,
                290.0
            )]
        );
    }
}

/// A client polls its socket from 10 to 350, then reads 64 bytes (entering at 360) that the
/// server wrote after `handle`, whose write began at `write_at`.
fn poll_then_read(write_at: i64) -> T {
    let mut t = setup(2, false, true);
    t.enter(0, 0, "client");
    t.enter(1, 0, "server");
    t.enter(0, 10, "poll");
    t.enter(1, 0, "handle");
    let send = EventKind::StreamSend {
        stream: 7,
        end: 64,
        bytes: 64,
    };
    let recv = EventKind::StreamRecv {
        stream: 7,
        end: 64,
        bytes: 64,
    };
    if write_at < 350 {
        t.exit(1, write_at, "handle");
        t.enter(1, write_at, "sock_send");
        t.ev(1, write_at + 2, send);
        t.exit(1, write_at + 2, "sock_send");
        t.exit(0, 350, "poll");
        t.enter(0, 360, "sock_recv");
        t.ev(0, 361, recv);
    } else {
        t.exit(0, 350, "poll");
        t.enter(0, 360, "sock_recv");
        t.exit(1, write_at, "handle");
        t.enter(1, write_at, "sock_send");
        t.ev(1, write_at + 2, send);
        t.ev(0, write_at + 3, recv);
    }
    t
}

#[test]
fn a_poll_woken_by_bytes_its_thread_then_reads_waits_for_their_writer() {
    // the write began at 300, before the poll returned: the poll waited for it (the read
    // after it found the bytes there)
    let t = poll_then_read(300);
    assert_eq!(
        t.waits(),
        vec![("stream_wait", 0, s("client => poll"), 290)]
    );
    assert_eq!(
        t.causes(),
        vec![(
            "stream_wait",
            0,
            1,
            s("server => handle"),
            CauseKind::Direct,
            290.0
        )]
    );
    // the write began at 400, after the poll returned: something else woke it (an I/O wait
    // of its own), and the read waited for the write
    let t = poll_then_read(400);
    assert_eq!(
        t.waits(),
        vec![
            ("stream_wait", 0, s("client => sock_recv"), 40),
            ("io_wait", 0, s("client => poll"), 340)
        ]
    );
}

#[test]
fn a_poll_no_read_followed_is_an_io_wait() {
    let mut t = setup(1, false, true);
    t.enter(0, 0, "client");
    t.enter(0, 10, "poll");
    t.exit(0, 350, "poll");
    t.exit(0, 400, "client");
    assert_eq!(t.waits(), vec![]);
    // known at the end of the replay: no read came
    t.replay.finish();
    assert_eq!(t.waits(), vec![("io_wait", 0, s("client => poll"), 340)]);
}

#[test]
fn a_java_monitor_wait_is_caused_by_the_holder_the_runtime_named() {
    let mut t = setup(3, false, true);
    t.enter(1, 0, "hold");
    t.enter(0, 40, "take");
    t.ev(
        0,
        150,
        EventKind::Acquire {
            object: 1,
            kind: 13,
            wait_ns: 100,
            holder: 2, // thread index 1
            shared: false,
        },
    );
    t.exit(0, 160, "take");
    t.exit(1, 170, "hold");
    assert_eq!(t.waits(), vec![("monitor_wait", 0, s("take"), 100)]);
    assert_eq!(
        t.causes(),
        vec![("monitor_wait", 0, 1, s("hold"), CauseKind::Direct, 100.0)]
    );
}

/// A server blocked in accept from 10 until its client, which prepared until 200, connected: the
/// two ends' stream events of 0 bytes (connect's send, accept's receive) pair, in either order
/// of the merged stream; a data write of the stream never stands for the connect.
fn connect_pair(connect_first: bool) -> T {
    let mut t = setup(2, false, true);
    t.enter(0, 0, "serve");
    t.enter(1, 0, "prepare");
    t.enter(0, 10, "sock_accept");
    t.exit(1, 200, "prepare");
    t.enter(1, 200, "sock_connect");
    let send = EventKind::StreamSend {
        stream: 9,
        end: 0,
        bytes: 0,
    };
    let recv = EventKind::StreamRecv {
        stream: 9,
        end: 0,
        bytes: 0,
    };
    if connect_first {
        t.ev(1, 201, send);
        t.exit(1, 201, "sock_connect");
        t.ev(0, 202, recv);
    } else {
        t.ev(0, 201, recv);
        t.ev(1, 202, send);
        t.exit(1, 202, "sock_connect");
    }
    t.exit(0, 203, "sock_accept");
    t
}

/// Rank 1 posts its receive with MPI_Irecv at 250 (after `work`) and completes it in MPI_Wait;
/// rank 0's `send_call` (MPI_Ssend, or MPI_Issend then MPI_Wait) waited from its entry at 0.
fn late_irecv(issend: bool, causes: bool) -> T {
    let mut t = setup(2, true, causes);
    t.enter(0, 0, "main");
    t.enter(1, 0, "main");
    if issend {
        t.enter(0, 0, "MPI_Issend");
        t.send(0, 1, 1, 0);
        t.exit(0, 2, "MPI_Issend");
        t.enter(0, 10, "MPI_Wait");
    } else {
        t.enter(0, 0, "MPI_Ssend");
        t.send(0, 1, 1, 0);
    }
    t.enter(1, 0, "work");
    t.exit(1, 250, "work");
    t.enter(1, 250, "MPI_Irecv");
    t.exit(1, 251, "MPI_Irecv");
    if issend {
        t.ev(
            0,
            253,
            EventKind::SendDone {
                thread: 0,
                mode: 1,
                send: 0,
            },
        );
        t.exit(0, 253, "MPI_Wait");
    } else {
        t.exit(0, 253, "MPI_Ssend");
    }
    // rank 1 waits later: the receive is known only now, 250 after its post
    t.enter(1, 400, "MPI_Wait");
    t.ev(1, 401, EventKind::RecvPosted { before_ns: 151 });
    t.recv(1, 401, 0, 0, 1);
    t.exit(1, 402, "MPI_Wait");
    t
}

#[test]
fn an_accept_waits_for_its_clients_connect() {
    for connect_first in [true, false] {
        let t = connect_pair(connect_first);
        assert_eq!(
            t.waits(),
            vec![("late_connect", 0, s("serve => sock_accept"), 190)],
            "connect first: {connect_first}"
        );
        assert_eq!(
            t.causes(),
            vec![("late_connect", 0, 1, s("prepare"), CauseKind::Direct, 190.0)]
        );
    }
}

#[test]
fn an_accept_never_pairs_with_the_clients_bytes() {
    // the client's connect is not traced: its first write (64 bytes) is no connect
    let mut t = setup(2, false, true);
    t.enter(0, 10, "sock_accept");
    t.enter(1, 200, "sock_write");
    t.ev(
        1,
        201,
        EventKind::StreamSend {
            stream: 9,
            end: 64,
            bytes: 64,
        },
    );
    t.exit(1, 201, "sock_write");
    t.ev(
        0,
        202,
        EventKind::StreamRecv {
            stream: 9,
            end: 0,
            bytes: 0,
        },
    );
    t.exit(0, 203, "sock_accept");
    assert_eq!(t.waits(), vec![]);
}

#[test]
fn a_synchronous_send_waits_for_a_late_irecvs_post() {
    let t = late_irecv(false, true);
    assert_eq!(
        t.waits(),
        vec![("late_receiver", 0, s("main => MPI_Ssend"), 250)]
    );
    // the receiver's work before the post caused it; the late receiver is named where it
    // posted the receive
    assert_eq!(
        t.causes(),
        vec![(
            "late_receiver",
            0,
            1,
            s("main => work"),
            CauseKind::Direct,
            250.0
        )]
    );
}

#[test]
fn the_wait_completing_an_issend_waits_for_a_late_irecvs_post() {
    let t = late_irecv(true, false);
    assert_eq!(
        t.waits(),
        vec![("late_receiver", 0, s("main => MPI_Wait"), 240)]
    );
}

#[test]
fn an_irecv_posted_before_the_send_is_no_late_receiver() {
    let mut t = setup(2, true, false);
    t.enter(1, 0, "MPI_Irecv");
    t.exit(1, 1, "MPI_Irecv");
    t.enter(0, 10, "MPI_Ssend");
    t.send(0, 11, 1, 0);
    t.exit(0, 30, "MPI_Ssend");
    t.enter(1, 50, "MPI_Wait");
    t.ev(1, 51, EventKind::RecvPosted { before_ns: 51 });
    t.recv(1, 51, 0, 0, 11);
    t.exit(1, 52, "MPI_Wait");
    assert!(t.waits().is_empty(), "{:?}", t.waits());
}

#[test]
fn a_late_irecv_names_its_post_call_path() {
    let mut t = setup(2, true, false);
    t.replay.found = Some(Vec::new());
    t.enter(0, 0, "MPI_Ssend");
    t.send(0, 1, 1, 0);
    t.enter(1, 0, "post");
    t.enter(1, 90, "MPI_Irecv");
    t.exit(1, 91, "MPI_Irecv");
    t.exit(1, 92, "post");
    t.exit(0, 95, "MPI_Ssend");
    t.enter(1, 100, "MPI_Wait");
    t.ev(1, 101, EventKind::RecvPosted { before_ns: 11 });
    t.recv(1, 101, 0, 0, 1);
    t.exit(1, 102, "MPI_Wait");
    let found = t.replay.found.as_ref().expect("kept");
    assert_eq!(found.len(), 1);
    let late = found[0].late.expect("late location");
    assert_eq!(late.0, 1);
    assert_eq!(
        t.replay.callpaths.name(late.1, &t.regions),
        "post => MPI_Irecv"
    );
    assert_eq!(found[0].wait_ns, 90);
}

/// Rank 0 probes (`probe`, blocking or not) before rank 1's send, then receives the message
/// in `recv` (MPI_Mrecv, MPI_Recv; MPI_Imrecv completed by MPI_Wait).
fn probed(probe: &str, recv: &str) -> T {
    let mut t = setup(2, true, true);
    t.enter(0, 0, "main");
    t.enter(1, 0, "main");
    t.enter(1, 0, "work");
    if probe == "MPI_Improbe" {
        // a polling loop: each call returns at once, the last one with the message
        for i in 0..4 {
            t.enter(0, 100 + 100 * i, probe);
            t.exit(0, 101 + 100 * i, probe);
        }
    } else {
        t.enter(0, 100, probe);
    }
    t.exit(1, 400, "work");
    t.enter(1, 400, "MPI_Send");
    t.send(1, 401, 0, 0);
    t.exit(1, 420, "MPI_Send");
    if probe != "MPI_Improbe" {
        t.exit(0, 450, probe);
    }
    t.enter(0, 455, recv);
    if recv == "MPI_Imrecv" {
        t.exit(0, 456, recv);
        t.enter(0, 457, "MPI_Wait");
        t.ev(0, 458, EventKind::RecvPosted { before_ns: 3 });
        t.recv(0, 458, 1, 0, 401);
        t.exit(0, 460, "MPI_Wait");
    } else {
        t.recv(0, 458, 1, 0, 401);
        t.exit(0, 460, recv);
    }
    t
}

#[test]
fn a_blocking_probe_before_the_send_is_the_receives_late_sender() {
    for (probe, recv) in [
        ("MPI_Mprobe", "MPI_Mrecv"),
        ("MPI_Mprobe", "MPI_Imrecv"),
        ("MPI_Probe", "MPI_Recv"),
    ] {
        let t = probed(probe, recv);
        assert_eq!(
            t.waits(),
            vec![("late_sender", 0, format!("main => {probe}"), 300)],
            "{probe} {recv}"
        );
        assert_eq!(
            t.causes(),
            vec![(
                "late_sender",
                0,
                1,
                s("main => work"),
                CauseKind::Direct,
                300.0
            )]
        );
    }
}

#[test]
fn a_nonblocking_probes_polling_loop_is_no_wait() {
    assert!(probed("MPI_Improbe", "MPI_Mrecv").waits().is_empty());
}

#[test]
fn a_probe_whose_message_was_sent_after_it_returned_is_not_the_receives_wait() {
    let mut t = setup(2, true, false);
    t.enter(0, 0, "MPI_Probe");
    t.exit(0, 10, "MPI_Probe");
    t.enter(0, 20, "MPI_Recv");
    t.enter(1, 50, "MPI_Send");
    t.send(1, 51, 0, 0);
    t.exit(1, 52, "MPI_Send");
    t.recv(0, 60, 1, 0, 51);
    t.exit(0, 61, "MPI_Recv");
    assert_eq!(t.waits(), vec![("late_sender", 0, s("MPI_Recv"), 30)]);
}

#[test]
fn an_isendrecv_is_posted_at_its_entry() {
    // rank 1 works 250, posts its receive in MPI_Isendrecv, works 150 more, then waits: rank
    // 0's synchronous send waited for the post, caused by the work before it alone
    let mut t = setup(2, true, true);
    t.enter(0, 0, "main");
    t.enter(1, 0, "main");
    t.enter(0, 0, "MPI_Ssend");
    t.send(0, 1, 1, 0);
    t.enter(1, 0, "work");
    t.exit(1, 250, "work");
    t.enter(1, 250, "MPI_Isendrecv");
    t.exit(1, 251, "MPI_Isendrecv");
    t.enter(1, 251, "more");
    t.exit(1, 400, "more");
    t.enter(1, 400, "MPI_Wait");
    t.ev(1, 402, EventKind::RecvPosted { before_ns: 152 });
    t.recv(1, 402, 0, 0, 1);
    t.exit(0, 403, "MPI_Ssend");
    t.exit(1, 404, "MPI_Wait");
    assert_eq!(
        t.waits(),
        vec![("late_receiver", 0, s("main => MPI_Ssend"), 250)]
    );
    assert_eq!(
        t.causes(),
        vec![(
            "late_receiver",
            0,
            1,
            s("main => work"),
            CauseKind::Direct,
            250.0
        )]
    );
}

impl T {
    /// A nonblocking collective's post at `loc` over `[enter, exit]` (its event at the exit).
    fn post(&mut self, loc: u32, enter: i64, exit: i64, name: &str, root: Option<u32>) {
        self.coll(loc, enter, exit, name, root);
    }
    /// The completion, at `t` in the call open at `loc`, of the `n`-th collective event of
    /// `loc`'s thread 0 (ranks: one thread each).
    fn done(&mut self, loc: u32, t: i64, n: u64) {
        self.ev(
            loc,
            t,
            EventKind::CollDone {
                thread: 0,
                collective: n,
            },
        );
    }
}

/// 3 ranks post an MPI_Iallreduce (rank 2 late, after `slow`), then complete it in MPI_Wait:
/// rank 0 enters its Wait at 100, rank 1 at 30, rank 2 posts at 480.
fn iallreduce(causes: bool) -> T {
    let mut t = setup(3, true, causes);
    for l in 0..3 {
        t.enter(l, 0, "main");
    }
    t.enter(2, 0, "slow");
    t.post(0, 10, 12, "MPI_Iallreduce", None);
    t.enter(0, 12, "work");
    t.post(1, 20, 22, "MPI_Iallreduce", None);
    t.enter(1, 30, "MPI_Wait");
    t.exit(0, 100, "work");
    t.enter(0, 100, "MPI_Wait");
    t.exit(2, 480, "slow");
    t.post(2, 480, 482, "MPI_Iallreduce", None);
    t.enter(2, 482, "MPI_Wait");
    t.done(0, 500, 0);
    t.exit(0, 500, "MPI_Wait");
    t.done(1, 501, 0);
    t.exit(1, 501, "MPI_Wait");
    t.done(2, 502, 0);
    t.exit(2, 502, "MPI_Wait");
    t
}

#[test]
fn a_nonblocking_collective_waits_in_the_call_that_completes_it_until_the_last_post() {
    let t = iallreduce(false);
    // from each Wait's entry to rank 2's post at 480; rank 2 itself waits for nobody
    assert_eq!(
        t.waits(),
        vec![
            ("wait_at_nxn", 0, s("main => MPI_Wait"), 380),
            ("wait_at_nxn", 1, s("main => MPI_Wait"), 450),
        ]
    );
    // its cause: rank 2's slow, since the start (rank 0 spent 88 in work and 10 in main
    // before its post, rank 1 20: slow is all excess), direct
    let t = iallreduce(true);
    let c: Vec<_> = t
        .causes()
        .into_iter()
        .map(|c| (c.1, c.2, c.3, c.4))
        .collect();
    assert_eq!(
        c,
        vec![
            (0, 2, s("main => slow"), CauseKind::Direct),
            (1, 2, s("main => slow"), CauseKind::Direct),
        ]
    );
    let total: f64 = t.causes().iter().map(|c| c.5).sum();
    assert!((total - 830.0).abs() < 1e-9, "{:?}", t.causes());
}

#[test]
fn a_nonblocking_collectives_completion_before_the_late_post_waits_until_it() {
    // rank 0's clock puts its completion at 300, before rank 2's post at 480 in the stream
    let mut t = setup(3, true, false);
    t.post(0, 0, 2, "MPI_Ibarrier", None);
    t.post(1, 0, 2, "MPI_Ibarrier", None);
    t.enter(0, 100, "MPI_Wait");
    t.done(0, 300, 0);
    t.exit(0, 300, "MPI_Wait");
    t.enter(1, 150, "MPI_Test");
    t.exit(1, 160, "MPI_Test");
    t.post(2, 480, 482, "MPI_Ibarrier", None);
    t.enter(1, 490, "MPI_Test");
    t.done(1, 491, 0);
    t.exit(1, 491, "MPI_Test");
    t.enter(2, 482, "MPI_Wait");
    t.done(2, 495, 0);
    t.exit(2, 495, "MPI_Wait");
    // rank 0: its whole Wait (it returned before the post, by its clock); rank 1: nothing (the
    // Test that completed it began after the post; a polling loop's calls before are no wait)
    assert_eq!(t.waits(), vec![("wait_at_barrier", 0, s("MPI_Wait"), 200)]);
}

#[test]
fn nonblocking_rooted_collectives_wait_for_their_root_and_a_waitall_waits_once() {
    let mut t = setup(3, true, false);
    // Ibcast from root 1, posted at 300: rank 0 waits from 200, rank 2 entered its Wait at 350
    t.post(0, 0, 1, "MPI_Ibcast", Some(1));
    t.post(2, 0, 1, "MPI_Ibcast", Some(1));
    t.enter(0, 200, "MPI_Wait");
    t.enter(2, 350, "MPI_Wait");
    t.post(1, 300, 301, "MPI_Ibcast", Some(1));
    t.enter(1, 301, "MPI_Wait");
    t.done(1, 302, 0);
    t.exit(1, 302, "MPI_Wait");
    t.done(0, 310, 0);
    t.exit(0, 310, "MPI_Wait");
    t.done(2, 360, 0);
    t.exit(2, 360, "MPI_Wait");
    // Ireduce to root 0, whose Waitall (entered at 400) also completes an Irecv whose send
    // came at 600: the latest other member posts at 520, the wait is 200 once, not 120 + 200
    t.post(0, 390, 391, "MPI_Ireduce", Some(0));
    t.post(1, 470, 471, "MPI_Ireduce", Some(0));
    t.post(2, 520, 521, "MPI_Ireduce", Some(0));
    t.enter(0, 400, "MPI_Waitall");
    t.enter(1, 600, "MPI_Send");
    t.send(1, 600, 0, 7);
    t.exit(1, 601, "MPI_Send");
    t.done(0, 605, 1);
    t.recv(0, 606, 1, 7, 600);
    t.exit(0, 607, "MPI_Waitall");
    assert_eq!(
        t.waits(),
        vec![
            ("late_sender", 0, s("MPI_Waitall"), 80),
            ("late_broadcast", 0, s("MPI_Wait"), 100),
            ("early_reduce", 0, s("MPI_Waitall"), 120),
        ]
    );
}

#[test]
fn a_completed_nonblocking_barrier_begins_the_next_waits_interval() {
    // an Ibarrier rank 1 posts late after early_work; after its completion rank 1 works in
    // late_work and enters a barrier 100 after rank 0: only late_work is the cause
    let mut t = setup(2, true, true);
    for l in 0..2 {
        t.enter(l, 0, "main");
    }
    t.post(0, 0, 1, "MPI_Ibarrier", None);
    t.enter(0, 1, "MPI_Wait");
    t.enter(1, 0, "early_work");
    t.exit(1, 200, "early_work");
    t.post(1, 200, 201, "MPI_Ibarrier", None);
    t.enter(1, 201, "MPI_Wait");
    t.done(0, 202, 0);
    t.exit(0, 202, "MPI_Wait");
    t.done(1, 202, 0);
    t.exit(1, 202, "MPI_Wait");
    t.enter(1, 202, "late_work");
    t.exit(1, 302, "late_work");
    t.coll(0, 202, 303, "MPI_Barrier", None);
    t.coll(1, 302, 303, "MPI_Barrier", None);
    // the Ibarrier's 199 (from the Wait's entry at 1 to the post at 200) by early_work, the
    // barrier's 100 by late_work alone: its interval begins at the Ibarrier's completion
    let c: Vec<_> = t
        .causes()
        .into_iter()
        .map(|c| (c.0, c.1, c.2, c.3, c.4, c.5))
        .collect();
    assert_eq!(
        c,
        vec![
            (
                "wait_at_barrier",
                0,
                1,
                s("main => early_work"),
                CauseKind::Direct,
                199.0
            ),
            (
                "wait_at_barrier",
                0,
                1,
                s("main => late_work"),
                CauseKind::Direct,
                100.0
            ),
        ]
    );
    assert_eq!(
        t.waits(),
        vec![
            ("wait_at_barrier", 0, s("main => MPI_Wait"), 199),
            ("wait_at_barrier", 0, s("main => MPI_Barrier"), 100),
        ]
    );
}

#[test]
fn a_readers_wait_is_caused_by_the_writer_not_by_a_reader_that_released_after_it() {
    // thread 0 holds the rwlock (object 7, kind 1) for writing in write_hold; threads 1 and 2
    // block reading; thread 1 gets it first and releases it before thread 2's acquire is seen
    let acquire = |wait_ns, shared| EventKind::Acquire {
        object: 7,
        kind: 1,
        wait_ns,
        holder: 0,
        shared,
    };
    for causes in [false, true] {
        let mut t = setup(3, false, causes);
        t.enter(0, 0, "write_hold");
        t.ev(0, 1, acquire(0, false));
        t.enter(1, 5, "read_one");
        t.enter(2, 10, "read_two");
        t.ev(0, 200, EventKind::Release { object: 7, kind: 1 });
        t.exit(0, 201, "write_hold");
        t.ev(1, 202, acquire(197, true));
        t.ev(1, 203, EventKind::Release { object: 7, kind: 1 });
        t.ev(2, 204, acquire(194, true));
        t.ev(2, 205, EventKind::Release { object: 7, kind: 1 });
        // a writer after them waits for the last reader to release
        t.enter(0, 206, "write_again");
        t.ev(0, 210, acquire(4, false));
        t.exit(0, 211, "write_again");
        assert_eq!(
            t.waits(),
            vec![
                ("lock_contention", 0, s("write_again"), 4),
                ("lock_contention", 1, s("read_one"), 197),
                ("lock_contention", 2, s("read_two"), 194),
            ]
        );
        if causes {
            let c: Vec<_> = t.causes().into_iter().map(|c| (c.1, c.2, c.3)).collect();
            assert_eq!(
                c,
                vec![
                    (0, 2, s("read_two")),
                    (1, 0, s("write_hold")),
                    (2, 0, s("write_hold")),
                ]
            );
        }
    }
}

impl T {
    /// [`T::coll`] on communicator `comm`.
    fn coll_on(&mut self, comm: u32, loc: u32, (enter, exit): (i64, i64), name: &str) {
        self.enter(loc, enter, name);
        self.ev(
            loc,
            exit,
            EventKind::Collective {
                comm: Some(comm),
                root: None,
                bytes_sent: 0,
                bytes_recv: 0,
            },
        );
        self.exit(loc, exit, name);
    }
}

#[test]
fn a_collective_on_a_communicator_without_the_waiter_begins_no_interval_with_it() {
    // 4 ranks; communicator 1 is {0, 2}, 2 is {1, 3}. After a world barrier, rank 3 works 200
    // in delay_x, then an allreduce on {1, 3}; ranks 0 and 2 meet in theirs at once. At the
    // next world barrier rank 3 is last: ranks 0 and 2 last synchronised with it at the first
    // barrier, so delay_x made them wait (was: only rank 3's time since its own allreduce)
    let mut t = setup(4, true, true);
    t.replay = Replay::new(Setup {
        comm_ranks: vec![(0..4).collect(), vec![0, 2], vec![1, 3]],
        ..ranks_setup(4)
    });
    for l in 0..4 {
        t.enter(l, 0, "main");
        t.coll_on(0, l, (0, 10), "MPI_Barrier");
    }
    t.enter(3, 10, "delay_x");
    t.exit(3, 210, "delay_x");
    t.coll_on(1, 0, (20, 21), "MPI_Allreduce");
    t.coll_on(1, 2, (20, 21), "MPI_Allreduce");
    t.coll_on(2, 1, (20, 211), "MPI_Allreduce");
    t.coll_on(2, 3, (210, 211), "MPI_Allreduce");
    t.coll_on(0, 0, (30, 221), "MPI_Barrier");
    t.coll_on(0, 2, (30, 221), "MPI_Barrier");
    t.coll_on(0, 1, (215, 221), "MPI_Barrier");
    t.coll_on(0, 3, (220, 221), "MPI_Barrier");
    let barrier: Vec<_> = t
        .causes()
        .into_iter()
        .filter(|c| c.0 == "wait_at_barrier" && c.1 != 1)
        .map(|c| (c.1, c.2, c.3, c.4))
        .collect();
    // ranks 0 and 2: 190 each, rank 3 the late one; its excess since the first barrier is
    // delay_x's 200 and its 9 in main after the allreduce over their 10 in main and 1 in
    // theirs: delay_x and main, never rank 3's allreduce alone
    for w in [0, 2] {
        let mine: Vec<_> = barrier.iter().filter(|c| c.0 == w).collect();
        assert!(
            mine.iter()
                .any(|c| c.1 == 3 && c.2 == "main => delay_x" && c.3 == CauseKind::Direct),
            "{barrier:?}"
        );
    }
    let in_delay: f64 = t
        .causes()
        .iter()
        .filter(|c| c.0 == "wait_at_barrier" && c.1 != 1 && c.3 == "main => delay_x")
        .map(|c| c.5)
        .sum();
    assert!(in_delay > 0.9 * 380.0, "{:?}", t.causes());
}

#[test]
fn a_recursive_holds_cause_is_the_whole_hold_from_its_first_lock_to_its_last_unlock() {
    // thread 0 locks a recursive mutex (object 3) twice, works 100 in first_part, unlocks
    // once, works 100 in second_part, unlocks again; thread 1 waits from 20 until 201
    let acquire = |wait_ns| EventKind::Acquire {
        object: 3,
        kind: 0,
        wait_ns,
        holder: 0,
        shared: false,
    };
    let mut t = setup(2, false, true);
    t.enter(0, 0, "holder");
    t.ev(0, 0, acquire(0));
    t.ev(0, 0, acquire(0));
    t.enter(0, 0, "first_part");
    t.exit(0, 100, "first_part");
    t.ev(0, 100, EventKind::Release { object: 3, kind: 0 });
    t.enter(0, 100, "second_part");
    t.exit(0, 200, "second_part");
    t.enter(0, 200, "unlock_helper");
    t.ev(0, 200, EventKind::Release { object: 3, kind: 0 });
    t.exit(0, 200, "unlock_helper");
    t.enter(1, 20, "waiter");
    t.ev(1, 201, acquire(181));
    assert_eq!(t.waits(), vec![("lock_contention", 1, s("waiter"), 181)]);
    // the hold's 200 in proportion: half in each part (was: all of it at the unlock helper,
    // the inner unlock having ended the hold's account)
    let c: Vec<_> = t.causes().into_iter().map(|c| (c.3, c.5)).collect();
    assert_eq!(
        c,
        vec![
            (s("holder => first_part"), 90.5),
            (s("holder => second_part"), 90.5),
        ]
    );
}

#[test]
fn a_collective_on_a_smaller_communicator_holding_both_begins_their_interval() {
    // 4 ranks; communicator 1 is {0, 1}. After a world barrier, rank 0 works 100 in
    // work_before, meets rank 1 (waiting since 15) in an allreduce on {0, 1}, works 50 in
    // work_after and comes last to the next world barrier: rank 1 last synchronised with it
    // at the allreduce (work_after made it wait), ranks 2 and 3 at the first barrier (both)
    let mut t = setup(4, true, true);
    t.replay = Replay::new(Setup {
        comm_ranks: vec![(0..4).collect(), vec![0, 1]],
        ..ranks_setup(4)
    });
    for l in 0..4 {
        t.enter(l, 0, "main");
        t.coll_on(0, l, (0, 10), "MPI_Barrier");
    }
    t.enter(0, 10, "work_before");
    t.exit(0, 110, "work_before");
    t.coll_on(1, 1, (15, 111), "MPI_Allreduce");
    t.coll_on(1, 0, (110, 111), "MPI_Allreduce");
    t.enter(0, 111, "work_after");
    t.exit(0, 161, "work_after");
    t.coll_on(0, 1, (112, 162), "MPI_Barrier");
    t.coll_on(0, 2, (20, 162), "MPI_Barrier");
    t.coll_on(0, 3, (20, 162), "MPI_Barrier");
    t.coll_on(0, 0, (161, 162), "MPI_Barrier");
    let of = |w: u32, f: &str| -> f64 {
        t.causes()
            .iter()
            .filter(|c| c.0 == "wait_at_barrier" && c.1 == w && c.2 == 0 && c.3 == f)
            .map(|c| c.5)
            .sum()
    };
    // rank 1: its 49 all work_after's (was: two thirds work_before's, from the first barrier)
    assert_eq!(of(1, "main => work_before"), 0.0, "{:?}", t.causes());
    assert!(of(1, "main => work_after") > 0.9 * 49.0, "{:?}", t.causes());
    // ranks 2 and 3: both, work_before the larger
    for w in [2, 3] {
        assert!(
            of(w, "main => work_before") > of(w, "main => work_after"),
            "{:?}",
            t.causes()
        );
        assert!(of(w, "main => work_after") > 0.0, "{:?}", t.causes());
    }
}

#[test]
fn a_late_receivers_cause_ends_at_the_post_before_a_message_received_after_it() {
    // rank 1 sends a small message, then blocks in a send until rank 0, which works 200 first,
    // posts its Irecv; rank 0 receives the small message after the post and completes the
    // Irecv in MPI_Wait: the late receiver's cause is rank 0's work before the post, not its
    // time after the small message's receive (which came after the post)
    let mut t = setup(2, true, true);
    t.enter(0, 0, "main");
    t.enter(1, 0, "main");
    t.enter(0, 0, "work");
    t.enter(1, 0, "MPI_Send");
    t.send(1, 1, 0, 0);
    t.exit(1, 2, "MPI_Send");
    t.enter(1, 2, "MPI_Send");
    t.send(1, 3, 0, 1);
    t.exit(0, 200, "work");
    t.enter(0, 200, "MPI_Irecv");
    t.exit(0, 201, "MPI_Irecv");
    t.enter(0, 201, "MPI_Recv");
    t.recv(0, 202, 1, 0, 1);
    t.exit(0, 203, "MPI_Recv");
    t.enter(0, 203, "MPI_Wait");
    t.ev(0, 205, EventKind::RecvPosted { before_ns: 5 });
    t.recv(0, 205, 1, 1, 3);
    t.exit(1, 206, "MPI_Send");
    t.exit(0, 207, "MPI_Wait");
    assert_eq!(
        t.waits(),
        vec![("late_receiver", 1, s("main => MPI_Send"), 198)]
    );
    let c = t.causes();
    assert_eq!(
        c,
        vec![(
            "late_receiver",
            1,
            0,
            s("main => work"),
            CauseKind::Direct,
            198.0
        )]
    );
}

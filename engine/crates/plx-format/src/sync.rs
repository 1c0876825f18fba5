//! The synchronization records of `process.plx` (types 18–20: SyncObject, SyncStats, NodeCpu)
//! and their codecs.

pub use crate::schema::structs::{NodeCpu, SyncObject, SyncStats};

/// What kind of synchronization object.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SyncKind {
    /// `pthread_mutex_t`.
    Mutex,
    /// `pthread_rwlock_t`.
    RwLock,
    /// `pthread_cond_t`.
    Cond,
    /// `pthread_barrier_t`.
    Barrier,
    /// `sem_t`.
    Sem,
    /// `pthread_spinlock_t`.
    Spin,
    /// A thread, as a `pthread_join` target.
    Thread,
    /// An OpenMP barrier (explicit, or the implicit one ending a parallel region or a
    /// work-sharing construct).
    OmpBarrier,
    /// An OpenMP critical section (unnamed, or one name).
    OmpCritical,
    /// An OpenMP lock (`omp_lock_t`, `omp_nest_lock_t`).
    OmpLock,
    /// An OpenMP task wait (`taskwait`, the end of a `taskgroup`).
    OmpTaskwait,
    /// An OpenMP atomic done under a lock.
    OmpAtomic,
    /// An OpenMP ordered section.
    OmpOrdered,
    /// A Java monitor entered while another thread held it (`synchronized`).
    JavaMonitor,
    /// A Java monitor waited on (`Object.wait`) until notified.
    JavaWait,
    /// A value this reader does not know.
    Other(u8),
}

impl SyncKind {
    /// Every known kind, in on-disk order.
    pub const ALL: [SyncKind; 15] = [
        SyncKind::Mutex,
        SyncKind::RwLock,
        SyncKind::Cond,
        SyncKind::Barrier,
        SyncKind::Sem,
        SyncKind::Spin,
        SyncKind::Thread,
        SyncKind::OmpBarrier,
        SyncKind::OmpCritical,
        SyncKind::OmpLock,
        SyncKind::OmpTaskwait,
        SyncKind::OmpAtomic,
        SyncKind::OmpOrdered,
        SyncKind::JavaMonitor,
        SyncKind::JavaWait,
    ];

    /// From the on-disk byte.
    pub fn from_u8(v: u8) -> Self {
        match v {
            0 => SyncKind::Mutex,
            1 => SyncKind::RwLock,
            2 => SyncKind::Cond,
            3 => SyncKind::Barrier,
            4 => SyncKind::Sem,
            5 => SyncKind::Spin,
            6 => SyncKind::Thread,
            7 => SyncKind::OmpBarrier,
            8 => SyncKind::OmpCritical,
            9 => SyncKind::OmpLock,
            10 => SyncKind::OmpTaskwait,
            11 => SyncKind::OmpAtomic,
            12 => SyncKind::OmpOrdered,
            13 => SyncKind::JavaMonitor,
            14 => SyncKind::JavaWait,
            o => SyncKind::Other(o),
        }
    }

    /// To the on-disk byte.
    pub fn to_u8(self) -> u8 {
        match self {
            SyncKind::Mutex => 0,
            SyncKind::RwLock => 1,
            SyncKind::Cond => 2,
            SyncKind::Barrier => 3,
            SyncKind::Sem => 4,
            SyncKind::Spin => 5,
            SyncKind::Thread => 6,
            SyncKind::OmpBarrier => 7,
            SyncKind::OmpCritical => 8,
            SyncKind::OmpLock => 9,
            SyncKind::OmpTaskwait => 10,
            SyncKind::OmpAtomic => 11,
            SyncKind::OmpOrdered => 12,
            SyncKind::JavaMonitor => 13,
            SyncKind::JavaWait => 14,
            SyncKind::Other(o) => o,
        }
    }

    /// A short lowercase name: `mutex`, `rwlock`, `cond`, `barrier`, `sem`, `spin`, `thread`,
    /// `omp-barrier`, `omp-critical`, `omp-lock`, `omp-taskwait`, `omp-atomic`, `omp-ordered`,
    /// `java-monitor`, `java-wait`, `other`.
    pub fn as_str(self) -> &'static str {
        match self {
            SyncKind::Mutex => "mutex",
            SyncKind::RwLock => "rwlock",
            SyncKind::Cond => "cond",
            SyncKind::Barrier => "barrier",
            SyncKind::Sem => "sem",
            SyncKind::Spin => "spin",
            SyncKind::Thread => "thread",
            SyncKind::OmpBarrier => "omp-barrier",
            SyncKind::OmpCritical => "omp-critical",
            SyncKind::OmpLock => "omp-lock",
            SyncKind::OmpTaskwait => "omp-taskwait",
            SyncKind::OmpAtomic => "omp-atomic",
            SyncKind::OmpOrdered => "omp-ordered",
            SyncKind::JavaMonitor => "java-monitor",
            SyncKind::JavaWait => "java-wait",
            SyncKind::Other(_) => "other",
        }
    }

    /// Is the object held between an acquisition and its release (mutex, rwlock, spin, and
    /// OpenMP's critical, lock, atomic and ordered)?
    pub fn holds(self) -> bool {
        matches!(
            self,
            SyncKind::Mutex
                | SyncKind::RwLock
                | SyncKind::Spin
                | SyncKind::OmpCritical
                | SyncKind::OmpLock
                | SyncKind::OmpAtomic
                | SyncKind::OmpOrdered
        )
    }

    /// Is it held without the runtime seeing its hold (a Java monitor: JVMTI has no event for
    /// a monitor's exit nor for an uncontended entry), so that its hold time is not known?
    pub fn hold_unknown(self) -> bool {
        matches!(self, SyncKind::JavaMonitor)
    }

    /// Is it a barrier, where every thread's departure waits for the last arrival?
    pub fn is_barrier(self) -> bool {
        matches!(self, SyncKind::Barrier | SyncKind::OmpBarrier)
    }
}

/// How a [`SyncObject`] got its site.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum NamedBy {
    /// Its init call (`pthread_mutex_init`, ...).
    Init,
    /// Its first use (a statically initialised object).
    Use,
    /// A value this reader does not know.
    Other(u8),
}

impl NamedBy {
    /// From the on-disk byte.
    pub fn from_u8(v: u8) -> Self {
        match v {
            0 => NamedBy::Init,
            1 => NamedBy::Use,
            o => NamedBy::Other(o),
        }
    }
    /// To the on-disk byte.
    pub fn to_u8(self) -> u8 {
        match self {
            NamedBy::Init => 0,
            NamedBy::Use => 1,
            NamedBy::Other(o) => o,
        }
    }
    /// `init`, `use` or `other`.
    pub fn as_str(self) -> &'static str {
        match self {
            NamedBy::Init => "init",
            NamedBy::Use => "use",
            NamedBy::Other(_) => "other",
        }
    }
}

//! The part of the OTF2 C library's writing API (`/usr/include/otf2`, OTF2 3.x) the `otf2` export calls, declared by hand.
//!
//! Types are the C typedefs' widths; constants are the values of the header's enums. The
//! library is linked by `build.rs` (`pkg-config otf2`, else `otf2-config`).
#![allow(non_camel_case_types, missing_docs, dead_code)]

use std::os::raw::{c_char, c_void};

pub type OTF2_ErrorCode = i32;
pub type OTF2_TimeStamp = u64;
pub type OTF2_StringRef = u32;
pub type OTF2_SystemTreeNodeRef = u32;
pub type OTF2_LocationGroupRef = u32;
pub type OTF2_LocationRef = u64;
pub type OTF2_RegionRef = u32;
pub type OTF2_GroupRef = u32;
pub type OTF2_CommRef = u32;
pub type OTF2_MetricRef = u32;
pub type OTF2_MetricMemberRef = u32;
pub type OTF2_Paradigm = u8;
pub type OTF2_AttributeRef = u32;
pub type OTF2_Type = u8;
pub type OTF2_FlushType = u8;
pub type OTF2_FileType = u8;
pub type OTF2_CallingContextRef = u32;
pub type OTF2_InterruptGeneratorRef = u32;
pub type OTF2_SourceCodeLocationRef = u32;

/// Opaque handles.
#[repr(C)]
pub struct OTF2_Archive {
    _p: [u8; 0],
}
#[repr(C)]
pub struct OTF2_EvtWriter {
    _p: [u8; 0],
}
#[repr(C)]
pub struct OTF2_DefWriter {
    _p: [u8; 0],
}
#[repr(C)]
pub struct OTF2_GlobalDefWriter {
    _p: [u8; 0],
}
#[repr(C)]
pub struct OTF2_AttributeList {
    _p: [u8; 0],
}

pub type OTF2_PreFlushCallback = extern "C" fn(
    user: *mut c_void,
    file_type: OTF2_FileType,
    location: OTF2_LocationRef,
    caller: *mut c_void,
    last: bool,
) -> OTF2_FlushType;
pub type OTF2_PostFlushCallback =
    extern "C" fn(user: *mut c_void, file_type: OTF2_FileType, location: OTF2_LocationRef) -> u64;

#[repr(C)]
pub struct OTF2_FlushCallbacks {
    pub otf2_pre_flush: Option<OTF2_PreFlushCallback>,
    pub otf2_post_flush: Option<OTF2_PostFlushCallback>,
}

pub type OTF2_MemoryAllocate = extern "C" fn(
    user: *mut c_void,
    file_type: OTF2_FileType,
    location: OTF2_LocationRef,
    per_buffer: *mut *mut c_void,
    chunk_size: u64,
) -> *mut c_void;
pub type OTF2_MemoryFreeAll = extern "C" fn(
    user: *mut c_void,
    file_type: OTF2_FileType,
    location: OTF2_LocationRef,
    per_buffer: *mut *mut c_void,
    last: bool,
);

#[repr(C)]
pub struct OTF2_MemoryCallbacks {
    pub otf2_allocate: Option<OTF2_MemoryAllocate>,
    pub otf2_free_all: Option<OTF2_MemoryFreeAll>,
}

/// `OTF2_MetricValue`: a union of 8 bytes (doubles for user events and external metrics,
/// unsigned integers for counters).
#[repr(C)]
#[derive(Clone, Copy)]
pub union OTF2_MetricValue {
    pub floating_point: f64,
    pub unsigned_int: u64,
}

pub const OTF2_SUCCESS: OTF2_ErrorCode = 0;
pub const OTF2_UNDEFINED_UINT32: u32 = u32::MAX;
pub const OTF2_UNDEFINED_UINT64: u64 = u64::MAX;
pub const OTF2_FILEMODE_WRITE: u8 = 0;
pub const OTF2_SUBSTRATE_POSIX: u8 = 1;
pub const OTF2_COMPRESSION_NONE: u8 = 1;
pub const OTF2_CHUNK_SIZE_EVENTS_DEFAULT: u64 = 1024 * 1024;
pub const OTF2_CHUNK_SIZE_DEFINITIONS_DEFAULT: u64 = 4 * 1024 * 1024;
pub const OTF2_CHUNK_SIZE_MIN: u64 = 256 * 1024;
pub const OTF2_FLUSH: OTF2_FlushType = 1;
pub const OTF2_FILETYPE_EVENTS: OTF2_FileType = 3;

pub const OTF2_LOCATION_GROUP_TYPE_PROCESS: u8 = 1;
pub const OTF2_LOCATION_TYPE_CPU_THREAD: u8 = 1;
pub const OTF2_LOCATION_TYPE_METRIC: u8 = 3;

pub const OTF2_REGION_ROLE_FUNCTION: u8 = 1;
pub const OTF2_REGION_ROLE_BARRIER: u8 = 15;
pub const OTF2_REGION_ROLE_COLL_ONE2ALL: u8 = 23;
pub const OTF2_REGION_ROLE_COLL_ALL2ONE: u8 = 24;
pub const OTF2_REGION_ROLE_COLL_ALL2ALL: u8 = 25;
pub const OTF2_REGION_ROLE_POINT2POINT: u8 = 28;
pub const OTF2_REGION_FLAG_NONE: u32 = 0;

pub const OTF2_PARADIGM_USER: OTF2_Paradigm = 1;
pub const OTF2_PARADIGM_COMPILER: OTF2_Paradigm = 2;
pub const OTF2_PARADIGM_OPENMP: OTF2_Paradigm = 3;
pub const OTF2_PARADIGM_MPI: OTF2_Paradigm = 4;
pub const OTF2_PARADIGM_MEASUREMENT_SYSTEM: OTF2_Paradigm = 6;
pub const OTF2_PARADIGM_PTHREAD: OTF2_Paradigm = 7;

pub const OTF2_GROUP_TYPE_LOCATIONS: u8 = 1;
pub const OTF2_GROUP_TYPE_COMM_LOCATIONS: u8 = 4;
pub const OTF2_GROUP_TYPE_COMM_GROUP: u8 = 5;
pub const OTF2_GROUP_FLAG_NONE: u32 = 0;
pub const OTF2_COMM_FLAG_NONE: u32 = 0;

pub const OTF2_TYPE_DOUBLE: OTF2_Type = 10;
pub const OTF2_TYPE_UINT64: OTF2_Type = 4;
pub const OTF2_TYPE_UINT8: OTF2_Type = 1;
pub const OTF2_METRIC_TYPE_USER: u8 = 3;
pub const OTF2_METRIC_ABSOLUTE_POINT: u8 = 17;
pub const OTF2_METRIC_ACCUMULATED_START: u8 = 0;
pub const OTF2_METRIC_TYPE_OTHER: u8 = 0;
pub const OTF2_BASE_DECIMAL: u8 = 1;
pub const OTF2_INTERRUPT_GENERATOR_MODE_TIME: u8 = 0;
pub const OTF2_METRIC_SYNCHRONOUS_STRICT: u8 = 0;
pub const OTF2_METRIC_SYNCHRONOUS: u8 = 1;
pub const OTF2_RECORDER_KIND_ABSTRACT: u8 = 1;

pub const OTF2_COLLECTIVE_OP_BARRIER: u8 = 0;
pub const OTF2_COLLECTIVE_OP_BCAST: u8 = 1;
pub const OTF2_COLLECTIVE_OP_GATHER: u8 = 2;
pub const OTF2_COLLECTIVE_OP_GATHERV: u8 = 3;
pub const OTF2_COLLECTIVE_OP_SCATTER: u8 = 4;
pub const OTF2_COLLECTIVE_OP_SCATTERV: u8 = 5;
pub const OTF2_COLLECTIVE_OP_ALLGATHER: u8 = 6;
pub const OTF2_COLLECTIVE_OP_ALLGATHERV: u8 = 7;
pub const OTF2_COLLECTIVE_OP_ALLTOALL: u8 = 8;
pub const OTF2_COLLECTIVE_OP_ALLTOALLV: u8 = 9;
pub const OTF2_COLLECTIVE_OP_ALLTOALLW: u8 = 10;
pub const OTF2_COLLECTIVE_OP_ALLREDUCE: u8 = 11;
pub const OTF2_COLLECTIVE_OP_REDUCE: u8 = 12;
pub const OTF2_COLLECTIVE_OP_REDUCE_SCATTER: u8 = 13;
pub const OTF2_COLLECTIVE_OP_SCAN: u8 = 14;
pub const OTF2_COLLECTIVE_OP_EXSCAN: u8 = 15;
pub const OTF2_COLLECTIVE_OP_REDUCE_SCATTER_BLOCK: u8 = 16;
pub const OTF2_COLLECTIVE_ROOT_NONE: u32 = u32::MAX;

type A = *mut OTF2_AttributeList;
type E = *mut OTF2_EvtWriter;
type G = *mut OTF2_GlobalDefWriter;

extern "C" {
    pub fn OTF2_Error_GetName(code: OTF2_ErrorCode) -> *const c_char;
    pub fn OTF2_Error_GetDescription(code: OTF2_ErrorCode) -> *const c_char;

    pub fn OTF2_Archive_Open(
        path: *const c_char,
        name: *const c_char,
        mode: u8,
        chunk_events: u64,
        chunk_defs: u64,
        substrate: u8,
        compression: u8,
    ) -> *mut OTF2_Archive;
    pub fn OTF2_Archive_Close(a: *mut OTF2_Archive) -> OTF2_ErrorCode;
    pub fn OTF2_Archive_SetFlushCallbacks(
        a: *mut OTF2_Archive,
        cb: *const OTF2_FlushCallbacks,
        data: *mut c_void,
    ) -> OTF2_ErrorCode;
    pub fn OTF2_Archive_SetMemoryCallbacks(
        a: *mut OTF2_Archive,
        cb: *const OTF2_MemoryCallbacks,
        data: *mut c_void,
    ) -> OTF2_ErrorCode;
    pub fn OTF2_Archive_SetSerialCollectiveCallbacks(a: *mut OTF2_Archive) -> OTF2_ErrorCode;
    pub fn OTF2_Archive_SetCreator(a: *mut OTF2_Archive, creator: *const c_char)
        -> OTF2_ErrorCode;
    pub fn OTF2_Archive_OpenEvtFiles(a: *mut OTF2_Archive) -> OTF2_ErrorCode;
    pub fn OTF2_Archive_CloseEvtFiles(a: *mut OTF2_Archive) -> OTF2_ErrorCode;
    pub fn OTF2_Archive_OpenDefFiles(a: *mut OTF2_Archive) -> OTF2_ErrorCode;
    pub fn OTF2_Archive_CloseDefFiles(a: *mut OTF2_Archive) -> OTF2_ErrorCode;
    pub fn OTF2_Archive_GetEvtWriter(a: *mut OTF2_Archive, loc: OTF2_LocationRef) -> E;
    pub fn OTF2_Archive_CloseEvtWriter(a: *mut OTF2_Archive, w: E) -> OTF2_ErrorCode;
    pub fn OTF2_Archive_GetDefWriter(
        a: *mut OTF2_Archive,
        loc: OTF2_LocationRef,
    ) -> *mut OTF2_DefWriter;
    pub fn OTF2_Archive_CloseDefWriter(
        a: *mut OTF2_Archive,
        w: *mut OTF2_DefWriter,
    ) -> OTF2_ErrorCode;
    pub fn OTF2_Archive_GetGlobalDefWriter(a: *mut OTF2_Archive) -> G;

    pub fn OTF2_GlobalDefWriter_WriteClockProperties(
        w: G,
        resolution: u64,
        offset: u64,
        length: u64,
        realtime: u64,
    ) -> OTF2_ErrorCode;
    pub fn OTF2_GlobalDefWriter_WriteString(
        w: G,
        id: OTF2_StringRef,
        s: *const c_char,
    ) -> OTF2_ErrorCode;
    pub fn OTF2_GlobalDefWriter_WriteSystemTreeNode(
        w: G,
        id: OTF2_SystemTreeNodeRef,
        name: OTF2_StringRef,
        class: OTF2_StringRef,
        parent: OTF2_SystemTreeNodeRef,
    ) -> OTF2_ErrorCode;
    pub fn OTF2_GlobalDefWriter_WriteLocationGroup(
        w: G,
        id: OTF2_LocationGroupRef,
        name: OTF2_StringRef,
        kind: u8,
        parent: OTF2_SystemTreeNodeRef,
        creating: OTF2_LocationGroupRef,
    ) -> OTF2_ErrorCode;
    pub fn OTF2_GlobalDefWriter_WriteLocation(
        w: G,
        id: OTF2_LocationRef,
        name: OTF2_StringRef,
        kind: u8,
        events: u64,
        group: OTF2_LocationGroupRef,
    ) -> OTF2_ErrorCode;
    pub fn OTF2_GlobalDefWriter_WriteCallingContext(
        w: G,
        id: OTF2_CallingContextRef,
        region: OTF2_RegionRef,
        source: OTF2_SourceCodeLocationRef,
        parent: OTF2_CallingContextRef,
    ) -> OTF2_ErrorCode;
    pub fn OTF2_GlobalDefWriter_WriteInterruptGenerator(
        w: G,
        id: OTF2_InterruptGeneratorRef,
        name: OTF2_StringRef,
        mode: u8,
        base: u8,
        exponent: i64,
        period: u64,
    ) -> OTF2_ErrorCode;
    pub fn OTF2_GlobalDefWriter_WriteRegion(
        w: G,
        id: OTF2_RegionRef,
        name: OTF2_StringRef,
        canonical: OTF2_StringRef,
        description: OTF2_StringRef,
        role: u8,
        paradigm: OTF2_Paradigm,
        flags: u32,
        file: OTF2_StringRef,
        begin: u32,
        end: u32,
    ) -> OTF2_ErrorCode;
    pub fn OTF2_GlobalDefWriter_WriteGroup(
        w: G,
        id: OTF2_GroupRef,
        name: OTF2_StringRef,
        kind: u8,
        paradigm: OTF2_Paradigm,
        flags: u32,
        n: u32,
        members: *const u64,
    ) -> OTF2_ErrorCode;
    pub fn OTF2_GlobalDefWriter_WriteComm(
        w: G,
        id: OTF2_CommRef,
        name: OTF2_StringRef,
        group: OTF2_GroupRef,
        parent: OTF2_CommRef,
        flags: u32,
    ) -> OTF2_ErrorCode;
    pub fn OTF2_GlobalDefWriter_WriteMetricMember(
        w: G,
        id: OTF2_MetricMemberRef,
        name: OTF2_StringRef,
        description: OTF2_StringRef,
        kind: u8,
        mode: u8,
        value_type: OTF2_Type,
        base: u8,
        exponent: i64,
        unit: OTF2_StringRef,
    ) -> OTF2_ErrorCode;
    pub fn OTF2_GlobalDefWriter_WriteMetricClass(
        w: G,
        id: OTF2_MetricRef,
        n: u8,
        members: *const OTF2_MetricMemberRef,
        occurrence: u8,
        recorder: u8,
    ) -> OTF2_ErrorCode;

    pub fn OTF2_EvtWriter_CallingContextSample(
        w: E,
        a: A,
        t: u64,
        context: OTF2_CallingContextRef,
        unwind_distance: u32,
        generator: OTF2_InterruptGeneratorRef,
    ) -> OTF2_ErrorCode;
    pub fn OTF2_EvtWriter_Enter(w: E, a: A, t: u64, region: OTF2_RegionRef) -> OTF2_ErrorCode;
    pub fn OTF2_EvtWriter_Leave(w: E, a: A, t: u64, region: OTF2_RegionRef) -> OTF2_ErrorCode;
    pub fn OTF2_EvtWriter_MpiSend(
        w: E,
        a: A,
        t: u64,
        receiver: u32,
        comm: OTF2_CommRef,
        tag: u32,
        len: u64,
    ) -> OTF2_ErrorCode;
    pub fn OTF2_EvtWriter_MpiRecv(
        w: E,
        a: A,
        t: u64,
        sender: u32,
        comm: OTF2_CommRef,
        tag: u32,
        len: u64,
    ) -> OTF2_ErrorCode;
    pub fn OTF2_EvtWriter_MpiIsend(
        w: E,
        a: A,
        t: u64,
        receiver: u32,
        comm: OTF2_CommRef,
        tag: u32,
        len: u64,
        request: u64,
    ) -> OTF2_ErrorCode;
    pub fn OTF2_EvtWriter_MpiIsendComplete(w: E, a: A, t: u64, request: u64) -> OTF2_ErrorCode;
    pub fn OTF2_EvtWriter_MpiIrecvRequest(w: E, a: A, t: u64, request: u64) -> OTF2_ErrorCode;
    pub fn OTF2_EvtWriter_NonBlockingCollectiveRequest(
        w: E,
        a: A,
        t: u64,
        request: u64,
    ) -> OTF2_ErrorCode;
    #[allow(clippy::too_many_arguments)]
    pub fn OTF2_EvtWriter_NonBlockingCollectiveComplete(
        w: E,
        a: A,
        t: u64,
        op: u8,
        comm: OTF2_CommRef,
        root: u32,
        sent: u64,
        received: u64,
        request: u64,
    ) -> OTF2_ErrorCode;
    pub fn OTF2_EvtWriter_MpiIrecv(
        w: E,
        a: A,
        t: u64,
        sender: u32,
        comm: OTF2_CommRef,
        tag: u32,
        len: u64,
        request: u64,
    ) -> OTF2_ErrorCode;
    pub fn OTF2_EvtWriter_MpiCollectiveBegin(w: E, a: A, t: u64) -> OTF2_ErrorCode;
    pub fn OTF2_EvtWriter_MpiCollectiveEnd(
        w: E,
        a: A,
        t: u64,
        op: u8,
        comm: OTF2_CommRef,
        root: u32,
        sent: u64,
        received: u64,
    ) -> OTF2_ErrorCode;
    pub fn OTF2_EvtWriter_Metric(
        w: E,
        a: A,
        t: u64,
        metric: OTF2_MetricRef,
        n: u8,
        types: *const OTF2_Type,
        values: *const OTF2_MetricValue,
    ) -> OTF2_ErrorCode;
    pub fn OTF2_EvtWriter_ThreadAcquireLock(
        w: E,
        a: A,
        t: u64,
        model: OTF2_Paradigm,
        lock: u32,
        order: u32,
    ) -> OTF2_ErrorCode;
    pub fn OTF2_EvtWriter_ThreadReleaseLock(
        w: E,
        a: A,
        t: u64,
        model: OTF2_Paradigm,
        lock: u32,
        order: u32,
    ) -> OTF2_ErrorCode;
    pub fn OTF2_EvtWriter_ThreadWait(
        w: E,
        a: A,
        t: u64,
        contingent: OTF2_CommRef,
        sequence: u64,
    ) -> OTF2_ErrorCode;
    pub fn OTF2_EvtWriter_ThreadFork(
        w: E,
        a: A,
        t: u64,
        model: OTF2_Paradigm,
        requested: u32,
    ) -> OTF2_ErrorCode;
    pub fn OTF2_EvtWriter_ThreadJoin(w: E, a: A, t: u64, model: OTF2_Paradigm) -> OTF2_ErrorCode;
    pub fn OTF2_EvtWriter_ThreadTeamBegin(w: E, a: A, t: u64, team: OTF2_CommRef)
        -> OTF2_ErrorCode;
    pub fn OTF2_EvtWriter_ThreadTeamEnd(w: E, a: A, t: u64, team: OTF2_CommRef) -> OTF2_ErrorCode;
    pub fn OTF2_EvtWriter_ThreadEnd(
        w: E,
        a: A,
        t: u64,
        contingent: OTF2_CommRef,
        sequence: u64,
    ) -> OTF2_ErrorCode;
    pub fn OTF2_GlobalDefWriter_WriteAttribute(
        w: G,
        id: OTF2_AttributeRef,
        name: OTF2_StringRef,
        description: OTF2_StringRef,
        value_type: OTF2_Type,
    ) -> OTF2_ErrorCode;
    pub fn OTF2_AttributeList_New() -> A;
    pub fn OTF2_AttributeList_Delete(a: A) -> OTF2_ErrorCode;
    pub fn OTF2_AttributeList_AddUint8(a: A, attribute: OTF2_AttributeRef, value: u8)
        -> OTF2_ErrorCode;
}

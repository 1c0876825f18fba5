//! The OTF2 archive the export writes: opened, its buffers' memory bounded, closed when dropped.

use std::ffi::{CStr, CString};
use std::path::{Path, PathBuf};
use std::ptr;

use crate::ExportError;

use super::ffi::*;

/// The archive's name: `traces.otf2`, `traces.def`, `traces/`, as Score-P names them.
const ARCHIVE_NAME: &str = "traces";

/// An open archive, closed when dropped (on an error too, so the library frees its buffers).
pub(super) struct Archive {
    pub raw: *mut OTF2_Archive,
    out: PathBuf,
}

impl Archive {
    pub fn open(out: &Path) -> Result<Archive, ExportError> {
        // the library will not write over an archive: remove what an earlier export left
        for name in ["traces", "traces.otf2", "traces.def"] {
            let p = out.join(name);
            let r = if p.is_dir() {
                std::fs::remove_dir_all(&p)
            } else if p.exists() {
                std::fs::remove_file(&p)
            } else {
                Ok(())
            };
            r.map_err(|e| ExportError::Io(p.clone(), e))?;
        }
        let path = cstring(&out.to_string_lossy());
        let name = cstring(ARCHIVE_NAME);
        // SAFETY: both strings outlive the call; the library copies them.
        let raw = unsafe {
            OTF2_Archive_Open(
                path.as_ptr(),
                name.as_ptr(),
                OTF2_FILEMODE_WRITE,
                OTF2_CHUNK_SIZE_EVENTS_DEFAULT,
                OTF2_CHUNK_SIZE_MIN,
                OTF2_SUBSTRATE_POSIX,
                OTF2_COMPRESSION_NONE,
            )
        };
        if raw.is_null() {
            return Err(ExportError::Io(
                out.to_path_buf(),
                std::io::Error::other("the OTF2 library could not create the archive"),
            ));
        }
        let a = Archive {
            raw,
            out: out.to_path_buf(),
        };
        static FLUSH: OTF2_FlushCallbacks = OTF2_FlushCallbacks {
            otf2_pre_flush: Some(pre_flush),
            otf2_post_flush: None,
        };
        static MEMORY: OTF2_MemoryCallbacks = OTF2_MemoryCallbacks {
            otf2_allocate: Some(allocate_chunk),
            otf2_free_all: Some(free_chunks),
        };
        let creator = cstring(concat!("Parallax plx ", env!("CARGO_PKG_VERSION")));
        // SAFETY: `raw` is open; FLUSH is static; the creator is copied.
        unsafe {
            a.check(
                OTF2_Archive_SetFlushCallbacks(raw, &FLUSH, ptr::null_mut()),
                "flush callbacks",
            )?;
            a.check(
                OTF2_Archive_SetMemoryCallbacks(raw, &MEMORY, ptr::null_mut()),
                "memory callbacks",
            )?;
            a.check(
                OTF2_Archive_SetSerialCollectiveCallbacks(raw),
                "collective callbacks",
            )?;
            a.check(OTF2_Archive_SetCreator(raw, creator.as_ptr()), "creator")?;
            a.check(OTF2_Archive_OpenEvtFiles(raw), "event files")?;
        }
        Ok(a)
    }

    /// An error about the archive.
    pub fn fail(&self, what: &str) -> ExportError {
        ExportError::Io(
            self.out.clone(),
            std::io::Error::other(format!("OTF2 library: {what}")),
        )
    }

    /// An error naming the library's code unless `code` is success.
    pub fn check(&self, code: OTF2_ErrorCode, what: &str) -> Result<(), ExportError> {
        if code == OTF2_SUCCESS {
            return Ok(());
        }
        // SAFETY: the library returns static strings for every code.
        let (name, desc) = unsafe {
            let n = OTF2_Error_GetName(code);
            let d = OTF2_Error_GetDescription(code);
            let s = |p: *const std::os::raw::c_char| {
                if p.is_null() {
                    String::new()
                } else {
                    CStr::from_ptr(p).to_string_lossy().into_owned()
                }
            };
            (s(n), s(d))
        };
        Err(ExportError::Io(
            self.out.clone(),
            std::io::Error::other(format!(
                "OTF2 library: {what}: {name} ({desc}){}",
                full_disk(&self.out)
            )),
        ))
    }
}

/// What the library's code does not say when its writes failed: the file system holding `out`
/// is full (its own errors name only the archive's structure: INTEGRITY_FAULT), or empty.
fn full_disk(out: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let dir = out.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    let Ok(c) = CString::new(dir.as_os_str().as_bytes()) else {
        return String::new();
    };
    // SAFETY: statvfs writes the struct it is given; `c` is a NUL-terminated path.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 || st.f_bavail > 0 {
        return String::new();
    }
    format!("; the file system holding {} is full", dir.display())
}

impl Drop for Archive {
    fn drop(&mut self) {
        // SAFETY: opened in `open`, closed once here.
        unsafe {
            OTF2_Archive_Close(self.raw);
        }
    }
}

/// Every full buffer is written to its file.
extern "C" fn pre_flush(
    _user: *mut std::os::raw::c_void,
    _file_type: OTF2_FileType,
    _location: OTF2_LocationRef,
    _caller: *mut std::os::raw::c_void,
    _last: bool,
) -> OTF2_FlushType {
    OTF2_FLUSH
}

/// Chunks an event writer holds before the library writes them to its file: memory stays
/// bounded per location (the library's default pool is 128 MiB per writer, kept until closed).
const EVENT_CHUNKS: usize = 1;

/// The chunks of one writer's buffer (`perBufferData`): pointer and size of each.
type Chunks = Vec<(*mut u8, usize)>;

/// A chunk for a writer; for an event writer none past [`EVENT_CHUNKS`], upon which the library
/// flushes the buffer to its file and frees its chunks ([`free_chunks`]).
extern "C" fn allocate_chunk(
    _user: *mut std::os::raw::c_void,
    file_type: OTF2_FileType,
    _location: OTF2_LocationRef,
    per_buffer: *mut *mut std::os::raw::c_void,
    chunk_size: u64,
) -> *mut std::os::raw::c_void {
    // SAFETY: the library hands the same writable slot for every call of one buffer; it holds
    // null or the Chunks this function boxed.
    unsafe {
        if (*per_buffer).is_null() {
            *per_buffer = Box::into_raw(Box::<Chunks>::default()).cast();
        }
        let chunks = &mut *(*per_buffer).cast::<Chunks>();
        if file_type == OTF2_FILETYPE_EVENTS && chunks.len() >= EVENT_CHUNKS {
            return ptr::null_mut();
        }
        let Ok(layout) = std::alloc::Layout::from_size_align(chunk_size as usize, 64) else {
            return ptr::null_mut();
        };
        let p = std::alloc::alloc(layout);
        if !p.is_null() {
            chunks.push((p, chunk_size as usize));
        }
        p.cast()
    }
}

/// Frees every chunk of a buffer (and, at the last call, its list).
extern "C" fn free_chunks(
    _user: *mut std::os::raw::c_void,
    _file_type: OTF2_FileType,
    _location: OTF2_LocationRef,
    per_buffer: *mut *mut std::os::raw::c_void,
    last: bool,
) {
    // SAFETY: as in allocate_chunk; each chunk was allocated there with this layout.
    unsafe {
        if (*per_buffer).is_null() {
            return;
        }
        let chunks = &mut *(*per_buffer).cast::<Chunks>();
        for (p, size) in chunks.drain(..) {
            std::alloc::dealloc(p, std::alloc::Layout::from_size_align_unchecked(size, 64));
        }
        if last {
            drop(Box::from_raw((*per_buffer).cast::<Chunks>()));
            *per_buffer = ptr::null_mut();
        }
    }
}

/// A C string of `s` (an interior NUL, impossible in the experiment's names, becomes `?`).
pub(super) fn cstring(s: &str) -> CString {
    CString::new(s.replace('\0', "?")).expect("no NUL left")
}


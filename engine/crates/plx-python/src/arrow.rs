//! Record batches handed to Arrow readers through the Arrow C data interface (the two C structs of arrow.apache.org/docs/format/CDataInterface.html), without copying a column.
//!
//! A [`Batch`] gathers its columns' vectors; [`Batch::share`] makes them a [`Shared`] batch, the
//! vectors behind a reference count. [`Shared::export`] hands them out as an `ArrowArray` whose
//! private data holds a reference, released by its `release` callback, so that pyarrow (or
//! Polars, DuckDB) reads the engine's memory in place, as many times as it asks, and the memory
//! is freed when the last reader (or the batch itself) lets go; [`Shared::stream`] hands the
//! same as an `ArrowArrayStream` (the C stream interface) of one batch. Only what the tables use
//! is here: fixed width numbers, booleans, UTF-8 strings, dictionaries of strings, and the struct
//! of a batch.

use std::collections::HashMap;
use std::ffi::{c_char, c_void, CString};
use std::ptr;
use std::sync::Arc;

use plx_export::columns::Col;

/// `struct ArrowSchema` of the C data interface.
#[repr(C)]
pub struct FfiSchema {
    format: *const c_char,
    name: *const c_char,
    metadata: *const c_char,
    flags: i64,
    n_children: i64,
    children: *mut *mut FfiSchema,
    dictionary: *mut FfiSchema,
    release: Option<unsafe extern "C" fn(*mut FfiSchema)>,
    private_data: *mut c_void,
}

/// `struct ArrowArray` of the C data interface.
#[repr(C)]
pub struct FfiArray {
    length: i64,
    null_count: i64,
    offset: i64,
    n_buffers: i64,
    n_children: i64,
    buffers: *mut *const c_void,
    children: *mut *mut FfiArray,
    dictionary: *mut FfiArray,
    release: Option<unsafe extern "C" fn(*mut FfiArray)>,
    private_data: *mut c_void,
}

// SAFETY: the structs own what they point to (their private data) and are moved, never shared.
unsafe impl Send for FfiSchema {}
unsafe impl Send for FfiArray {}

/// `ARROW_FLAG_NULLABLE`.
const NULLABLE: i64 = 2;

/// A buffer of an array: a vector kept alive until the array is released.
enum Buffer {
    U8(Vec<u8>),
    I32(Vec<i32>),
    I64(Vec<i64>),
    F64(Vec<f64>),
    /// A buffer of two arrays or more (a name column over an id column's ids).
    Shared(Arc<Buffer>),
}

impl Buffer {
    fn ptr(&self) -> *const c_void {
        match self {
            Buffer::U8(v) => v.as_ptr().cast(),
            Buffer::I32(v) => v.as_ptr().cast(),
            Buffer::I64(v) => v.as_ptr().cast(),
            Buffer::F64(v) => v.as_ptr().cast(),
            Buffer::Shared(b) => b.ptr(),
        }
    }

    /// The buffer behind a reference count (in place), and another handle on it.
    fn share(&mut self) -> Buffer {
        let shared = match std::mem::replace(self, Buffer::U8(Vec::new())) {
            Buffer::Shared(b) => b,
            b => Arc::new(b),
        };
        *self = Buffer::Shared(Arc::clone(&shared));
        Buffer::Shared(shared)
    }

    /// Its bytes, or its 32-bit numbers.
    fn bytes(&self) -> Option<&[u8]> {
        match self {
            Buffer::U8(v) => Some(v),
            Buffer::Shared(b) => b.bytes(),
            _ => None,
        }
    }
    fn i32s(&self) -> Option<&[i32]> {
        match self {
            Buffer::I32(v) => Some(v),
            Buffer::Shared(b) => b.i32s(),
            _ => None,
        }
    }
}

/// An array before export: its type (format string), length, buffers, children, dictionary.
pub struct Array {
    format: &'static str,
    len: usize,
    nulls: usize,
    buffers: Vec<Option<Buffer>>,
    children: Vec<(String, Array)>,
    dictionary: Option<Box<Array>>,
}

/// A numeric type of a column and its Arrow format character.
pub trait Fixed: Sized + Copy + Default {
    /// `i`, `l`, `g` (int32, int64, float64).
    const FORMAT: &'static str;
    /// The vector as a buffer.
    #[doc(hidden)]
    fn buffer(v: Vec<Self>) -> BufferOf;
}

/// A buffer made from a typed vector (opaque).
pub struct BufferOf(Buffer);

impl Fixed for i32 {
    const FORMAT: &'static str = "i";
    fn buffer(v: Vec<Self>) -> BufferOf {
        BufferOf(Buffer::I32(v))
    }
}
impl Fixed for i64 {
    const FORMAT: &'static str = "l";
    fn buffer(v: Vec<Self>) -> BufferOf {
        BufferOf(Buffer::I64(v))
    }
}
impl Fixed for f64 {
    const FORMAT: &'static str = "g";
    fn buffer(v: Vec<Self>) -> BufferOf {
        BufferOf(Buffer::F64(v))
    }
}

impl Array {
    /// A column of numbers (its vectors moved, not copied).
    pub fn fixed<T: Fixed>(c: Col<T>) -> Array {
        Array {
            format: T::FORMAT,
            len: c.values.len(),
            nulls: c.nulls,
            buffers: vec![c.valid.map(Buffer::U8), Some(T::buffer(c.values).0)],
            children: Vec::new(),
            dictionary: None,
        }
    }

    /// A column of numbers without nulls.
    pub fn values<T: Fixed>(v: Vec<T>) -> Array {
        Array::fixed(Col {
            values: v,
            valid: None,
            nulls: 0,
        })
    }

    /// A boolean column from bytes (0 false, else true).
    pub fn boolean(c: Col<u8>) -> Array {
        let mut bits = vec![0u8; c.values.len().div_ceil(8)];
        for (i, &v) in c.values.iter().enumerate() {
            if v != 0 {
                bits[i / 8] |= 1 << (i % 8);
            }
        }
        Array {
            format: "b",
            len: c.values.len(),
            nulls: c.nulls,
            buffers: vec![c.valid.map(Buffer::U8), Some(Buffer::U8(bits))],
            children: Vec::new(),
            dictionary: None,
        }
    }

    /// A column of UTF-8 strings (`None`: null).
    pub fn strings<S: AsRef<str>>(items: impl IntoIterator<Item = Option<S>>) -> Array {
        let mut offsets = vec![0i32];
        let mut data = Vec::new();
        let mut valid = Col::<u8>::default();
        for s in items {
            if let Some(s) = &s {
                data.extend_from_slice(s.as_ref().as_bytes());
            }
            valid.opt(s.map(|_| 1));
            offsets.push(i32::try_from(data.len()).expect("a string column under 2 GiB"));
        }
        Array {
            format: "u",
            len: offsets.len() - 1,
            nulls: valid.nulls,
            buffers: vec![
                valid.valid.map(Buffer::U8),
                Some(Buffer::I32(offsets)),
                Some(Buffer::U8(data)),
            ],
            children: Vec::new(),
            dictionary: None,
        }
    }

    /// A column of strings without nulls.
    pub fn texts<S: AsRef<str>>(items: impl IntoIterator<Item = S>) -> Array {
        Array::strings(items.into_iter().map(Some))
    }

    /// A dictionary-encoded string column: the names of ids `ids` (pandas: a Categorical,
    /// whose categories are distinct: ids of one name share a code). An id outside `names`
    /// (never made by the engine) is an error, not an out-of-bounds read for the reader.
    pub fn dictionary<S: AsRef<str>>(mut ids: Col<i32>, names: &[S]) -> Array {
        let (distinct, code) = distinct(names);
        // a null's id is 0 already (a column's placeholder); a present id is rewritten only where
        // its code differs: a column of nulls, or of distinct names, is not touched (its pages,
        // never written, cost no memory)
        let identity = code.iter().enumerate().all(|(i, &c)| c == i as i32);
        if ids.nulls < ids.values.len() {
            let valid = ids.valid.as_deref();
            for (i, v) in ids.values.iter_mut().enumerate() {
                let present = valid.is_none_or(|b| b[i / 8] & (1 << (i % 8)) != 0);
                let c = if present {
                    *code.get(*v as usize).expect("a name for every id")
                } else {
                    0
                };
                if !identity && *v != c {
                    *v = c;
                }
            }
        }
        let mut a = Array::fixed(ids);
        a.dictionary = Some(Box::new(Array::texts(distinct)));
        a
    }

    /// The dictionary-encoded names of `ids`' ids (an int32 column), as
    /// [`Array::dictionary`]: where the names are distinct (an id is its name's code), over
    /// `ids`' own buffers — its values and validity shared, not copied; else a copy recoded.
    pub fn names_of<S: AsRef<str>>(ids: &mut Array, names: &[S]) -> Array {
        assert_eq!(ids.format, "i", "names of int32 ids");
        let (distinct, code) = distinct(names);
        if !code.iter().enumerate().all(|(i, &c)| c == i as i32) {
            let col = Col {
                values: ids.buffers[1]
                    .as_ref()
                    .and_then(Buffer::i32s)
                    .expect("ids")
                    .to_vec(),
                valid: ids.buffers[0]
                    .as_ref()
                    .and_then(Buffer::bytes)
                    .map(<[u8]>::to_vec),
                nulls: ids.nulls,
            };
            return Array::dictionary(col, names);
        }
        Array {
            format: "i",
            len: ids.len,
            nulls: ids.nulls,
            buffers: ids
                .buffers
                .iter_mut()
                .map(|b| b.as_mut().map(Buffer::share))
                .collect(),
            children: Vec::new(),
            dictionary: Some(Box::new(Array::texts(distinct))),
        }
    }
}

/// `names` without repeats, in the order met, and per name its index there (its code).
fn distinct<S: AsRef<str>>(names: &[S]) -> (Vec<&str>, Vec<i32>) {
    let mut distinct: Vec<&str> = Vec::new();
    let mut code_of_name: HashMap<&str, i32> = HashMap::new();
    let code: Vec<i32> = names
        .iter()
        .map(|n| {
            let n = n.as_ref();
            *code_of_name.entry(n).or_insert_with(|| {
                distinct.push(n);
                distinct.len() as i32 - 1
            })
        })
        .collect();
    (distinct, code)
}

/// Columns of equal length, named: a record batch.
#[derive(Default)]
pub struct Batch {
    len: Option<usize>,
    columns: Vec<(String, Array)>,
}

impl Batch {
    /// Column `i`.
    pub fn column_mut(&mut self, i: usize) -> &mut Array {
        &mut self.columns[i].1
    }

    /// Adds a column (all columns have one length).
    pub fn add(&mut self, name: &str, a: Array) -> &mut Batch {
        let len = *self.len.get_or_insert(a.len);
        assert_eq!(len, a.len, "column {name}: {} rows, not {len}", a.len);
        self.columns.push((name.to_string(), a));
        self
    }

    /// The batch, its vectors behind a reference count: readable any number of times.
    pub fn share(self) -> Shared {
        let top = Arc::new(Array {
            format: "+s",
            len: self.len.unwrap_or(0),
            nulls: 0,
            buffers: vec![None],
            children: self.columns,
            dictionary: None,
        });
        Shared { top }
    }
}

/// A batch whose vectors every exported array shares (an [`Arc`] in each one's private data).
pub struct Shared {
    top: Arc<Array>,
}

impl Shared {
    /// Rows.
    pub fn rows(&self) -> usize {
        self.top.len
    }

    /// The batch as the C data interface's schema and array (a struct of the columns), the
    /// array holding a reference to the vectors until it is released.
    pub fn export(&self) -> (FfiSchema, FfiArray) {
        (
            export_schema("", &Shape::of(&self.top)),
            export_array(&self.top, &self.top),
        )
    }

    /// The batch as an `ArrowArrayStream` of the C stream interface: its schema, then this
    /// one batch, then the end.
    pub fn stream(&self) -> FfiStream {
        let p = Box::new(StreamPrivate {
            shape: Shape::of(&self.top),
            batch: Some(Arc::clone(&self.top)),
        });
        FfiStream {
            get_schema: Some(stream_schema),
            get_next: Some(stream_next),
            get_last_error: Some(stream_error),
            release: Some(stream_release),
            private_data: Box::into_raw(p).cast(),
        }
    }
}

/// An array's type without its data: what its schema says.
struct Shape {
    format: &'static str,
    nullable: bool,
    children: Vec<(String, Shape)>,
    dictionary: Option<Box<Shape>>,
}

impl Shape {
    fn of(a: &Array) -> Shape {
        Shape {
            format: a.format,
            nullable: a.nulls > 0 || a.buffers.first().is_some_and(|b| b.is_some()),
            children: a
                .children
                .iter()
                .map(|(n, c)| (n.clone(), Shape::of(c)))
                .collect(),
            dictionary: a.dictionary.as_deref().map(|d| Box::new(Shape::of(d))),
        }
    }
}

/// What an exported schema or array owns besides its struct: its children, its dictionary,
/// and `E` (the strings or the buffers its pointers point into).
struct Owned<T, E> {
    children: Vec<*mut T>,
    dictionary: *mut T,
    _own: E,
}

/// A struct of the C data interface with a `release` callback and private data
/// ([`Owned`]).
pub trait Released: Sized {
    /// Its `release` field.
    #[doc(hidden)]
    fn release_slot(&mut self) -> &mut Option<unsafe extern "C" fn(*mut Self)>;
    /// Its `private_data` field.
    #[doc(hidden)]
    fn private_data(&self) -> *mut c_void;
}

impl Released for FfiSchema {
    fn release_slot(&mut self) -> &mut Option<unsafe extern "C" fn(*mut Self)> {
        &mut self.release
    }
    fn private_data(&self) -> *mut c_void {
        self.private_data
    }
}

impl Released for FfiArray {
    fn release_slot(&mut self) -> &mut Option<unsafe extern "C" fn(*mut Self)> {
        &mut self.release
    }
    fn private_data(&self) -> *mut c_void {
        self.private_data
    }
}

/// Boxes the children (and the dictionary) of a schema or array.
fn boxed<T>(items: Vec<T>) -> Vec<*mut T> {
    items
        .into_iter()
        .map(|x| Box::into_raw(Box::new(x)))
        .collect()
}

fn export_schema(name: &str, s: &Shape) -> FfiSchema {
    let children = boxed(
        s.children
            .iter()
            .map(|(n, c)| export_schema(n, c))
            .collect(),
    );
    let dictionary = s.dictionary.as_deref().map_or(ptr::null_mut(), |d| {
        Box::into_raw(Box::new(export_schema("", d)))
    });
    let strings = (
        CString::new(s.format).expect("format"),
        CString::new(name).expect("a column name without NUL"),
    );
    let (format, cname) = (strings.0.as_ptr(), strings.1.as_ptr());
    let mut p = Box::new(Owned {
        children,
        dictionary,
        _own: strings,
    });
    FfiSchema {
        format,
        name: cname,
        metadata: ptr::null(),
        flags: if s.nullable { NULLABLE } else { 0 },
        n_children: p.children.len() as i64,
        children: p.children.as_mut_ptr(),
        dictionary,
        release: Some(release::<FfiSchema, (CString, CString)>),
        private_data: Box::into_raw(p).cast(),
    }
}

/// What an exported array's buffer pointers point into (a reference to the whole batch, which
/// owns the vectors), and those pointers.
type ArrayOwn = (Arc<Array>, Vec<*const c_void>);

/// `a` (an array inside `root`) as the C data interface's array, holding a reference to `root`.
fn export_array(root: &Arc<Array>, a: &Array) -> FfiArray {
    let children = boxed(
        a.children
            .iter()
            .map(|(_, c)| export_array(root, c))
            .collect(),
    );
    let dictionary = a.dictionary.as_deref().map_or(ptr::null_mut(), |d| {
        Box::into_raw(Box::new(export_array(root, d)))
    });
    // the vectors do not move while root is alive: the pointers stay valid
    let pointers: Vec<*const c_void> = a
        .buffers
        .iter()
        .map(|b| b.as_ref().map_or(ptr::null(), Buffer::ptr))
        .collect();
    let n_buffers = pointers.len() as i64;
    let mut p = Box::new(Owned {
        children,
        dictionary,
        _own: (Arc::clone(root), pointers),
    });
    FfiArray {
        length: a.len as i64,
        null_count: a.nulls as i64,
        offset: 0,
        n_buffers,
        n_children: p.children.len() as i64,
        buffers: p._own.1.as_mut_ptr(),
        children: p.children.as_mut_ptr(),
        dictionary,
        release: Some(release::<FfiArray, ArrayOwn>),
        private_data: Box::into_raw(p).cast(),
    }
}

/// The release callback of a schema or array: releases its children and dictionary, frees
/// what it owns.
unsafe extern "C" fn release<T: Released, E>(x: *mut T) {
    // SAFETY: called once by the consumer on a struct made by export_schema or export_array
    // (or one moved from it), whose private data is a boxed Owned<T, E>.
    unsafe {
        let x = &mut *x;
        let p = Box::from_raw(x.private_data().cast::<Owned<T, E>>());
        let dictionary = (!p.dictionary.is_null()).then_some(p.dictionary);
        for &c in p.children.iter().chain(dictionary.iter()) {
            let mut child = Box::from_raw(c);
            if let Some(r) = *child.release_slot() {
                r(&mut *child);
            }
        }
        *x.release_slot() = None;
    }
}

/// Releases a schema or array the consumer did not take (its `release` still set).
pub fn drop_released<T: Released>(x: &mut T) {
    if let Some(r) = *x.release_slot() {
        // SAFETY: a struct made here and not released yet.
        unsafe { r(x) }
    }
}

/// `struct ArrowArrayStream` of the C stream interface
/// (arrow.apache.org/docs/format/CStreamInterface.html).
#[repr(C)]
pub struct FfiStream {
    get_schema: Option<unsafe extern "C" fn(*mut FfiStream, *mut FfiSchema) -> i32>,
    get_next: Option<unsafe extern "C" fn(*mut FfiStream, *mut FfiArray) -> i32>,
    get_last_error: Option<unsafe extern "C" fn(*mut FfiStream) -> *const c_char>,
    release: Option<unsafe extern "C" fn(*mut FfiStream)>,
    private_data: *mut c_void,
}

// SAFETY: as the schema and the array: it owns its private data and is moved, never shared.
unsafe impl Send for FfiStream {}

/// A stream's schema, and its one batch until it is read.
struct StreamPrivate {
    shape: Shape,
    batch: Option<Arc<Array>>,
}

/// SAFETY (the stream callbacks): called by the consumer on a stream made by
/// [`Shared::stream`] (or moved from it) and not released, whose private data is a boxed
/// [`StreamPrivate`]; `out` points to a struct the consumer owns, written here whole.
unsafe fn stream_private<'a>(s: *mut FfiStream) -> &'a mut StreamPrivate {
    // SAFETY: see above
    unsafe { &mut *(*s).private_data.cast::<StreamPrivate>() }
}

unsafe extern "C" fn stream_schema(s: *mut FfiStream, out: *mut FfiSchema) -> i32 {
    // SAFETY: see stream_private
    unsafe {
        let p = stream_private(s);
        ptr::write(out, export_schema("", &p.shape));
    }
    0
}

unsafe extern "C" fn stream_next(s: *mut FfiStream, out: *mut FfiArray) -> i32 {
    // SAFETY: see stream_private
    unsafe {
        let p = stream_private(s);
        let next = match p.batch.take() {
            Some(a) => export_array(&a, &a),
            // the end: a released array
            None => FfiArray {
                length: 0,
                null_count: 0,
                offset: 0,
                n_buffers: 0,
                n_children: 0,
                buffers: ptr::null_mut(),
                children: ptr::null_mut(),
                dictionary: ptr::null_mut(),
                release: None,
                private_data: ptr::null_mut(),
            },
        };
        ptr::write(out, next);
    }
    0
}

unsafe extern "C" fn stream_error(_s: *mut FfiStream) -> *const c_char {
    // no call fails
    ptr::null()
}

unsafe extern "C" fn stream_release(s: *mut FfiStream) {
    // SAFETY: see stream_private
    unsafe {
        drop(Box::from_raw((*s).private_data.cast::<StreamPrivate>()));
        (*s).release = None;
    }
}

/// Releases a stream the consumer did not take.
pub fn drop_stream(s: &mut FfiStream) {
    if let Some(r) = s.release {
        // SAFETY: a stream made here and not released yet.
        unsafe { r(s) }
    }
}
